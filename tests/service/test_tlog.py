"""The transparency log through the service: signed checkpoints and the verifier key, RFC
9162 proofs that verify against them, clear problems for bad parameters, `king log verify`
catching every kind of tampering the audit table lists (naming the first bad position), the
witness refusing a fork, and no leaf of a live game betraying its hidden hands."""

from __future__ import annotations

import base64
import hashlib
import itertools
import shutil
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
import sqlalchemy as sa
from litestar.testing import TestClient

from eventstore.canonical import canonical_json
from eventstore.leaves import event_leaf
from eventstore.merkle import verify_consistency, verify_inclusion
from services.app import create_app
from services.cli import main
from services.errors import UserError
from services.tlog.keys import load_signer
from services.tlog.notes import Checkpoint, NoteError, Verifier, open_checkpoint
from services.tlog.witness import Fork, Witness
from tests.service.conftest import SettingsFactory
from tests.service.helpers import ADMIN, create_game, create_player, wait_over
from tests.service.test_audit_cli import HOUSE, Rows, cli, env_for
from tournament.log_keys import leaf_key


def unb64(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def signed(client: Any) -> tuple[Verifier, Checkpoint, str]:
    key = client.get("/api/v1/log/key")
    assert key.status_code == 200 and key.headers["content-type"].startswith("text/plain")
    verifier = Verifier.parse(key.text)
    note = client.get("/api/v1/log/checkpoint")
    assert note.status_code == 200 and note.headers["content-type"].startswith("text/plain")
    return verifier, open_checkpoint(note.text, verifier), note.text


def play(client: Any, n: int) -> list[str]:
    token = create_player(client, f"owner-{uuid.uuid4().hex[:8]}")
    ids = [create_game(client, token, HOUSE) for _ in range(n)]
    for game_id in ids:
        wait_over(client, game_id)
    return ids


def test_checkpoints_keys_and_proofs_verify_independently(
    backend_settings: SettingsFactory,
) -> None:
    settings = backend_settings()
    with TestClient(create_app(settings)) as client:
        play(client, 1)
        verifier, first, note = signed(client)
        # the key: <name>+<hex hash>+<base64(0x01 || key)>, the hash from name, 0x0A, 0x01, key
        name, hexhash, blob = client.get("/api/v1/log/key").text.strip().split("+", 2)
        assert name == settings.log_origin == first.origin
        raw = unb64(blob)
        assert raw[0] == 1 and len(raw) == 33
        expected = hashlib.sha256(name.encode() + b"\n\x01" + raw[1:]).digest()[:4]
        assert hexhash == expected.hex()
        # the note: the checkpoint's three lines, a blank line, one signature line
        lines = note.split("\n")
        assert lines[:3] == [first.origin, str(first.size), base64.b64encode(first.root).decode()]
        assert lines[3] == "" and lines[4].startswith(f"\u2014 {name} ") and lines[5] == ""
        assert first.size > 20
        for index in range(first.size):
            proof = client.get(
                "/api/v1/log/proof/inclusion", params={"index": index, "size": first.size}
            ).json()
            assert proof["index"] == index and proof["size"] == first.size
            path = [unb64(p) for p in proof["proof"]]
            assert verify_inclusion(index, first.size, unb64(proof["leaf_hash"]), path, first.root)
        play(client, 1)
        _, second, _ = signed(client)
        assert second.size > first.size
        body = client.get(
            "/api/v1/log/proof/consistency",
            params={"first": first.size, "second": second.size},
        ).json()
        assert body["first"] == first.size and body["second"] == second.size
        path = [unb64(p) for p in body["proof"]]
        assert verify_consistency(first.size, second.size, first.root, second.root, path)
        assert not verify_consistency(first.size, second.size, bytes(32), second.root, path)
        # a tampered note fails its signature
        forged = note.replace(f"\n{first.size}\n", f"\n{first.size + 1}\n")
        with pytest.raises(NoteError):
            open_checkpoint(forged, verifier)


def test_bad_proof_parameters_are_problems(make_settings: SettingsFactory) -> None:
    with TestClient(create_app(make_settings())) as client:
        play(client, 1)
        _, cp, _ = signed(client)
        cases = [
            ("inclusion", {"index": cp.size, "size": cp.size}, 422),
            ("inclusion", {"index": 0, "size": cp.size + 10**6}, 422),
            ("inclusion", {"index": 0, "size": 0}, 422),
            ("inclusion", {"index": -1, "size": 3}, 400),
            ("inclusion", {"index": "x", "size": 3}, 400),
            ("inclusion", {"size": 3}, 400),
            ("consistency", {"first": 5, "second": 3}, 422),
            ("consistency", {"first": 1, "second": cp.size + 1}, 422),
            ("consistency", {"first": 1}, 400),
        ]
        for kind, params, status in cases:
            r = client.get(f"/api/v1/log/proof/{kind}", params=params)
            assert r.status_code == status, (kind, params, r.text)
            assert r.headers["content-type"].startswith("application/problem+json")
            assert r.json()["status"] == status
        # the tree did not move for the refused ones
        _, again, _ = signed(client)
        assert again == cp


# --- king log verify against an earlier checkpoint: the attack table -----------------------


def first_game_rows(db: Path, game_id: str) -> list[Any]:
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.connect() as conn:
        rows = list(
            conn.execute(
                sa.text("SELECT * FROM events WHERE stream_id = :s ORDER BY version"),
                {"s": f"game-{game_id}"},
            )
        )
    engine.dispose()
    return rows


def run_sql(db: Path, *statements: tuple[str, dict[str, Any]]) -> None:
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        for sql, params in statements:
            conn.execute(sa.text(sql), params)
    engine.dispose()


def test_king_log_verify_names_the_first_position_each_attack_changed(
    make_settings: SettingsFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = make_settings()
    with TestClient(create_app(settings)) as client:
        first, other = play(client, 2)
    env_for(settings, monkeypatch)
    monkeypatch.setenv("KING_DATA_DIR", str(tmp_path))
    capsys.readouterr()
    status, note = cli(capsys, "log", "checkpoint")
    assert status == 0
    (tmp_path / "checkpoint").write_text(note)
    status, key = cli(capsys, "log", "key")
    (tmp_path / "key").write_text(key)
    db = Path(sa.engine.make_url(settings.url).database or "")
    with TestClient(create_app(settings)) as client:
        play(client, 1)  # the log grows past the checkpoint: it still extends it

    def verify(path: Path) -> tuple[int, str]:
        capsys.readouterr()
        args = ["log", "verify", "--checkpoint", str(tmp_path / "checkpoint")]
        status = main([*args, "--key", str(tmp_path / "key"), "--db", f"sqlite:///{path}"])
        out, err = capsys.readouterr()
        return status, out + err

    status, out = verify(db)
    assert status == 0 and out.startswith("ok: the log"), out
    rows = first_game_rows(db, first)
    played = [r for r in rows if r.type == "card_played"]
    target = played[len(played) // 2]
    later = next(r for r in played if r.position > target.position + 2)
    covered = open_checkpoint(note, Verifier.parse(key)).size
    swapped = orjson.loads(rows[0].payload)
    swapped["players"] = list(reversed(swapped["players"]))

    def edit(path: Path) -> int:
        body = orjson.loads(target.payload)
        body["card"] = "2C" if body["card"] != "2C" else "3C"
        run_sql(
            path,
            (
                "UPDATE events SET payload = :p WHERE position = :pos",
                {
                    "p": orjson.dumps(body, option=orjson.OPT_SORT_KEYS).decode(),
                    "pos": target.position,
                },
            ),
        )
        return target.position

    def delete(path: Path) -> int:
        run_sql(path, ("DELETE FROM events WHERE position = :pos", {"pos": target.position}))
        return target.position

    def swap(path: Path) -> int:
        p, q = target.position, later.position
        run_sql(
            path,
            ("UPDATE events SET position = -1 WHERE position = :p", {"p": p}),
            ("UPDATE events SET position = :p WHERE position = :q", {"p": p, "q": q}),
            ("UPDATE events SET position = :q WHERE position = -1", {"q": q}),
        )
        return p

    def move(path: Path) -> int:
        run_sql(
            path,
            (
                "UPDATE events SET stream_id = :s, version = 10000 WHERE position = :p",
                {"s": f"game-{other}", "p": target.position},
            ),
        )
        return target.position

    def drop_tail(path: Path) -> int:
        # the log's last events that the checkpoint covers
        run_sql(path, ("DELETE FROM events WHERE position > :p", {"p": covered - 2}))
        return covered - 1

    def drop_game_tail(path: Path) -> int:
        # game_ended and seed_revealed, with the stream row moved back: the game reads as
        # "in progress" and its chain verifies
        kept = rows[-3]
        run_sql(
            path,
            (
                "DELETE FROM events WHERE position IN (:p, :q)",
                {"p": rows[-2].position, "q": rows[-1].position},
            ),
            (
                "UPDATE streams SET version = :v, head_hash = :h WHERE id = :s",
                {"v": kept.version, "h": kept.hash, "s": f"game-{first}"},
            ),
        )
        assert rows[-1].type == "seed_revealed"
        return int(rows[-2].position)

    def rechain(path: Path) -> int:
        forger = Rows(make_settings(database_url=f"sqlite:///{path}"))
        forger.forge(first, 1, swapped)
        forger.close()
        return int(rows[0].position)

    def recorded_at(path: Path) -> int:
        run_sql(
            path,
            (
                "UPDATE events SET recorded_at = '2020-01-01 00:00:00.000000' WHERE position = :p",
                {"p": target.position},
            ),
        )
        return target.position

    for attack in (edit, delete, swap, move, drop_tail, drop_game_tail, rechain, recorded_at):
        copy = tmp_path / f"{attack.__name__}.db"
        shutil.copy(db, copy)
        bad = attack(copy)
        status, out = verify(copy)
        assert status == 1, (attack.__name__, out)
        assert out.startswith(f"FAIL position {bad}:"), (attack.__name__, bad, out)


def test_king_log_verify_refuses_bad_files_clearly(
    make_settings: SettingsFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = make_settings()
    with TestClient(create_app(settings)) as client:
        verifier, _, note = signed(client)
    env_for(settings, monkeypatch)
    (tmp_path / "key").write_text(str(verifier))
    (tmp_path / "bad-key").write_text("not a key")
    (tmp_path / "forged").write_text(note.replace("\n0\n", "\n1\n"))
    (tmp_path / "cp").write_text(note)
    for checkpoint, key, says in (
        ("cp", "bad-key", "verifier key"),
        ("forged", "key", "does not verify"),
        ("missing", "key", "cannot read"),
    ):
        capsys.readouterr()
        args = ["--checkpoint", str(tmp_path / checkpoint), "--key", str(tmp_path / key)]
        status = main(["log", "verify", *args])
        err = capsys.readouterr().err
        assert status == 2 and err.startswith("king: ") and says in err, err
        assert "Traceback" not in err


# --- the witness --------------------------------------------------------------------------


def test_the_witness_accepts_a_growing_log_and_refuses_a_fork(
    make_settings: SettingsFactory,
    tmp_path: Path,
    live_server: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = make_settings()
    signer = load_signer(settings)
    with TestClient(create_app(settings)) as client:
        witness = Witness("", signer.verifier, tmp_path / "seen", client=client)
        assert witness.poll().startswith("ok size 0")
        play(client, 1)
        assert witness.poll().startswith("ok size")
        size = witness.last.size if witness.last else 0
        assert size > 0
        # a restarted witness holds the log to what it saw
        again = Witness("", signer.verifier, tmp_path / "seen", client=client)
        assert again.last == witness.last
        # the operator signs another history of the same size: refused
        fake = Checkpoint(settings.log_origin, size, bytes(32))
        (tmp_path / "fork").write_text(signer.sign(fake.text()))
        with pytest.raises(Fork, match="two roots for the same size"):
            Witness("", signer.verifier, tmp_path / "fork", client=client).poll()
        # or an earlier history that the log does not extend
        (tmp_path / "older").write_text(signer.sign(Checkpoint(fake.origin, 3, bytes(32)).text()))
        with pytest.raises(Fork, match="does not extend"):
            Witness("", signer.verifier, tmp_path / "older", client=client).poll()
        # or a longer one it has since dropped
        (tmp_path / "longer").write_text(
            signer.sign(Checkpoint(fake.origin, 10**6, bytes(32)).text())
        )
        with pytest.raises(Fork, match="shrank"):
            Witness("", signer.verifier, tmp_path / "longer", client=client).poll()
    # the command, against a real server: loud, exit 1
    server = live_server(settings)
    (tmp_path / "key").write_text(str(signer.verifier))
    args = ["log", "watch", server.url, "--key", str(tmp_path / "key"), "--interval", "0.05"]
    status, out = cli(capsys, *args, "--count", "2", "--state", str(tmp_path / "seen"))
    assert status == 0 and out.count("ok size") == 2
    capsys.readouterr()
    status = main([*args, "--count", "2", "--state", str(tmp_path / "fork")])
    err = capsys.readouterr().err
    assert status == 1 and "FORK: two roots" in err and "the log forked" in err


# --- hidden information ---------------------------------------------------------------------


def test_a_live_games_leaves_do_not_betray_its_hands(make_settings: SettingsFactory) -> None:
    """A seat knows its own 13 cards, and here even 50 of the 52: it still cannot test the
    last two against the deal's leaf. Keyed with the game's seed, the leaf only matches the
    true hands under the true key; unkeyed (what a seat could compute) no candidate matches,
    whereas under the key the brute force would succeed at once: with the seed, revealed when
    the game ends, anyone recomputes the leaf."""
    settings = make_settings(decision_seconds=600)
    with TestClient(create_app(settings)) as client:
        for i in range(4):
            create_player(client, f"seat{i}")
        game_id = create_game(client, ADMIN, [f"seat{i}" for i in range(4)])
        store = client.app.state.king.store
        deal = next(
            e
            for e in store.read_stream(f"game-{game_id}", upcast=False)
            if e.type == "deal_started"
        )
        game = client.get(f"/api/v1/games/{game_id}").json()["game"]
        assert game["status"] != "over"
        _, cp, note = signed(client)
        proof = client.get(
            "/api/v1/log/proof/inclusion", params={"index": deal.position - 1, "size": cp.size}
        ).json()
        published = unb64(proof["leaf_hash"])
        seed = store.unseal(f"game-seed:{game_id}")
        assert seed is not None
        for text in (note, orjson.dumps(proof).decode()):
            assert seed not in text and base64.b64encode(bytes.fromhex(seed)).decode() not in text

        hands = deal.payload["hands"]

        def leaf_for(candidate: list[list[str]], key: bytes) -> bytes:
            return event_leaf(
                position=deal.position,
                stream_id=deal.stream_id,
                version=deal.version,
                event_id=deal.event_id,
                type=deal.type,
                schema_version=deal.schema_version,
                payload=orjson.dumps(
                    dict(deal.payload, hands=candidate), option=orjson.OPT_SORT_KEYS
                ),
                meta=canonical_json(deal.meta),
                recorded_at=deal.recorded_at,
                key=key,
            )

        # the attacker's candidates: the last card of seat 2 and of seat 3, either way round
        a, b = hands[2][-1], hands[3][-1]
        candidates = []
        for x, y in itertools.permutations([a, b]):
            c = [list(h) for h in hands]
            c[2][-1], c[3][-1] = x, y
            candidates.append(c)
        true_key = leaf_key(deal.stream_id, seed)
        assert [leaf_for(c, true_key) == published for c in candidates] == [True, False]
        for guess_key in (b"", hashlib.sha256(game_id.encode()).digest()):
            assert not any(leaf_for(c, guess_key) == published for c in candidates)


# --- king-record/1 with inclusion proofs -----------------------------------------------------


def test_a_record_with_proofs_checks_offline_and_a_changed_one_fails(
    make_settings: SettingsFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = make_settings()
    with TestClient(create_app(settings)) as client:
        (game_id,) = play(client, 1)
        verifier, _, _ = signed(client)
    env_for(settings, monkeypatch)
    monkeypatch.setenv("KING_DATA_DIR", str(tmp_path))
    (tmp_path / "key").write_text(str(verifier))
    out = tmp_path / "record.json"
    capsys.readouterr()
    assert main(["record", "export", game_id, "--proofs", "-o", str(out)]) == 0
    doc = orjson.loads(out.read_bytes())
    ext = doc["transparency"]
    assert ext["format"] == "king-tlog-inclusion/1" and ext["events"][-1]["type"] == "seed_revealed"

    def check(document: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        path = tmp_path / "check.json"
        path.write_bytes(orjson.dumps(document))
        capsys.readouterr()
        status = main(["record", "check", str(path), "--key", str(tmp_path / "key")])
        return status, orjson.loads(capsys.readouterr().out)

    status, result = check(doc)
    assert status == 0 and result["transparency"]["checked"] is True, result
    assert result["transparency"]["events"] == len(ext["events"])
    # without --key the extension is ignored, as any other top-level key
    capsys.readouterr()
    assert main(["record", "check", str(out)]) == 0

    # a card of the record changed and the rules still pass? the proofs no longer match
    forged = orjson.loads(out.read_bytes())
    cards = [e for e in forged["transparency"]["events"] if e["type"] == "card_played"]
    cards[0]["payload"]["card"] = cards[1]["payload"]["card"]
    status, result = check(forged)
    assert status == 1 and result["transparency"]["error"]["code"] == "proof_failed"
    assert "not in the signed log" in result["transparency"]["error"]["message"]
    # the events intact but the record's players swapped
    forged = orjson.loads(out.read_bytes())
    forged["players"] = list(reversed(forged["players"]))
    status, result = check(forged)
    assert status == 1 and "players" in result["transparency"]["error"]["message"]
    # another key
    other = Verifier.parse(str(load_signer(make_settings(data_dir=str(tmp_path / "o"))).verifier))
    (tmp_path / "other").write_text(str(other))
    path = tmp_path / "check.json"
    path.write_bytes(orjson.dumps(doc))
    capsys.readouterr()
    assert main(["record", "check", str(path), "--key", str(tmp_path / "other")]) == 1


def test_no_proofs_for_a_live_game(
    make_settings: SettingsFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    settings = make_settings(decision_seconds=600)
    with TestClient(create_app(settings)) as client:
        for i in range(4):
            create_player(client, f"seat{i}")
        game_id = create_game(client, ADMIN, [f"seat{i}" for i in range(4)])
    env_for(settings, monkeypatch)
    monkeypatch.setenv("KING_DATA_DIR", str(tmp_path))
    capsys.readouterr()
    assert main(["record", "export", game_id, "--proofs"]) == 2
    captured = capsys.readouterr()
    assert "has not revealed its seed" in captured.err and "hands" not in captured.out


def test_a_rotated_key_still_proves_the_old_checkpoints(
    make_settings: SettingsFactory, tmp_path: Path
) -> None:
    old_settings = make_settings()
    with TestClient(create_app(old_settings)) as client:
        play(client, 1)
        old = Witness("", load_signer(old_settings).verifier, tmp_path / "seen", client=client)
        old.poll()
    (tmp_path / "log-signer.key").rename(tmp_path / "old.key")
    new_settings = make_settings()
    with TestClient(create_app(new_settings)) as client:
        new_key = load_signer(new_settings).verifier
        old_key = Verifier.parse(str(old.verifier))
        assert new_key != old_key and new_key.name == old_key.name
        play(client, 1)
        with pytest.raises(UserError):  # the saved checkpoint is signed by the old key
            Witness("", new_key, tmp_path / "seen", client=client)
        both = Witness("", [new_key, old_key], tmp_path / "seen", client=client)
        assert both.poll().startswith("ok size")
        assert both.last is not None and old.last is not None and both.last.size > old.last.size


def test_verify_without_the_stored_tree_re_derives_the_checkpoint(
    make_settings: SettingsFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A database restored without its tree: the events alone still prove the checkpoint."""
    settings = make_settings()
    with TestClient(create_app(settings)) as client:
        play(client, 1)
        verifier, _, note = signed(client)
    env_for(settings, monkeypatch)
    (tmp_path / "key").write_text(str(verifier))
    (tmp_path / "cp").write_text(note)
    db = Path(sa.engine.make_url(settings.url).database or "")
    run_sql(db, ("DELETE FROM log_nodes", {}), ("UPDATE log_size SET size = 0", {}))
    capsys.readouterr()
    args = ["log", "verify", "--checkpoint", str(tmp_path / "cp"), "--key", str(tmp_path / "key")]
    assert main(args) == 0
    assert "the stored tree covers 0 events only" in capsys.readouterr().out
    # and with one event changed, the re-derived root is not the checkpoint's
    run_sql(db, ("UPDATE events SET recorded_at = '2020-01-01 00:00:00' WHERE position = 5", {}))
    assert main(args) == 1
    assert capsys.readouterr().out.startswith("FAIL: the first")


def test_king_log_new_key_makes_the_one_key_every_process_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "log-signer.key"
    capsys.readouterr()
    assert main(["log", "new-key", "--out", str(key), "--origin", "king.example/log"]) == 0
    printed = capsys.readouterr().out.strip()
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    assert printed.startswith("king.example/log+") and "PRIVATE" not in printed
    # Given as KING_LOG_KEY_FILE, it is the key the log signs with: the same verifier key.
    monkeypatch.setenv("KING_LOG_KEY_FILE", str(key))
    monkeypatch.setenv("KING_LOG_ORIGIN", "king.example/log")
    monkeypatch.setenv("KING_DATA_DIR", str(tmp_path / "data"))
    assert main(["log", "key"]) == 0
    assert capsys.readouterr().out.strip() == printed
    # A key is never replaced, and a bad origin is refused before anything is written.
    before = key.read_bytes()
    assert main(["log", "new-key", "--out", str(key)]) == 2
    assert "exists already" in capsys.readouterr().err and key.read_bytes() == before
    assert main(["log", "new-key", "--out", str(tmp_path / "k2"), "--origin", "a b"]) == 2
    assert not (tmp_path / "k2").exists()
    # As a set-up step that may run again: the key there is kept, and its verifier printed.
    assert main(["log", "new-key", "--out", str(key), "--keep-existing"]) == 0
    assert capsys.readouterr().out.strip() == printed and key.read_bytes() == before
    assert main(["log", "new-key", "--out", str(key), "--keep-existing", "--origin", "x/y"]) == 2
    assert "not of 'x/y'" in capsys.readouterr().err
