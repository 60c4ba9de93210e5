"""Golden stall cases: tests/golden/stalls/<case>/{transcript.jsonl, expected.json}.

Each expected.json was written by hand from the transcript's own markers (finish_reason values, the
exact nudge texts of synthetic_prompts.md, sample_logs/README.md), never from stallscan's output; its
"why" says which markers decide. Every case is checked with the fallback turn segmentation and, when
stallscan.labels is installed, with the turn-boundary truth, and the reference walk must agree.

The cases share databases: each transcript is ingested as <case>.jsonl beside others whose sessions it does not
share (the replay keeps sessions apart; `groups` puts transcripts naming the same session id in different
databases), so a handful of ingests and replays serve them all. Each test reads only its own file's rows.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay.stalls import replay_stalls
from stallscan.replay.stalls_agreement import disagreements
from stallscan.store.db import connect
from tests.helpers import TESTS, memory_copy

GOLDEN = TESTS / "golden" / "stalls"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "expected.json").is_file())
MODES = ["fallback", "labels"]
SESSION_KEYS = ("sessionId", "session_id", "conversation_id")  # record fields naming a session (else: the stem)


def _named_sessions(case: str) -> set[str]:
    """The session ids a transcript's records name (a transcript naming none is keyed by its file's stem)."""
    names: set[str] = set()
    for line in (GOLDEN / case / "transcript.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            names |= {str(rec[k]) for k in SESSION_KEYS if rec.get(k) is not None}
    return names


def groups() -> list[list[str]]:
    """The cases in groups of transcripts naming no common session id (first fit, in case order)."""
    out: list[tuple[list[str], set[str]]] = []
    for case in CASES:
        names = _named_sessions(case)
        slot = next((g for g in out if not g[1] & names), None)
        if slot is None:
            out.append(([], set()))
            slot = out[-1]
        slot[0].append(case)
        slot[1].update(names)
    return [g[0] for g in out]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """case -> (the database file its group was ingested into, its file path as `events.file` holds it),
    each group ingested once, for both segmentations (they replay in-memory copies)."""
    where: dict[str, tuple[Path, str]] = {}
    for i, cases in enumerate(groups()):
        folder = tmp_path_factory.mktemp(f"stalls_golden_{i}")
        for case in cases:
            shutil.copy(GOLDEN / case / "transcript.jsonl", folder / f"{case}.jsonl")
        path = folder.parent / f"{folder.name}.duckdb"
        con = connect(str(path))
        res = ingest_paths(con, [str(folder)])
        files = dict(con.execute("SELECT file, count(DISTINCT session_id) FROM events GROUP BY file").fetchall())
        shared = con.execute("SELECT session_id FROM events GROUP BY session_id HAVING count(DISTINCT file) > 1")
        assert shared.fetchall() == [], "two transcripts of one group share a session: see groups()"
        con.close()
        assert res.rejects == 0 and sorted(Path(f).stem for f in files) == sorted(cases)
        assert all(n > 0 for n in files.values())
        where |= {Path(f).stem: (path, f) for f in files}
    return where


@pytest.fixture(scope="module")
def replayed(ingested):
    """(database file, mode) -> a connection holding that group replayed in that mode, and the reference walk's
    disagreements with it by file (`events.file`): those naming the file's sessions or events, and to every
    file those naming none of the group's."""
    cons: dict[tuple[Path, str], tuple[Any, dict[str, list[str]]]] = {}

    def get(path: Path, mode: str):
        if (path, mode) not in cons:
            con = memory_copy(path)
            replay_stalls(con, segmentation=mode)
            problems = disagreements(con, limit=0)
            keys: dict[str, set[str]] = {}
            for file, session, event in con.execute("SELECT file, session_id, event_id FROM events").fetchall():
                keys.setdefault(file, set()).update((f"{session}:", repr(session), event))
            named = {f: [p for p in problems if any(k in p for k in ks)] for f, ks in keys.items()}
            loose = [p for p in problems if not any(p in ps for ps in named.values())]
            cons[(path, mode)] = (con, {f: ps + loose for f, ps in named.items()})
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
