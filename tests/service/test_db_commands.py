"""`king db upgrade | current | history | check` on SQLite and PostgreSQL: what each says, and
check's exit status for a database never upgraded, at head, behind, and drifted by hand."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from eventstore.migrate import STORE_MIGRATIONS
from services.cli import main
from services.db.migrate import APP_MIGRATIONS

STORE_HEAD = STORE_MIGRATIONS.head_revision()
APP_HEAD = APP_MIGRATIONS.head_revision()

Run = Callable[..., tuple[int, str]]


@pytest.fixture(params=["sqlite", "postgres"])
def database(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, sa.Engine]]:
    """A database URL no process has upgraded yet, and an engine on it (its schema)."""
    for name in list(os.environ):
        if name.startswith("KING_"):
            monkeypatch.delenv(name)
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'king.db'}"
        engine = sa.create_engine(url)
        yield url, engine
        engine.dispose()
        return
    url = request.getfixturevalue("postgres_url")
    schema = f"dbcmd_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("KING_PG_SCHEMA", schema)
    engine = sa.create_engine(url, connect_args={"options": f"-csearch_path={schema}"})
    yield url, engine
    engine.dispose()
    cleanup = sa.create_engine(url)
    with cleanup.begin() as conn:
        conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    cleanup.dispose()


@pytest.fixture
def king(capsys: pytest.CaptureFixture[str]) -> Run:
    def run(*argv: str) -> tuple[int, str]:
        status = main(list(argv))
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        return status, captured.out

    return run


def test_upgrade_says_what_it_did_then_that_it_is_at_head(
    database: tuple[str, sa.Engine], king: Run
) -> None:
    url, _ = database
    status, out = king("db", "upgrade", "--db", url)
    assert status == 0
    assert f"event store: upgraded from an empty database to {STORE_HEAD}" in out
    assert f"service tables: upgraded from an empty database to {APP_HEAD}" in out
    status, out = king("db", "upgrade", "--db", url)
    assert status == 0
    assert f"event store: already at head {STORE_HEAD}" in out
    assert f"service tables: already at head {APP_HEAD}" in out
    assert "upgraded from" not in out


def test_current_and_check_before_and_after_the_upgrade(
    database: tuple[str, sa.Engine], king: Run
) -> None:
    url, _ = database
    status, out = king("db", "current", "--db", url)
    assert status == 0
    assert "event store: no revision (never upgraded)" in out
    assert king("db", "check", "--db", url)[0] == 1
    king("db", "upgrade", "--db", url)
    status, out = king("db", "current", "--db", url)
    assert status == 0
    assert f"event store: {STORE_HEAD} (head)" in out
    assert f"service tables: {APP_HEAD} (head)" in out
    status, out = king("db", "check", "--db", url)
    assert status == 0, out
    assert "ok: at head, no drift" in out


def test_check_fails_on_a_schema_behind_the_head(
    database: tuple[str, sa.Engine], king: Run
) -> None:
    url, engine = database
    king("db", "upgrade", "--db", url)
    older = APP_MIGRATIONS_HISTORY[1]  # the revision before the head
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE king_alembic_version SET version_num = :v"), {"v": older})
    status, out = king("db", "check", "--db", url)
    assert status == 1
    assert f"service tables: {older} (behind: head is {APP_HEAD})" in out
    assert "not at this release's head" in out
    assert king("db", "current", "--db", url)[0] == 0  # current only reports


def test_check_fails_on_tables_changed_by_hand(database: tuple[str, sa.Engine], king: Run) -> None:
    url, engine = database
    king("db", "upgrade", "--db", url)
    with engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE king_players ADD COLUMN nickname VARCHAR(20)"))
    status, out = king("db", "check", "--db", url)
    assert status == 1
    assert "service tables: differs from the models: remove_column king_players nickname" in out
    assert "event store: differs" not in out  # each set compares its own tables only


def test_check_sees_a_changed_column_type(database: tuple[str, sa.Engine], king: Run) -> None:
    """Types are compared (as the per-table model-vs-migration tests asked with compare_type)."""
    url, engine = database
    king("db", "upgrade", "--db", url)
    with engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE king_lobby_tables DROP COLUMN last_event"))
        conn.execute(sa.text("ALTER TABLE king_lobby_tables ADD COLUMN last_event VARCHAR(80)"))
    status, out = king("db", "check", "--db", url)
    assert status == 1
    assert "service tables: differs from the models: modify_type" in out, out
    assert "king_lobby_tables last_event" in out


def test_check_compares_every_table_of_the_models() -> None:
    """Every table of the models' metadata is in exactly one set, so the check's "no drift"
    after an upgrade (test_current_and_check_before_and_after_the_upgrade, on SQLite and
    PostgreSQL) compares each of them with its migrations: the one model-matches-migration
    test for all the service's tables (king_lobby_tables, king_invitations, king_action_keys
    and the rest), where there used to be copies of it per table."""
    from sqlmodel import SQLModel

    import services.app  # noqa: F401  (every model the service uses, registered)
    from services.db.status import PARTS

    names = [table.name for part in PARTS for table in part.tables]
    assert len(names) == len(set(names))
    assert set(names) == set(SQLModel.metadata.tables)
    assert {"king_lobby_tables", "king_invitations", "king_action_keys"} <= {
        table.name for table in PARTS[1].tables
    }


def test_check_sees_a_missing_store_table(database: tuple[str, sa.Engine], king: Run) -> None:
    url, engine = database
    king("db", "upgrade", "--db", url)
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE log_size"))
    status, out = king("db", "check", "--db", url)
    assert status == 1
    assert "event store: differs from the models: add_table log_size" in out


def test_history_lists_each_set_newest_first_without_a_database(king: Run) -> None:
    status, out = king("db", "history")
    assert status == 0
    lines = out.splitlines()
    store, app = lines.index("event store:"), lines.index("service tables:")
    assert lines[store + 1].startswith("  ") and f"-> {STORE_HEAD} (head)" in lines[store + 1]
    assert f"-> {APP_HEAD} (head)" in lines[app + 1]
    assert lines[app - 1].strip().startswith("<base> -> ")  # the store's first revision
    assert lines[-1].strip().startswith("<base> -> ")


def _app_history() -> list[str]:
    from services.db.status import PARTS, history

    return [r.revision for r in history(PARTS[1])]


APP_MIGRATIONS_HISTORY = _app_history()
