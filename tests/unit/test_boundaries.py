"""Turn-boundary replay: golden cases (tests/golden/boundaries/<case>/); the SQL's agreement with the
plain-Python reference on generated sessions is in tests/functional/test_boundaries_reference.py.

Golden expectations are written by hand from the router's decision order (x-initiator header, then the
completion report, then the gap). The cases of one threshold share databases (tests/golden_groups.py): each
reads only its own file's rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.labels import label_events
from stallscan.store.db import connect
from tests.golden_groups import ingest_group, problems_by_file, session_groups
from tests.helpers import TESTS
from tests.replay_checks import reference_mismatches
from tests.replay_checks import rows as _rows

GOLDEN = TESTS / "golden" / "boundaries"
CASES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """case -> (connection, its `events.file`, the reference's mismatches naming it): the cases of one threshold
    ingested together in groups (tests/golden_groups.py), each group labelled and replayed at it once."""
    by_threshold: dict[float, dict[str, Path]] = {}
    for case in CASES:
        threshold = json.loads((GOLDEN / case / "expected.json").read_text(encoding="utf-8"))["threshold"]
        by_threshold.setdefault(threshold, {})[case] = GOLDEN / case / "transcript.jsonl"
    out: dict[str, tuple[Any, str, list[str]]] = {}
    cons = []
    for threshold, transcripts in by_threshold.items():
        for cases in session_groups(transcripts):
            con = connect(":memory:")
            cons.append(con)
            files = ingest_group(con, tmp_path_factory.mktemp("boundaries"), {c: transcripts[c] for c in cases})
            label_events(con, config={})
            replay_boundaries(con, threshold)
            problems = problems_by_file(con, reference_mismatches(con, threshold))
            out |= {c: (con, f, problems[f]) for c, f in files.items()}
    yield out
    for con in cons:
        con.close()


@pytest.mark.parametrize("case", CASES)
def test_golden(replayed, case):
    expected = json.loads((GOLDEN / case / "expected.json").read_text(encoding="utf-8"))
    con, file, problems = replayed[case]
    assert con.execute("SELECT DISTINCT threshold FROM turn_boundaries").fetchall() == [(expected["threshold"],)]
    got = _rows(
        con,
        "SELECT e.line, t.*, t.origin_rule FROM turn_boundaries t JOIN events e USING (event_id) WHERE e.file = ? "
        "ORDER BY e.line",
        [file],
    )
    assert [g["line"] for g in got] == [d["line"] for d in expected["decisions"]], case
    for g, want in zip(got, expected["decisions"]):
        for key, value in want.items():
            if key == "gap_s" and value is not None:
                assert g[key] == pytest.approx(value, abs=1e-6), (case, want["line"], key)
            else:
                assert g[key] == value, (case, want["line"], key, g[key])
    assert problems == []


def test_golden_cases_cover_the_issue():
    """Header precedence, every incomplete status, the threshold edge, skew, missing and per-flush times."""
    seen = {
        (d["decided_by"], d["prev_reply_status"])
        for c in CASES
        for d in json.loads((GOLDEN / c / "expected.json").read_text())["decisions"]
    }
    for status in ("empty", "truncated", "cancelled", "failed", "tool_calls"):
        assert ("completion", status) in seen, status
    assert {("header", "final"), ("header", "tool_calls"), ("no_time", "final"), ("gap", "final")} <= seen
    assert {"gap_equal_threshold", "clock_skew", "missing_timestamps", "per_flush_timestamps"} <= set(CASES)


def test_threshold_is_a_parameter(con):
    ingest_paths(con, [str(GOLDEN / "gap_equal_threshold" / "transcript.jsonl")])
    replay_boundaries(con, 1.5)
    assert [r[0] for r in con.execute("SELECT decision FROM turn_boundaries ORDER BY seq").fetchall()] == [
        "human",
        "human",
        "human",
    ]
    replay_boundaries(con, 2.5)
    assert [r[0] for r in con.execute("SELECT decision FROM turn_boundaries ORDER BY seq").fetchall()] == [
        "human",
        "continuation",
        "continuation",
    ]
    assert con.execute("SELECT DISTINCT threshold FROM turn_boundaries").fetchall() == [(2.5,)]
