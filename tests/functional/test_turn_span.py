"""`turns`' span and picked columns on generated sessions, against a plain walk of each session (hypothesis).

A turn is a session's events from a human turn start (here: a user message with text, as the fallback
segmentation reads one) to the next, turn 0 the events before the first. Per turn: its harness, first and last seq,
first time (the least ts) and last time (the greatest ts_end, else ts; NULL when no event has a time), its replies
and their tool calls, its start's and last reply's event ids, the model of its last reply that names one and the
finish reason of its last reply that logs one. Events are stored grouped or shuffled, and the turn scan runs in
batches of a few rows, so sessions are cut across batches and the sort path is taken.
"""

from __future__ import annotations

import datetime as dt
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stallscan.replay.stalls import replay_stalls
from stallscan.store.db import connect
from tests.helpers import examples, scan_batch_rows

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
COLS = (
    "source_format",
    "start_seq",
    "end_seq",
    "ts_start",
    "ts_end",
    "n_rounds",
    "n_tool_calls",
    "start_event_id",
    "delivered_event_id",
    "model",
    "delivered_finish",
)

time_st = st.one_of(st.none(), st.integers(0, 10_000).map(lambda s: T0 + dt.timedelta(seconds=s, microseconds=7)))
event_st = st.one_of(
    st.fixed_dictionaries({"role": st.just("user"), "kind": st.just("message"), "ts": time_st, "ts_end": time_st}),
    st.fixed_dictionaries({"role": st.just("tool"), "kind": st.just("tool_result"), "ts": time_st, "ts_end": time_st}),
    st.fixed_dictionaries(
        {
            "role": st.just("assistant"),
            "kind": st.just("message"),
            "ts": time_st,
            "ts_end": time_st,
            "model": st.sampled_from([None, "gpt-4o", "claude-3"]),
            "finish_reason": st.sampled_from([None, "stop", "length"]),
            "n_tool_calls": st.integers(0, 2),
        }
    ),
)


def _insert(con, sessions: list[list[dict]], rnd: random.Random | None) -> None:
    rows = []
    for sid, evs in enumerate(sessions):
        fmt = ("openai_chat", "codex")[sid % 2]
        for seq, e in enumerate(evs, 1):
            n = e.get("n_tool_calls", 0)
            calls = [{"id": f"c{seq}_{i}", "name": "t", "arguments": "{}"} for i in range(n)]
            text = f"zq human prompt {seq}" if e["role"] == "user" else "ok"
            rows.append(
                (f"s{sid}-{seq:03d}", fmt, f"/x/s{sid}.jsonl", seq, seq, 0, 1, f"s{sid}", seq, e["ts"], e["ts_end"])
                + ("none", e["role"], e["kind"], text, calls, n, None, e.get("finish_reason"), None)
                + (None, None, None, None, None, e.get("model"), False, None, None, "{}")
            )
    if rnd is not None:
        rnd.shuffle(rows)
    con.executemany("INSERT INTO events VALUES (" + ",".join(["?"] * 30) + ")", rows)


def _walk(sessions: list[list[dict]]) -> dict[tuple[str, int], dict]:
    """Each turn's columns, walking each session in seq order."""
    out = {}
    for sid, evs in enumerate(sessions):
        turns: list[list[tuple[int, dict]]] = [[]]
        for seq, e in enumerate(evs, 1):
            if e["role"] == "user":
                turns.append([])
            turns[-1].append((seq, e))
        for tid, rows in enumerate(turns):
            replies = [(seq, e) for seq, e in rows if e["role"] == "assistant"]
            if not rows or (tid == 0 and not replies):
                continue  # (turn 0 without a reply is no turn)
            starts = [e["ts"] for _, e in rows if e["ts"] is not None]
            ends = [e["ts_end"] or e["ts"] for _, e in rows if (e["ts_end"] or e["ts"]) is not None]
            models = [e["model"] for _, e in replies if e["model"] is not None]
            finishes = [e["finish_reason"] for _, e in replies if e["finish_reason"] is not None]
            out[(f"s{sid}", tid)] = {
                "source_format": ("openai_chat", "codex")[sid % 2],
                "start_seq": rows[0][0],
                "end_seq": rows[-1][0],
                "ts_start": min(starts) if starts else None,
                "ts_end": max(ends) if ends else None,
                "n_rounds": len(replies),
                "n_tool_calls": sum(e["n_tool_calls"] for _, e in replies),
                "start_event_id": f"s{sid}-{rows[0][0]:03d}" if tid else None,
                "delivered_event_id": f"s{sid}-{replies[-1][0]:03d}" if replies else None,
                "model": models[-1] if models else None,
                "delivered_finish": finishes[-1] if finishes else None,
            }
    return out


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sessions=st.lists(st.lists(event_st, min_size=1, max_size=12), min_size=1, max_size=4),
    rnd=st.one_of(st.none(), st.randoms(use_true_random=False)),
    batch=st.sampled_from([None, 1, 3, 8]),
)
def test_turns_span_and_picks_equal_a_walk_per_session(sessions, rnd, batch):
    con = connect(":memory:")
    try:
        with scan_batch_rows(batch):
            _insert(con, sessions, rnd)
            replay_stalls(con, segmentation="fallback")
        cur = con.execute(f"SELECT session_id, turn_id, {', '.join(COLS)} FROM turns")
        got = {(r[0], r[1]): dict(zip(COLS, r[2:])) for r in cur.fetchall()}
    finally:
        con.close()
    assert got == _walk(sessions)
