"""Golden stall cases: tests/golden/stalls/<case>/{transcript.jsonl, expected.json}.

Each expected.json was written by hand from the transcript's own markers (finish_reason values, the
exact nudge texts of synthetic_prompts.md, sample_logs/README.md), never from stallscan's output; its
"why" says which markers decide. Every case is checked with the fallback turn segmentation and, when
stallscan.labels is installed, with the turn-boundary truth, and the reference walk must agree.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay.stalls import replay_stalls
from stallscan.replay.stalls_agreement import disagreements
from stallscan.store.db import connect
from tests.helpers import TESTS, memory_copy

GOLDEN = TESTS / "golden" / "stalls"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "expected.json").is_file())
MODES = ["fallback", "labels"]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """case -> its transcript ingested into a database file, once for both segmentations (each test replays
    its own in-memory copy)."""
    files: dict[str, Path] = {}

    def get(case: str) -> Path:
        if case not in files:
            path = tmp_path_factory.mktemp("stalls_golden") / f"{case}.duckdb"
            con = connect(str(path))
            res = ingest_paths(con, [str(GOLDEN / case / "transcript.jsonl")])
            con.close()
            assert res.rejects == 0 and res.events > 0
            files[case] = path
        return files[case]

    return get


def _replayed(ingested, case: str, mode: str):
    con = memory_copy(ingested(case))
    replay_stalls(con, segmentation=mode)
    return con


def _fetch(con, q):
    cur = con.execute(q)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES)
def test_golden_case(ingested, case, mode):
    exp = json.loads((GOLDEN / case / "expected.json").read_text(encoding="utf-8"))
    if mode not in exp.get("modes", MODES):
        pytest.skip(exp["modes_why"])
    con = _replayed(ingested, case, mode)
    kinds = {
        str(r["line"]): r["round_kind"]
        for r in _fetch(con, "SELECT e.line, r.round_kind FROM rounds r JOIN events e USING (event_id) ORDER BY e.line")
    }
    assert kinds == exp["round_kinds"]
    stalls = _fetch(
        con,
        "SELECT e.line, s.round_kind, s.signature, s.stall_index, s.would_do, s.nudged, "
        "s.outcome, s.delivered FROM stalls s JOIN events e USING (event_id) ORDER BY e.line",
    )
    assert stalls == exp["stalls"]
    turns = _fetch(
        con,
        "SELECT turn_id, n_rounds, n_tool_calls, n_stalls, delivered_round_kind, outcome "
        "FROM turns WHERE n_rounds > 0 ORDER BY turn_id",
    )
    assert turns == exp["turns"]
    assert disagreements(con) == []
    con.close()


def test_replay_is_idempotent_and_rebounds(ingested):
    """Replaying twice gives the same tables; another bound changes would_do, nothing else."""
    con = _replayed(ingested, "seed_three_nudges_exhausted", "fallback")
    first = _fetch(con, "SELECT * FROM stalls ORDER BY seq")
    replay_stalls(con, segmentation="fallback")
    assert _fetch(con, "SELECT * FROM stalls ORDER BY seq") == first
    replay_stalls(con, retry_bound=4, segmentation="fallback")
    again = _fetch(con, "SELECT * FROM stalls ORDER BY seq")
    assert [r["would_do"] for r in again] == ["re-prompt"] * 4
    assert [{k: v for k, v in r.items() if k != "would_do"} for r in again] == [
        {k: v for k, v in r.items() if k != "would_do"} for r in first
    ]
    assert disagreements(con, retry_bound=4) == []
    con.close()


def test_bound_sweep_counts_changed_endings(tmp_path):
    """bound N: the exhausted ending (delivered at stall_index 4) changes only for N >= 4; the silent
    one (index 1) for N >= 1; the recovered one (index 1) would be cut short only at N = 0."""
    from stallscan.replay.stalls import bound_sweep

    con = connect(":memory:")
    for c in ("seed_three_nudges_exhausted", "seed_narration_only", "seed_narration_then_call"):
        (tmp_path / f"{c}.jsonl").write_bytes((GOLDEN / c / "transcript.jsonl").read_bytes())  # one session each
    ingest_paths(con, [str(tmp_path)])
    replay_stalls(con, segmentation="fallback")
    rows = {r["bound"]: r for r in bound_sweep(con, [0, 1, 3, 4])}
    assert rows[0]["would_reprompt"] == 0 and rows[0]["would_deliver"] == 1
    assert rows[1]["would_reprompt"] == 1 and rows[1]["would_deliver"] == 0
    assert rows[3]["would_reprompt"] == 1
    assert rows[4]["would_reprompt"] == 2
    assert all(r["plan_endings"] == 2 for r in rows.values())
    con.close()
