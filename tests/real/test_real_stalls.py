"""Stall replay on the real transcripts.

Expected values come from the files themselves (raw JSON read with plain `json`) and from PROVENANCE.md /
hermes-session/NOTES.md, never from stallscan. Formats another issue adds (cline_api, hermes_traj,
copilot_cli, gemini_cli) are tested only when stallscan.detect.FORMATS has them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest

from stallscan.ingest.detect import FORMATS
from stallscan.replay.stalls import replay_stalls
from stallscan.replay.stalls_agreement import disagreements

MODES = ["fallback", "labels"]


@pytest.fixture(scope="module")
def replayed(db):
    replay_stalls(db.con, segmentation="fallback")
    return db


def _rows(con, q, params=None):
    cur = con.execute(q, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def _by_line(con, path):
    return {
        r["line"]: r
        for r in _rows(
            con,
            "SELECT e.line, r.*, s.outcome, s.stall_index, s.nudged FROM rounds r "
            "JOIN events e USING (event_id) LEFT JOIN stalls s USING (event_id) "
            "WHERE e.file = ?",
            [str(path)],
        )
    }


@pytest.mark.parametrize("mode", MODES)
def test_reference_walk_agrees_with_sql_on_every_real_file(db, mode):
    replay_stalls(db.con, segmentation=mode)
    assert disagreements(db.con, limit=50) == []


def test_hermes_sessions_have_no_dropped_tool_calls(replayed, h):
    """NOTES.md: 0 dropped tool calls in both files; every finish tool_calls carries calls (28 + 20), and
    the stop / absent finishes (file 1 lines 2, 4, 6, 70, 72, 87; file 2 lines 5, 9, 13, 49) are answers.
    The Korean finals after tool rounds (file 1 L70, L87; file 2 L49) end by offering more work
    ('원하시면 … 드리겠습니다' = 'if you want, I will …'): a hand-off to the user, not a plan-as-answer."""
    files = {p.name: p for p in h.real_files("hermes-session")}
    expect = {
        "20260421_055527_49457147.jsonl": (28, {2, 4, 6, 70, 72, 87}),
        "20260422_005427_557b5676.jsonl": (20, {5, 9, 13, 49}),
    }
    for name, (n_tool, finals) in expect.items():
        rounds = _by_line(replayed.con, files[name])
        raw = {i: rec for i, rec in h.read_jsonl(files[name]) if rec and rec.get("role") == "assistant"}
        assert set(rounds) == set(raw)
        assert sum(1 for r in rounds.values() if r["round_kind"] == "tool_round") == n_tool
        assert {line for line, r in rounds.items() if r["round_kind"] == "final"} == finals
        assert not any(r["round_kind"] == "dropped_tool_call" for r in rounds.values())
        assert all(r["outcome"] is None for r in rounds.values()), "no stall in the real Hermes sessions"


def test_claude_code_dropped_calls_match_stop_reason(replayed, h):
    """A Claude reply (lines merged by message.id) is a dropped call iff its stop_reason is tool_use and no
    line of it carries a tool_use block (formats.md §1, §11)."""
    want, got = 0, 0
    for path in h.real_files("claude-code"):
        replies: defaultdict[str, dict[str, Any]] = defaultdict(lambda: {"stop": None, "calls": 0, "text": False})
        for i, rec in h.read_jsonl(path):
            if not rec or rec.get("type") != "assistant":
                continue
            msg = rec.get("message") or {}
            r = replies[msg.get("id") or f"line:{i}"]
            r["stop"] = msg.get("stop_reason") or r["stop"]
            blocks = msg.get("content") if isinstance(msg.get("content"), list) else []
            r["calls"] += sum(1 for b in blocks if b.get("type") == "tool_use")
            r["text"] |= any(b.get("type") == "text" and (b.get("text") or "").strip() for b in blocks)
        want += sum(1 for r in replies.values() if r["stop"] == "tool_use" and r["calls"] == 0 and r["text"])
        got += sum(1 for r in _by_line(replayed.con, path).values() if r["round_kind"] == "dropped_tool_call")
    assert got == want


# Claude Code finals a person answered that are flagged, each checked by hand (empty: none is flagged).
# A flagged one must announce an action after a tool round; add it here with the reason.
JUSTIFIED_CLAUDE_FLAGS: dict[tuple[str, int], str] = {}


def test_no_claude_code_human_answered_final_is_flagged(replayed):
    rows = _rows(
        replayed.con,
        """
        SELECT e.file, e.line, r.round_kind, r.signature, r.after_tool_round, r.excerpt
        FROM rounds r JOIN events e USING (event_id)
        WHERE r.source_format = 'claude_code' AND r.round_kind IN ('narrated_intent', 'no_tool', 'dropped_tool_call')""",
    )
    for r in rows:
        assert r["round_kind"] == "narrated_intent" and r["after_tool_round"], r
        key = (r["file"].rsplit("/", 1)[-1], r["line"])
        assert key in JUSTIFIED_CLAUDE_FLAGS, f"unjustified flag {key}: {r['excerpt']!r}"


def test_codex_commentary_without_a_call_is_the_only_dropped_kind(replayed, h):
    """Codex logs no finish reason: a response whose assistant message says `phase: commentary` (more to
    come) but which makes no call (*_call item) before the next input (a user message, a tool output, or
    the end of the turn) is the dropped-call analogue. Counted from the raw rollouts."""
    got = _rows(
        replayed.con,
        "SELECT count(*) AS n FROM rounds WHERE source_format = 'codex' AND round_kind = 'dropped_tool_call'",
    )[0]["n"]
    want = 0
    for path in h.real_files("codex"):
        phase, calls = None, 0
        for _, rec in h.read_jsonl(path) + [(0, {"type": "end"})]:
            if not rec:
                continue
            p = rec.get("payload") or {}
            t, pt = rec.get("type"), p.get("type") or ""
            if t == "response_item" and pt == "message" and p.get("role") == "assistant":
                phase = p.get("phase")
            elif t == "response_item" and pt.endswith("_call"):
                calls += 1
            elif (
                (t == "response_item" and (pt.endswith("_output") or (pt == "message" and p.get("role") == "user")))
                or (t == "event_msg" and pt in ("task_complete", "turn_aborted", "user_message"))
                or t == "end"
            ):
                want += phase == "commentary" and calls == 0
                phase, calls = None, 0
    assert got == want


def _ingest_one(sub: str, fmt: str, h):
    if fmt not in FORMATS:
        pytest.skip(f"format {fmt} not available yet")
    from stallscan.ingest.run import ingest_paths
    from stallscan.store.db import connect

    root = h.real_files.__globals__["real_root"]() / sub
    if not root.is_dir():
        pytest.skip(f"{root} absent")
    con = connect(":memory:")
    ingest_paths(con, [str(root)])
    replay_stalls(con)
    return con


def test_cline_no_tool_rounds_are_the_seven_nudged_stalls(h):
    """PROVENANCE §4: 7 x '[ERROR] You did not use a tool…' at [232] [246] [284] [304] [320] [398] [412],
    each after a text-only assistant message [231] … [411] (0-based; line = index + 1). Each is a stall of
    kind no_tool or narrated, nudged by Cline's nudge; what follows each ([233] …) is a tool_use message."""
    con = _ingest_one("cline", "cline_api", h)
    path = next(p for p in (h.real_files.__globals__["real_root"]() / "cline").rglob("api_conversation_history.json"))
    raw = json.loads(path.read_text(encoding="utf-8"))
    nudge_at = [
        i
        for i, m in enumerate(raw)
        if m["role"] == "user"
        and any(
            (b.get("text") or "").startswith("[ERROR] You did not use a tool")
            for b in m["content"]
            if isinstance(b, dict)
        )
    ]
    assert nudge_at == [232, 246, 284, 304, 320, 398, 412]
    stalls = {
        r["line"]: r
        for r in _rows(
            con, "SELECT e.line, s.* FROM stalls s JOIN events e USING (event_id) WHERE e.source_format = 'cline_api'"
        )
    }
    expected_lines = {i - 1 + 1 for i in nudge_at}  # the assistant message before each nudge, 1-based
    assert set(stalls) == expected_lines
    for line, s in stalls.items():
        recovered = any(b.get("type") == "tool_use" for b in raw[line + 1]["content"])  # raw[line+1] = [i+1]
        assert s["round_kind"] in ("no_tool", "narrated_intent")
        assert s["nudged"] and s["nudge_id"] == "cline.no_tools_used"
        assert s["outcome"] == ("recovered" if recovered else "exhausted")
    con.close()


