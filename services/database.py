"""Opening the databases: the event store and the service's own tables, on one URL.

SQLite (the embedded default) is migrated at start. PostgreSQL is too, unless
`KING_MIGRATE_AT_START=false` (the deployment files set it: there a one-shot `king db upgrade`
runs before the servers), in which case an older schema is refused with a clear message. A
schema newer than this code is used as it is (migrations are additive), never downgraded.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from eventstore import EventStore, SchemaError, StoreSettings
from eventstore import migrate as store_migrate
from eventstore.backends import create_engines
from services.db import migrate as app_migrate
from services.db import status as db_status
from services.db.status import Status
from services.errors import UserError
from services.projections import projectors
from services.settings import Settings


def store_settings(settings: Settings) -> StoreSettings:
    return StoreSettings(
        pg_schema=settings.pg_schema, sqlite_synchronous=settings.sqlite_synchronous
    )


def _ensure_sqlite_dir(url: str) -> None:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)


def upgrade_all(settings: Settings) -> list[tuple[Status, Status]]:
    """`king db upgrade`: the event store's migrations, then the service's. Each set's status
    before and after, in that order."""
    url = settings.url
    _ensure_sqlite_dir(url)
    try:
        engines = create_engines(url, store_settings(settings))
        try:
            before = [db_status.status(part, engines.write) for part in db_status.PARTS]
            store_migrate.upgrade_engines(engines)
            app_migrate.upgrade_engines(engines)
            after = [db_status.status(part, engines.write) for part in db_status.PARTS]
        finally:
            engines.dispose()
        with EventStore.open(url, settings=store_settings(settings), create=False) as store:
            for projector in projectors(store):  # old index rows become table events here
                projector.catch_up(raise_errors=True)
    except (SQLAlchemyError, OSError, ValueError) as exc:
        raise UserError(f"cannot upgrade the database: {_first_line(exc)}") from None
    return list(zip(before, after, strict=True))


def schema_report(settings: Settings, with_drift: bool = False) -> list[tuple[Status, list[str]]]:
    """`king db current` and `king db check`: each migration set's status in the database and,
    when asked, how its tables differ from the models."""
    try:
        engines = create_engines(settings.url, store_settings(settings))
        try:
            out = []
            for part in db_status.PARTS:
                found = db_status.status(part, engines.write)
                drift = db_status.drift(part, engines.write) if with_drift else []
                out.append((found, drift))
            return out
        finally:
            engines.dispose()
    except (SQLAlchemyError, OSError, ValueError) as exc:
        raise UserError(f"cannot read the database: {_first_line(exc)}") from None


def open_store(settings: Settings) -> EventStore:
    """The event store, with the service's tables checked (and created on SQLite)."""
    url = settings.url
    if settings.is_sqlite:
        _ensure_sqlite_dir(url)
    elif settings.migrate_at_start and not _is_current(settings):
        upgrade_all(settings)  # concurrent starts are serialised by the migrations' lock
    try:
        store = EventStore.open(url, settings=store_settings(settings), create=settings.is_sqlite)
    except SchemaError as exc:
        raise UserError(str(exc)) from None
    except (SQLAlchemyError, OSError, ValueError) as exc:
        raise UserError(f"cannot open the database: {_first_line(exc)}") from None
    try:
        if settings.is_sqlite:
            app_migrate.upgrade_engines(store.engines)
        elif not app_migrate.is_compatible(store.engines):
            raise UserError(
                "the service's tables are not at the current schema: run `king db upgrade`"
            )
        catch_up(store)
    except SQLAlchemyError as exc:
        store.close()
        raise UserError(f"cannot open the service's tables: {_first_line(exc)}") from None
    except UserError:
        store.close()
        raise
    return store


def catch_up(store: EventStore) -> None:
    """Bring every projection up to the feed's head (at start; a failure is logged and the
    next read tries again)."""
    for projector in projectors(store):
        projector.catch_up()


def rebuild_projections(settings: Settings) -> dict[str, int]:
    """`king db rebuild-projections`: reset every projection and fold the feed from zero; the
    position each reached."""
    store = open_store(settings)
    try:
        return {p.projection.name: p.rebuild() for p in projectors(store)}
    except SQLAlchemyError as exc:
        raise UserError(f"cannot rebuild the projections: {_first_line(exc)}") from None
    finally:
        store.close()


def _is_current(settings: Settings) -> bool:
    """Both schemas at this code's head or ahead of it (a PostgreSQL database)."""
    try:
        engines = create_engines(settings.url, store_settings(settings))
        try:
            return store_migrate.is_compatible(engines.write) and app_migrate.is_compatible(engines)
        finally:
            engines.dispose()
    except (SQLAlchemyError, OSError, ValueError) as exc:
        raise UserError(f"cannot open the database: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
