"""`stallscan show`: a session's timeline with the stall and boundary flags on the right rows."""
from __future__ import annotations

import pytest

from stallscan.errors import StallscanError
from stallscan.ingest import ingest_paths
from stallscan.timeline import resolve_session, timeline
from tests.conftest import SAMPLES


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
