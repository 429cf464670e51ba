"""Benchmarks that print figures side by side with a peer measured in the same run (not tests)."""

# First: choose the build of the rules core's hot modules before `domain` loads.
import tournament.native  # noqa: F401
