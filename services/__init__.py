"""Entry points: the HTTP API, web pages, bot transports, scheduler and the `king` CLI."""

# First: choose the build of the rules core's hot modules before `domain` loads.
import tournament.native  # noqa: F401
