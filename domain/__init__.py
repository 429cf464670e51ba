"""The rules of Turkish King: pure, deterministic, standard library only.

Nothing in this package does I/O, reads a clock or draws a random number of its own:
the same events in give the same state out, on every machine, forever.
"""
