"""Entry points: the HTTP API, web pages, bot transports, scheduler and the `king` CLI."""
