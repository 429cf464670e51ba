"""Alembic migrations of the event store's schema (run by `eventstore.migrate.upgrade`)."""
