"""Benchmarks that print figures side by side with a peer measured in the same run (not tests)."""
