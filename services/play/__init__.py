"""Live games: the service layer over GameRepository, the driver, feeds and wake-ups."""
