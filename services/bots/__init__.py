"""Push bots: where the service may send decision requests, and how it sends them."""
