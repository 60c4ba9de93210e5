"""An incremental stall replay whose changed sessions hold no stall (stallscan.replay.stalls._compute) makes
stall_walk empty from queries/replay/stall_replay_none.sql instead of walking and planning
queries/replay/stall_replay.sql's walk statement: the table has that statement's columns, order and types, and the
replay's tables equal a full replay's, whether the changed sessions hold a stall (the walk runs) or not (skipped)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay import derive
from stallscan.replay.stalls import replay_stalls
from stallscan.store import sql, stamps
from stallscan.store.db import connect
from tests.helpers import TESTS
from tests.replay_checks import fingerprint

GOLDEN = TESTS / "golden" / "stalls"
# (the views: rounds_core's hit_key numbers the hit lists of one run, so the stored keys differ between runs)
OUTPUTS = ("rounds", "stalls", "turns")


def test_the_empty_walk_has_the_walks_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample_db_file: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    shutil.copy(sample_db_file, tmp_path / "d.duckdb")
    con = connect(str(tmp_path / "d.duckdb"))
    seen: dict[str, list[tuple[str, str]]] = {}
    run = sql.run

    def described(c, name, params=None):  # the walk's table as the full replay's statement makes it
        run(c, name, params)
        if name == "replay/stall_replay":
            seen["walk"] = [(r[0], r[1]) for r in c.execute("DESCRIBE stall_walk").fetchall()]
            seen["stalls"] = [(r[0], r[1]) for r in c.execute("DESCRIBE stalls").fetchall()]

    monkeypatch.setattr(sql, "run", described)
    stamps.forget(con, "stalls")
    replay_stalls(con)
    assert con.execute("SELECT count(*) FROM stalls").fetchone()[0] > 0  # (the walk walked something)
    monkeypatch.setattr(sql, "run", run)
    con.execute("CREATE TEMP TABLE stalls_kept AS FROM stalls")
    sql.run(con, "replay/stall_replay_none")
    assert [(r[0], r[1]) for r in con.execute("DESCRIBE stall_walk").fetchall()] == seen["walk"]
    assert con.execute("SELECT count(*) FROM stall_walk").fetchone() == (0,)
    con.execute("CREATE TEMP TABLE stalls_none AS " + sql.load("replay/stall_replay")[-1].split(" AS", 1)[1])
    assert [(r[0], r[1]) for r in con.execute("DESCRIBE stalls_none").fetchall()] == seen["stalls"]
    con.close()


def test_incremental_with_and_without_a_stall_equals_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    monkeypatch.setattr(derive, "FULL_SHARE", 1.01)  # incremental however many sessions changed
    ran: list[str] = []
    run = sql.run

    def noted(c, name, params=None):
        ran.append(name)
        run(c, name, params)

    monkeypatch.setattr(sql, "run", noted)
    con = connect(str(tmp_path / "d.duckdb"))
    logs = tmp_path / "logs"
    logs.mkdir()
    steps = [
        ("narrated_nudged", None),  # the first replay: full
        ("text_final_stop_or_none", False),  # a final only: no stall, the walk skipped
        ("seed_three_nudges_exhausted", True),  # four stalls: walked
        ("empty_and_truncated", False),
    ]
    for case, walked in steps:
        shutil.copy(GOLDEN / case / "transcript.jsonl", logs / f"{case}.jsonl")
        ingest_paths(con, [str(logs)])
        ran.clear()
        replay_stalls(con)
        mode = stamps.get(con, "stalls")["mode"]
        assert mode == ("full" if walked is None else "incremental"), case
        if walked is not None:
            assert ("replay/stall_replay" in ran, "replay/stall_replay_none" in ran) == (walked, not walked), case
        got = {t: fingerprint(con, t) for t in OUTPUTS}
        stamps.forget(con, "stalls")
        replay_stalls(con)
        assert {t: fingerprint(con, t) for t in OUTPUTS} == got, case
    assert con.execute("SELECT count(*) FROM stalls").fetchone()[0] >= 4
    con.close()
