"""Turn-boundary replay: the SQL production path agrees with the plain-Python reference
(stallscan.replay.boundaries_ref) on generated sessions (hypothesis; the golden cases are in
tests/unit/test_boundaries.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stallscan.replay import scan_bounds
from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.labels import label_events
from tests.helpers import examples
from tests.replay_checks import reference_mismatches

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
    "  API Error: 500",
    "Operation interrupted: x",
    " Operation interrupted: x",
    " \n(empty)\t",
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


def _insert(con, sessions, rnd=None):
    """Insert the sessions' events; with rnd (a random.Random), in a shuffled storage order."""
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
    if rnd is not None:
        rnd.shuffle(rows)
    con.executemany(
        "INSERT INTO events (event_id, source_format, file, line, last_line, part, n_records, session_id, seq, ts, "
        "ts_end, ts_quality, role, kind, text, n_tool_calls, finish_norm, initiator, model, is_sidechain, meta) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, false, ?)",
        rows,
    )


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sessions=st.lists(st.lists(event_st, min_size=1, max_size=12), min_size=1, max_size=4),
    threshold=st.sampled_from([0.0, 0.5, 2.0, 2.5, 7.0]),
    rnd=st.one_of(st.none(), st.randoms(use_true_random=False)),
    batch=st.sampled_from([None, 1, 2, 5]),
)
def test_sql_agrees_with_reference(con, sessions, threshold, rnd, batch):
    """batch: the previous-reply scan's rows per batch (small ones cut sessions across batches; a shuffled
    storage order makes the scan fall back to the whole table)."""
    con.execute("DELETE FROM events")
    _insert(con, sessions, rnd)
    label_events(con, config={})
    saved = scan_bounds.BATCH_ROWS
    scan_bounds.BATCH_ROWS = batch or saved
    try:
        replay_boundaries(con, threshold)
    finally:
        scan_bounds.BATCH_ROWS = saved
    assert reference_mismatches(con, threshold) == []
