"""Leases: named, expiring ownership with a fencing epoch.

A lease names a resource (for example one live game), the owner holding it, an epoch and an
expiry. Taking a free or expired lease raises its epoch; renewing a lease one still holds keeps
it. An append may carry a lease as its *fence* (`EventStore.append(..., fence=lease)`): the
append's transaction checks, under the same lock as the write, that the lease is still held by
that owner at that epoch and unexpired, and writes nothing otherwise (`LeaseLost`). So an
owner that was paused or cut off past its expiry can never write once another has taken over,
whatever its own clock believes.

Times are integer milliseconds since the Unix epoch, read from the database's clock on
PostgreSQL (every host agrees) and from the process's clock on SQLite (one machine).
"""

from __future__ import annotations

from dataclasses import dataclass

from eventstore.tables import LEASES


@dataclass(frozen=True, slots=True)
class Lease:
    """A lease as held: `epoch` is the fencing token, `expires_ms` the database-clock expiry."""

    name: str
    owner: str
    epoch: int
    expires_ms: int


@dataclass(frozen=True, slots=True)
class LeaseStatements:
    """The lease SQL of one dialect (named parameters; `now` is the clock's value or SQL)."""

    now: str
    acquire_rows: str  # "{rows}": one "(name, owner, 1, now + ttl, now)" per lease asked
    acquire_row: str  # "{i}": the row's index in the parameters (n0, n1, ...)
    renew: str
    release: str
    release_all: str
    delete: str
    listing: str
    fence: str


def acquire_sql(statements: LeaseStatements, count: int) -> str:
    """The acquire statement for `count` leases at once (parameters n0 .. n<count-1>)."""
    rows = ", ".join(statements.acquire_row.replace("{i}", str(i)) for i in range(count))
    return statements.acquire_rows.replace("{rows}", rows)


def lease_statements(kind: str) -> LeaseStatements:
    t = LEASES.name
    if kind == "sqlite":
        now = ":now"
        p = ":%s"
        share = ""
    else:
        # clock_timestamp(), not now(): the transaction's start time would lag behind a lock
        # wait, and an expiry must be judged at the moment it is checked.
        now = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
        p = "%%(%s)s"
        # A takeover's update waits for a fenced append in flight (and vice versa).
        share = " FOR SHARE"
    name, owner, ttl, epoch, prefix, size = (
        p % k for k in ("name", "owner", "ttl", "epoch", "prefix", "size")
    )
    cols = "name, owner, epoch, expires_ms"
    return LeaseStatements(
        now=f"SELECT {now}",
        # Free (no row), expired or released: take it at the next epoch. Held by us: renew.
        # The clock is read again in the update: the statement may have waited for a fenced
        # append's row lock, and an expiry computed before that wait could be past already.
        acquire_row=f"({p % 'n{i}'}, {owner}, 1, {now} + {ttl}, {now})",
        acquire_rows=(
            f"INSERT INTO {t} (name, owner, epoch, expires_ms, acquired_ms) "
            "VALUES {rows} "
            f"ON CONFLICT (name) DO UPDATE SET "
            f"owner = excluded.owner, "
            f"epoch = CASE WHEN {t}.owner = excluded.owner AND {t}.expires_ms > {now} "
            f"THEN {t}.epoch ELSE {t}.epoch + 1 END, "
            f"expires_ms = {now} + {ttl}, acquired_ms = {now} "
            f"WHERE {t}.expires_ms <= {now} OR {t}.owner = excluded.owner "
            f"RETURNING {cols}"
        ),
        # Only unexpired leases are renewed: one that lapsed must be taken again (a new
        # epoch), because another owner may have held it in between.
        renew=(
            f"UPDATE {t} SET expires_ms = {now} + {ttl} "
            f"WHERE owner = {owner} AND expires_ms > {now} RETURNING {cols}"
        ),
        release=f"UPDATE {t} SET expires_ms = 0 WHERE owner = {owner} AND name = {name}",
        release_all=f"UPDATE {t} SET expires_ms = 0 WHERE owner = {owner}",
        delete=f"DELETE FROM {t} WHERE name = {name}",
        # substr, not LIKE: LIKE ignores ASCII case on SQLite and needs escaping.
        listing=(
            f"SELECT {cols} FROM {t} WHERE substr(name, 1, {size}) = {prefix} "
            f"AND expires_ms > {now}"
        ),
        fence=(
            f"SELECT epoch FROM {t} WHERE name = {name} AND owner = {owner} AND epoch = {epoch} "
            f"AND expires_ms > {now}{share}"
        ),
    )
