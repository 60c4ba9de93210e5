"""bench_replay.py's --layout ingest: the same generated rows as the walk layout (the same multiset), laid out
as an ingest writes them (bench/layout_stats.py): each session in three runs, seq stepping back between them.
--grow K: K sessions one event longer, that event stored after every other row (as a grown transcript's)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.helpers import ROOT


def _layout_stats() -> Any:
    spec = importlib.util.spec_from_file_location("layout_stats", ROOT / "bench" / "layout_stats.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def dbs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for layout, grow in (("walk", "0"), ("ingest", "0"), ("walk", "4")):
        db = tmp_path_factory.mktemp(layout) / "events.duckdb"
        args = ["--generate-only", "--db", str(db), "--events", "6000", "--layout", layout, "--batch-events", "1200"]
        args += ["--grow", grow]
        layout = layout if grow == "0" else "grown"
        subprocess.run([sys.executable, str(ROOT / "bench" / "bench_replay.py"), *args], check=True, timeout=120)
        out[layout] = db
    return out


def test_same_rows_other_order(dbs: dict[str, Path]) -> None:
    con = duckdb.connect()
    con.execute(f"ATTACH '{dbs['walk']}' AS w (READ_ONLY)")
    con.execute(f"ATTACH '{dbs['ingest']}' AS i (READ_ONLY)")
    assert con.execute("SELECT count(*) FROM w.events").fetchone() == (6000,)
    assert con.execute("SELECT count(*) FROM i.events").fetchone() == (6000,)
    for a, b in (("w", "i"), ("i", "w")):
        assert con.execute(f"SELECT count(*) FROM (FROM {a}.events EXCEPT ALL FROM {b}.events)").fetchone() == (0,)
    moved = "SELECT count(*) FROM w.events a JOIN i.events b ON a.rowid = b.rowid WHERE a.event_id <> b.event_id"
    assert (con.execute(moved).fetchone() or (0,))[0] > 5000


def test_layouts(dbs: dict[str, Path]) -> None:
    stats = _layout_stats()
    (walk,) = stats.layout(duckdb.connect(str(dbs["walk"]), read_only=True))
    assert (walk["sessions"], walk["runs"], walk["seq_backs"]) == (100, 100, 0)
    (ingest,) = stats.layout(duckdb.connect(str(dbs["ingest"]), read_only=True))
    # user + tool rows, then the assistant rows in two halves: three runs a session, two steps back between them
    assert (ingest["sessions"], ingest["runs"], ingest["max_runs"], ingest["seq_backs"]) == (100, 300, 3, 200)
    # a session's runs spread over its batch of 20 sessions (1,200 rows): its span is more than 10 sessions' rows
    assert ingest["median_spread"] > 10


def test_grown_sessions_come_back_at_the_end(dbs: dict[str, Path]) -> None:
    con = duckdb.connect()
    con.execute(f"ATTACH '{dbs['walk']}' AS w (READ_ONLY)")
    con.execute(f"ATTACH '{dbs['grown']}' AS g (READ_ONLY)")
    # the walk layout's rows, in the same places, then one row for each of 4 sessions spread over the 100
    same = "SELECT count(*) FROM w.events a JOIN g.events b ON a.rowid = b.rowid WHERE a.event_id = b.event_id"
    assert con.execute(same).fetchone() == (6000,)
    new = con.execute(
        "SELECT b.rowid, b.session_id, b.seq, b.event_id FROM g.events b ANTI JOIN w.events a USING (event_id)"
        " ORDER BY b.rowid"
    ).fetchall()
    assert [r[0] for r in new] == [6000, 6001, 6002, 6003]
    assert [r[1] for r in new] == ["sess0", "sess25", "sess50", "sess75"]
    assert {r[2] for r in new} == {61}  # each session's 60 events, then the grown one
    assert con.execute("SELECT count(DISTINCT event_id) FROM g.events").fetchone() == (6004,)
    stats = _layout_stats()
    (grown,) = stats.layout(duckdb.connect(str(dbs["grown"]), read_only=True))
    assert (grown["sessions"], grown["runs"], grown["seq_backs"]) == (100, 104, 0)
