"""The lobby: open tables anyone may join, started when every seat is filled."""