def test_hermes_failed_trajectory_ends_on_a_request_to_the_user(h):
    """PROVENANCE §9: failed_trajectories.jsonl (completed: false) ends with a gpt turn that has no
    <tool_call>, after tool rounds. Read by hand (tests/truth/intent_labels.csv) it is a hand-off, not a
    plan-as-answer: out of iterations, the model asks the user to re-upload the PDF and promises the next
    steps only once that is done ('Please **re-upload the PDF file** ... Once uploaded, I'll be able to:').
    A conditional promise and a request to the user veto the narrated-intent rule."""
    con = _ingest_one("hermes-trajectory", "hermes_traj", h)
    path = h.real_files.__globals__["real_root"]() / "hermes-trajectory/rohithbalasubramani-neurareport-v2"
    raw = json.loads((path / "failed_trajectories.jsonl").read_text(encoding="utf-8").splitlines()[0])
    last_gpt = [m for m in raw["conversations"] if m["from"] == "gpt"][-1]["value"]
    assert "<tool_call>" not in last_gpt and "re-upload" in last_gpt and "Once uploaded, I'll" in last_gpt
    rows = _rows(
        con,
        "SELECT r.round_kind, r.veto_hits, t.outcome FROM rounds r JOIN events e USING (event_id) "
        "JOIN turns t ON t.delivered_event_id = r.event_id "
        "WHERE e.file LIKE '%failed_trajectories.jsonl' ORDER BY r.seq DESC LIMIT 1",
    )
    assert rows and rows[0]["round_kind"] == "final" and rows[0]["outcome"] == "answered"
    assert "q_conditional_en" in rows[0]["veto_hits"]
    assert not _rows(con, "SELECT * FROM stalls s JOIN events e USING (event_id) WHERE e.file LIKE '%failed_traj%'")
    con.close()


