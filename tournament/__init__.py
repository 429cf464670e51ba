"""Pairing, seating, standings and ratings (pure) and the tournament runner."""

# First: choose the build of the rules core's hot modules before `domain` loads.
from tournament import native  # noqa: F401
