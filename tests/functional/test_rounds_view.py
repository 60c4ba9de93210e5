"""`rounds` is a view: the view rounds_narrow (the stored table rounds_core with its sparse columns, stored apart,
joined back: queries/replay/stall_rounds_narrow_view.sql) and each reply's own event (queries/replay/stall_rounds_view.sql).

* one row per assistant event, each with its own event's id (the view finds the reply by session_id and seq);
* a database holding an older `rounds` or `rounds_narrow` table gets the view in its place;
* after events of one file are removed and the database checkpointed (DuckDB then renumbers the rowids of
  the rows stored after them), the rounds of the other files still show their own events: the incremental
  replay's rounds equal a full replay's.
"""

from __future__ import annotations

import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay.stalls import replay_stalls
from stallscan.store import stamps
from stallscan.store.db import connect
from tests.helpers import relation_kinds
from tests.replay_checks import fingerprint, real_line_files, replay_all, shrink_corpus


@pytest.fixture
def db(sample_ingested_db):
    return sample_ingested_db  # (sample_logs ingested, not replayed: tests/functional/conftest.py)


def test_one_row_per_reply_with_its_own_event(db):
    replay_stalls(db)
    assert relation_kinds(db, "rounds") == {"view"}
    assert relation_kinds(db, "rounds_narrow") == {"view"}
    assert relation_kinds(db, "rounds_core") == {"table"}
    pairs = db.execute(
        "SELECT r.event_id, e.event_id FROM rounds r FULL JOIN (SELECT * FROM events WHERE role = 'assistant') e "
        "USING (event_id)"
    ).fetchall()
    assert pairs, "sample_logs hold replies"
    assert all(a is not None and a == b for a, b in pairs)  # every reply once, no round without its reply


def test_an_older_rounds_table_is_replaced_by_the_view(db):
    replay_stalls(db)
    want = fingerprint(db, "rounds")
    db.execute("DROP VIEW rounds")
    db.execute("CREATE TABLE rounds AS SELECT 1 AS stale")  # as a database written before the view holds
    stamps.forget(db, "stalls")
    replay_stalls(db)
    assert relation_kinds(db, "rounds") == {"view"}
    assert fingerprint(db, "rounds") == want


def test_an_older_rounds_narrow_table_is_replaced_by_the_view(db):
    replay_stalls(db)
    want = {t: fingerprint(db, t) for t in ("rounds", "rounds_narrow")}
    # as a database written before the view holds: rounds_narrow a table of every column, no rounds_core
    db.execute("CREATE TABLE rounds_narrow_old AS SELECT * FROM rounds_narrow")
    db.execute("DROP VIEW rounds_narrow")
    db.execute("ALTER TABLE rounds_narrow_old RENAME TO rounds_narrow")
    for t in ("rounds_core", "rounds_hits", "rounds_nudges", "rounds_evidence"):
        db.execute(f"DROP TABLE {t}")
    stamps.forget(db, "stalls")
    replay_stalls(db)
    assert relation_kinds(db, "rounds_narrow") == {"view"}
    assert {t: fingerprint(db, t) for t in ("rounds", "rounds_narrow")} == want


def test_rounds_follow_their_events_after_a_delete_and_checkpoint(tmp_path, monkeypatch):
    files = real_line_files()
    if not files:
        pytest.skip("real claude-code / codex files not found: set STALLSCAN_REAL_DATA")
    monkeypatch.chdir(tmp_path)
    from stallscan.replay import derive

    monkeypatch.setattr(derive, "FULL_SHARE", 1.01)  # replay incrementally however many sessions changed
    con = connect(str(tmp_path / "d.duckdb"))
    corpus = shrink_corpus(tmp_path, files, con)  # the first file's events: fewer
    con.execute("CHECKPOINT")
    replay_all(con)
    assert stamps.get(con, "stalls")["mode"] == "incremental"
    got = {t: fingerprint(con, t) for t in ("rounds", "stalls", "turns")}
    fresh = connect(str(tmp_path / "fresh.duckdb"))
    ingest_paths(fresh, [str(corpus)])
    replay_all(fresh)
    assert got == {t: fingerprint(fresh, t) for t in ("rounds", "stalls", "turns")}
    con.close()
    fresh.close()