def test_copilot_autopilot_nudge_follows_a_no_tool_stall(h):
    """PROVENANCE §6: the second user.message (content '' + autopilot transformedContent) comes 63 ms after
    an assistant.message with text and no toolRequests: the harness's own no-tool verdict."""
    con = _ingest_one("copilot-cli", "copilot_cli", h)
    rows = _rows(con, "SELECT * FROM stalls WHERE source_format = 'copilot_cli'")
    assert len(rows) == 1
    assert rows[0]["nudge_id"] == "copilot.autopilot_task_complete"
    assert rows[0]["round_kind"] in ("no_tool", "narrated_intent")
    con.close()


def test_gemini_please_continue_after_a_tool_round_is_no_stall(h):
    """PROVENANCE §5: 'System: Please continue.' (L18) follows the gemini record L15, which carries a tool
    call: Gemini continues after a function response (harness_logic.md §9), so no round stalled."""
    con = _ingest_one("gemini-cli/mai0313-vibecodingtracker", "gemini_cli", h)
    path = next((h.real_files.__globals__["real_root"]() / "gemini-cli/mai0313-vibecodingtracker").glob("*.jsonl"))
    recs = {i: r for i, r in h.read_jsonl(path) if r}
    rewrites = [r for r in recs.values() if r.get("id") == recs[15]["id"]]  # same id re-written: last wins
    assert rewrites[-1].get("toolCalls")
    rounds = _by_line(con, path)
    assert rounds[15]["round_kind"] == "tool_round"
    assert not any(r["outcome"] for r in rounds.values())
    con.close()
