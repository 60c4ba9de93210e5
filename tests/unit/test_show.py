"""`stallscan show`: a session's timeline with the stall and boundary flags on the right rows."""

from __future__ import annotations

import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.report.timeline import resolve_session, timeline
from stallscan.store.errors import StallscanError
from tests.helpers import SAMPLES


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
