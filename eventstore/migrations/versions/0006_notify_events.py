"""PostgreSQL: `eventstore_append` notifies listeners with the appended events themselves.

Until now the notification carried only the last position written, so every listening
process answered each one with a read of the feed. It now carries the events (position,
stream, version, id, type, schema version, payload, meta, recorded moment, hashes) as JSON,
so a follower that is up to date applies them without a statement
(`eventstore.subscription`). PostgreSQL refuses a payload of 8000 bytes or more: such an
append notifies its last position alone, as before, and followers read the feed. Same
signature and return value as 0004, so a process of the previous release keeps working
beside this one (it ignores the payload and reads the feed).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""

from __future__ import annotations

import importlib

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

NOTIFY_LIMIT = 8000
"""PostgreSQL's limit on a notification's payload, in bytes (it must be shorter)."""

# 0004's function but for the notification: `p_note` holds the events as one JSON object,
# {"last": position, "at": microseconds since the epoch, "events": [[position, stream_id,
# version, event_id, type, schema_version, payload, meta, prev_hash, hash], ...]}, in
# position order (`eventstore.decoding.decode_notification` reads it).
APPEND_FUNCTION = f"""
CREATE OR REPLACE FUNCTION eventstore_append(
    p_lock_key bigint,
    p_fence_name text, p_fence_owner text, p_fence_epoch bigint,
    p_sids text[], p_base_versions bigint[], p_base_hashes text[],
    p_new_versions bigint[], p_new_hashes text[], p_types text[], p_metadata text[],
    p_ev_sids text[], p_ev_versions bigint[], p_ev_ids text[], p_ev_types text[],
    p_ev_schema_versions integer[], p_ev_payloads text[], p_ev_metas text[],
    p_ev_prev_hashes text[], p_ev_hashes text[],
    p_recorded_at timestamptz, p_channel text
) RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
    p_last bigint;
    p_note text;
BEGIN
    -- Serialises appends: positions are allocated as max + 1, dense and in commit order.
    PERFORM pg_advisory_xact_lock(p_lock_key);
    IF p_fence_name IS NOT NULL THEN
        -- clock_timestamp(): the expiry is judged now, after the lock wait. FOR SHARE: a
        -- takeover's update waits for this append to commit.
        PERFORM 1 FROM leases
         WHERE name = p_fence_name AND owner = p_fence_owner AND epoch = p_fence_epoch
           AND expires_ms > CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)
           FOR SHARE;
        IF NOT FOUND THEN
            RETURN -1;
        END IF;
    END IF;
    -- Base version 0: the stream must not exist yet; else its version and head hash must be
    -- the ones the caller's hashes link to.
    IF EXISTS (
        SELECT 1
          FROM unnest(p_sids, p_base_versions, p_base_hashes) AS b(id, version, head_hash)
          LEFT JOIN streams s ON s.id = b.id
         WHERE CASE WHEN b.version = 0 THEN s.id IS NOT NULL
                    ELSE s.id IS NULL OR s.version <> b.version OR s.head_hash <> b.head_hash
               END
    ) THEN
        RETURN -2;
    END IF;
    SELECT coalesce(max(position), 0) INTO p_last FROM events;
    INSERT INTO events (position, stream_id, version, event_id, type, schema_version,
                        payload, meta, recorded_at, prev_hash, hash)
    SELECT p_last + e.n, e.sid, e.version, e.id, e.type, e.sv, e.payload, e.meta,
           p_recorded_at, e.prev, e.hash
      FROM unnest(p_ev_sids, p_ev_versions, p_ev_ids, p_ev_types, p_ev_schema_versions,
                  p_ev_payloads, p_ev_metas, p_ev_prev_hashes, p_ev_hashes)
           WITH ORDINALITY AS e(sid, version, id, type, sv, payload, meta, prev, hash, n);
    INSERT INTO streams (id, type, version, head_hash, metadata, created_at, updated_at)
    SELECT u.id, u.type, u.version, u.head_hash, u.metadata, p_recorded_at, p_recorded_at
      FROM unnest(p_sids, p_types, p_new_versions, p_new_hashes, p_metadata)
           AS u(id, type, version, head_hash, metadata)
    ON CONFLICT (id) DO UPDATE
       SET version = excluded.version, head_hash = excluded.head_hash,
           updated_at = excluded.updated_at;
    SELECT json_build_object(
               'last', p_last + cardinality(p_ev_ids),
               'at', CAST(EXTRACT(EPOCH FROM p_recorded_at) * 1000000 AS BIGINT),
               'events', json_agg(json_build_array(
                   p_last + e.n, e.sid, e.version, e.id, e.type, e.sv,
                   CAST(e.payload AS json), CAST(e.meta AS json), e.prev, e.hash)
                   ORDER BY e.n))::text
      INTO p_note
      FROM unnest(p_ev_sids, p_ev_versions, p_ev_ids, p_ev_types, p_ev_schema_versions,
                  p_ev_payloads, p_ev_metas, p_ev_prev_hashes, p_ev_hashes)
           WITH ORDINALITY AS e(sid, version, id, type, sv, payload, meta, prev, hash, n);
    p_last := p_last + cardinality(p_ev_ids);
    IF octet_length(p_note) >= {NOTIFY_LIMIT} THEN
        p_note := p_last::text;  -- too long to notify: followers read the feed
    END IF;
    PERFORM pg_notify(p_channel, p_note);
    RETURN p_last;
END
$fn$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(APPEND_FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        previous = importlib.import_module("eventstore.migrations.versions.0004_append_function")
        op.execute(previous.APPEND_FUNCTION)
