"""PostgreSQL schemas for tests: made from a migrated template, dropped afterwards."""

from __future__ import annotations

import os
import uuid


class PgTemplate:
    """Schemas at both migration sets' heads, made by copying one migrated template.

    Running the migrations for every test cost 0.45-0.9 s of Alembic and DDL commits on this
    machine; replaying the template's `pg_dump` (one transaction, the schema renamed) costs
    about 0.09 s. The copy holds what the migrations leave: tables, indexes, functions, the
    version rows. Without `pg_dump` every schema is migrated as before. Tests of the migrations
    themselves do not use it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.name = f"tmpl_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        self._script: str | None = None
        self._made = False

    def _migrate(self, schema: str) -> None:
        from services.database import upgrade_all
        from services.settings import load_settings

        upgrade_all(load_settings(database_url=self.url, pg_schema=schema, log_level="warning"))

    def _dump(self) -> str | None:
        import shutil
        import subprocess

        from sqlalchemy.engine import make_url

        if shutil.which("pg_dump") is None:
            return None
        self._migrate(self.name)
        self._made = True
        u = make_url(self.url)
        args = ["pg_dump", "--schema", self.name, "--no-owner", "--no-privileges", "--inserts"]
        args += ["-h", u.host or "127.0.0.1", "-p", str(u.port or 5432)]
        args += ["-U", u.username or "postgres", "-d", u.database or "postgres"]
        env = {**os.environ, **({"PGPASSWORD": u.password} if u.password else {})}
        done = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:  # a client older than the server, say: migrate instead
            return None
        # psql's meta-commands (pg_dump's \restrict) are not SQL.
        return "\n".join(x for x in done.stdout.splitlines() if not x.startswith("\\"))

    def make(self, schema: str) -> None:
        """Create `schema` at the heads."""
        import re

        import sqlalchemy as sa

        if self._script is None:
            self._script = self._dump() or ""
        if not self._script:
            self._migrate(schema)
            return
        engine = sa.create_engine(self.url)
        try:
            with engine.begin() as conn:
                # The driver's own execute: a script with no parameters, sent as it is.
                conn.connection.driver_connection.execute(  # type: ignore[union-attr]
                    re.sub(rf"\b{self.name}\b", schema, self._script)
                )
        finally:
            engine.dispose()

    def close(self) -> None:
        if self._made:
            drop_pg_schemas(self.url, [self.name])


def drop_pg_schemas(url: str, schemas: list[str]) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    with engine.begin() as conn:
        for schema in schemas:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    engine.dispose()
