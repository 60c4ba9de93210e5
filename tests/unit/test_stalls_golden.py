"""Golden stall cases: tests/golden/stalls/<case>/{transcript.jsonl, expected.json}.

Each expected.json was written by hand from the transcript's own markers (finish_reason values, the
exact nudge texts of synthetic_prompts.md, sample_logs/README.md), never from stallscan's output; its
"why" says which markers decide. Every case is checked with the fallback turn segmentation and, when
stallscan.labels is installed, with the turn-boundary truth, and the reference walk must agree.

The cases share databases (tests/golden_groups.py): each transcript is ingested as <case>.jsonl beside others
whose sessions it does not share, so three ingests and six replays serve them all; each test reads only its
own file's rows and the disagreements naming its sessions or events.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stallscan.replay.stalls import replay_stalls
from stallscan.replay.stalls_agreement import disagreements
from stallscan.store.db import connect
from tests.golden_groups import ingest_group, problems_by_file, session_groups
from tests.helpers import TESTS, memory_copy

GOLDEN = TESTS / "golden" / "stalls"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "expected.json").is_file())
MODES = ["fallback", "labels"]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """case -> (the database file its group was ingested into, its `events.file`): each group ingested once,
    for both segmentations (they replay in-memory copies)."""
    where: dict[str, tuple[Path, str]] = {}
    for i, cases in enumerate(session_groups({c: GOLDEN / c / "transcript.jsonl" for c in CASES})):
        folder = tmp_path_factory.mktemp(f"stalls_golden_{i}")
        path = folder.parent / f"{folder.name}.duckdb"
        con = connect(str(path))
        files = ingest_group(con, folder, {c: GOLDEN / c / "transcript.jsonl" for c in cases})
        con.close()
        where |= {c: (path, f) for c, f in files.items()}
    return where


@pytest.fixture(scope="module")
def replayed(ingested):
    """(database file, mode) -> a connection holding that group replayed in that mode, and the reference walk's
    disagreements with it by `events.file` (tests/golden_groups.py: problems_by_file)."""
    cons: dict[tuple[Path, str], tuple[Any, dict[str, list[str]]]] = {}

    def get(path: Path, mode: str):
        if (path, mode) not in cons:
            con = memory_copy(path)
            replay_stalls(con, segmentation=mode)
            cons[(path, mode)] = (con, problems_by_file(con, disagreements(con, limit=0)))
        return cons[(path, mode)]

    yield get
    for con, _ in cons.values():
        con.close()


def _fetch(con, q, params=None):
    cur = con.execute(q, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES)
def test_golden_case(ingested, replayed, case, mode):
    exp = json.loads((GOLDEN / case / "expected.json").read_text(encoding="utf-8"))
    if mode not in exp.get("modes", MODES):
        pytest.skip(exp["modes_why"])
    path, file = ingested[case]
    con, problems = replayed(path, mode)
    kinds = {
        str(r["line"]): r["round_kind"]
        for r in _fetch(
            con,
            "SELECT e.line, r.round_kind FROM rounds r JOIN events e USING (event_id) WHERE e.file = ? ORDER BY e.line",
            [file],
        )
    }
    assert kinds == exp["round_kinds"]
    stalls = _fetch(
        con,
        "SELECT e.line, s.round_kind, s.signature, s.stall_index, s.would_do, s.nudged, "
        "s.outcome, s.delivered FROM stalls s JOIN events e USING (event_id) WHERE e.file = ? ORDER BY e.line",
        [file],
    )
    assert stalls == exp["stalls"]
    turns = _fetch(
        con,
        "SELECT turn_id, n_rounds, n_tool_calls, n_stalls, delivered_round_kind, outcome FROM turns "
        "WHERE n_rounds > 0 AND session_id IN (SELECT session_id FROM events WHERE file = ?) ORDER BY turn_id",
        [file],
    )
    assert turns == exp["turns"]
    assert problems[file] == []


def test_replay_is_idempotent_and_rebounds(ingested):
    """Replaying twice gives the same tables; another bound changes would_do, nothing else (in every session
    of the group; the exhausted ending of seed_three_nudges_exhausted becomes a re-prompt at each stall)."""
    path, file = ingested["seed_three_nudges_exhausted"]
    con = memory_copy(path)
    replay_stalls(con, segmentation="fallback")
    first = _fetch(con, "SELECT * FROM stalls ORDER BY session_id, seq")
    replay_stalls(con, segmentation="fallback")
    assert _fetch(con, "SELECT * FROM stalls ORDER BY session_id, seq") == first
    replay_stalls(con, retry_bound=4, segmentation="fallback")
    again = _fetch(con, "SELECT * FROM stalls ORDER BY session_id, seq")
    mine = _fetch(
        con,
        "SELECT would_do FROM stalls WHERE session_id IN (SELECT session_id FROM events WHERE file = ?) ORDER BY seq",
        [file],
    )
    assert [r["would_do"] for r in mine] == ["re-prompt"] * 4
    assert [{k: v for k, v in r.items() if k != "would_do"} for r in again] == [
        {k: v for k, v in r.items() if k != "would_do"} for r in first
    ]
    assert disagreements(con, retry_bound=4) == []
    con.close()


def test_bound_sweep_counts_changed_endings(ingested, replayed):
    """bound N: the exhausted ending (delivered at stall_index 4) changes only for N >= 4; the silent
    one (index 1) for N >= 1; the recovered one (index 1) would be cut short only at N = 0. The sweep runs
    scoped to these three sessions (temp table scope_sessions, on a cursor of its own: temp objects are
    per connection, so the shared replay is left as it was)."""
    from stallscan.replay.stalls import bound_sweep

    three = ("seed_three_nudges_exhausted", "seed_narration_only", "seed_narration_then_call")
    (path,) = {ingested[c][0] for c in three}
    con, _ = replayed(path, "fallback")
    cur = con.cursor()
    cur.execute(
        "CREATE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events WHERE file IN (?, ?, ?)",
        [ingested[c][1] for c in three],
    )
    assert cur.execute("SELECT count(*) FROM scope_sessions").fetchone() == (3,)  # one session each
    rows = {r["bound"]: r for r in bound_sweep(cur, [0, 1, 3, 4], scoped=True)}
    cur.close()
    assert rows[0]["would_reprompt"] == 0 and rows[0]["would_deliver"] == 1
    assert rows[1]["would_reprompt"] == 1 and rows[1]["would_deliver"] == 0
    assert rows[3]["would_reprompt"] == 1
    assert rows[4]["would_reprompt"] == 2
    assert all(r["plan_endings"] == 2 for r in rows.values())
