"""Pairing, seating, standings and ratings (pure) and the tournament runner."""
