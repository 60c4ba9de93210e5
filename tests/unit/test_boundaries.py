"""Turn-boundary replay: golden cases (tests/golden/boundaries/<case>/), and agreement between the SQL
production path and the plain-Python reference (stallscan.boundaries_ref) on generated sessions.

Golden expectations are written from the decision order stated in issue 3 and formats.md, by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stallscan.ingest.run import ingest_paths
from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.labels import label_events
from tests.helpers import TESTS
from tests.replay_checks import reference_mismatches
from tests.replay_checks import rows as _rows

GOLDEN = TESTS / "golden" / "boundaries"
CASES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir())


@pytest.mark.parametrize("case", CASES)
def test_golden(con, case):
    folder = GOLDEN / case
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    res = ingest_paths(con, [str(folder / "transcript.jsonl")])
    assert res.rejects == 0
    label_events(con, config={})
    replay_boundaries(con, expected["threshold"])
    got = _rows(
        con, "SELECT e.line, t.*, t.origin_rule FROM turn_boundaries t JOIN events e USING (event_id) ORDER BY e.line"
    )
    assert [g["line"] for g in got] == [d["line"] for d in expected["decisions"]], case
    for g, want in zip(got, expected["decisions"]):
        for key, value in want.items():
            if key == "gap_s" and value is not None:
                assert g[key] == pytest.approx(value, abs=1e-6), (case, want["line"], key)
            else:
                assert g[key] == value, (case, want["line"], key, g[key])
    assert reference_mismatches(con, expected["threshold"]) == []


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


# ---------------------------------------------------------------------------------------------------
# generated sessions: SQL and reference agree
# ---------------------------------------------------------------------------------------------------
T0 = datetime(2026, 1, 1, tzinfo=UTC)
TEXTS = [
    "",
    "  ",
    "(empty)",
    "Done.",
    "API Error: 500",
    "Operation interrupted: x",
    "Failure: I did not provide a response.",
    "please continue",
    "Stop hook feedback:\n[x]: y",
    "[Request interrupted by user]",
    "<task-notification>x</task-notification>",
    None,
]

event_st = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant", "assistant", "tool", "system"]),
        "text": st.sampled_from(TEXTS),
        "finish_norm": st.sampled_from([None, "stop", "length", "cancelled", "error", "content_filter", "tool_calls"]),
        "n_tool_calls": st.sampled_from([0, 0, 1, 2]),
        "model": st.sampled_from(["m", "<synthetic>", None]),
        "ms": st.one_of(st.none(), st.integers(0, 10_000)),  # ts offset in ms (None: no timestamp)
        "dur": st.sampled_from([0, 500, 2000]),  # reply duration (ts_end - ts)
        "ts_quality": st.sampled_from(["per_message", "per_message", "per_flush", "none"]),
        "initiator": st.sampled_from([None, None, None, "user", "agent", "other"]),
        "is_meta": st.booleans(),
    }
)


def _insert(con, sessions):
    rows = []
    for s, events in enumerate(sessions):
        for i, e in enumerate(events, 1):
            ts = T0 + timedelta(milliseconds=e["ms"]) if e["ms"] is not None else None
            end = ts + timedelta(milliseconds=e["dur"]) if ts is not None and e["role"] == "assistant" else ts
            rows.append(
                (
                    f"s{s}-{i}",
                    "openai_chat",
                    f"/g/s{s}",
                    i,
                    i,
                    0,
                    1,
                    f"s{s}",
                    i,
                    ts,
                    end,
                    e["ts_quality"],
                    e["role"],
                    "tool_result" if e["role"] == "tool" else "message",
                    e["text"],
                    e["n_tool_calls"] if e["role"] == "assistant" else 0,
                    e["finish_norm"],
                    e["initiator"],
                    e["model"],
                    json.dumps({"isMeta": e["is_meta"]}),
                )
            )
    con.executemany(
        "INSERT INTO events (event_id, source_format, file, line, last_line, part, n_records, session_id, seq, ts, "
        "ts_end, ts_quality, role, kind, text, n_tool_calls, finish_norm, initiator, model, is_sidechain, meta) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, false, ?)",
        rows,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sessions=st.lists(st.lists(event_st, min_size=1, max_size=12), min_size=1, max_size=4),
    threshold=st.sampled_from([0.0, 0.5, 2.0, 2.5, 7.0]),
)
def test_sql_agrees_with_reference(con, sessions, threshold):
    con.execute("DELETE FROM events")
    _insert(con, sessions)
    label_events(con, config={})
    replay_boundaries(con, threshold)
    assert reference_mismatches(con, threshold) == []
