"""`stallscan show`: a session's timeline with the stall and boundary flags on the right rows."""

from __future__ import annotations

import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.report.timeline import resolve_session, timeline
from stallscan.store.errors import StallscanError
from tests.helpers import GOLDEN, SAMPLES


def test_timeline_marks_stalls_and_decisions(con):
    ingest_paths(con, [str(SAMPLES / "hermes")])
    sid, rows = timeline(con, "narration_nudged")
    assert sid == "narration_nudged_exhausted"
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    stalls = [(r["line"], r["round_kind"], r["stall_index"]) for r in rows if r["stall_index"]]
    assert [s[:2] for s in stalls][:3] == [(3, "dropped_tool_call"), (5, "dropped_tool_call"), (7, "dropped_tool_call")]
    nudges = [r for r in rows if r["line"] in (4, 6, 8)]
    assert all(r["origin"] == "automatic" and r["decision"] == "continuation" for r in nudges)
    human = next(r for r in rows if r["line"] == 10)
    assert human["origin"] == "human" and human["gap_s"] == 40.0


def test_unknown_and_ambiguous_sessions(con):
    ingest_paths(con, [str(SAMPLES / "hermes")])
    with pytest.raises(StallscanError, match="no session"):
        resolve_session(con, "zzz")
    with pytest.raises(StallscanError, match="matches several sessions"):
        resolve_session(con, "narration_")


def test_excerpts_mask_secrets(con, tmp_path):
    import json

    key = "sk-proj-" + "a1B2c3D4e5" * 5
    lines = [
        {"role": "user", "content": f"use OPENAI_API_KEY={key} please", "timestamp": "2026-01-01T00:00:00Z"},
        {"role": "assistant", "content": "ok", "finish_reason": "stop", "timestamp": "2026-01-01T00:00:05Z"},
    ]
    f = tmp_path / "secret.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    ingest_paths(con, [str(f)])
    _, rows = timeline(con, "secret")
    assert key not in rows[0]["excerpt"] and "REDACTED" in rows[0]["excerpt"]


def _plain_rows(n: int, flagged_at: tuple[int, ...]) -> list[dict]:
    return [
        {"seq": i, "error": "human_as_auto" if i in flagged_at else "none", "stall_outcome": None}
        for i in range(1, n + 1)
    ]


def test_flagged_keeps_a_little_context_and_says_what_it_left_out():
    """Issue 23 item 5: `show --flagged` prints the flagged events with 3 either side, and every gap says
    how many events it left out; `--around SEQ` narrows it to one example's window."""
    from stallscan.report.timeline import focus

    rows = _plain_rows(40, (10, 12, 30))
    got = focus(rows, flagged_only=True)
    assert [r["seq"] for r in got] == [*range(7, 16), *range(27, 34)]
    assert [r.get("skipped_before") for r in got if r.get("skipped_before")] == [6, 11]
    assert got[-1]["skipped_after"] == 7
    one = focus(rows, flagged_only=True, around=30)
    assert [r["seq"] for r in one] == list(range(27, 34)) and one[0]["skipped_before"] == 26
    with pytest.raises(StallscanError, match="no event with seq 99"):
        focus(rows, around=99)
    assert focus(rows) == rows


def test_timeline_says_the_truth_with_its_envelope(con):
    """Issue 23 item 2: Cline's "[TASK RESUMPTION]" text after the person resumed the task is a human action
    in an automatic envelope: Cline writes the text when a person re-opens the task (tests/golden/cline_ui/both)."""
    ingest_paths(con, [str(GOLDEN / "cline_ui" / "both")])
    sid = con.execute("SELECT any_value(session_id) FROM events").fetchone()[0]
    _, rows = timeline(con, sid)
    resumed = [r for r in rows if (r["excerpt"] or "").startswith("[TASK RESUMPTION]")]
    assert resumed
    for r in resumed:
        assert r["origin"] == "automatic"
        assert (r["truth"], r["truth_note"]) == ("human", "human action in an automatic envelope")
    assert {r["truth"] for r in rows if r["role"] == "user"} <= {"human", "automatic", "tool result"}
