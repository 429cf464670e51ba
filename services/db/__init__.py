"""The service's own tables (players, tokens, bot endpoints, the games index) and migrations."""
