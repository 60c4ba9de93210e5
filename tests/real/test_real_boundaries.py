"""Origin labels and the replayed turn-boundary decision on the real transcripts.

Every expected value is copied from PROVENANCE.md / hermes-session/NOTES.md / modeling.md (line numbers,
counts, gaps), never computed by the code under test. The SQL decision must also agree with the
plain-Python reference (stallscan.boundaries_ref) on every real file."""

from __future__ import annotations

import pytest

from stallscan.ingest import detect
from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.labels import label_events
from tests.replay_checks import reference_mismatches

CC = "claude-code/"


@pytest.fixture(scope="module")
def tb(db):
    label_events(db.con, config={})
    replay_boundaries(db.con, 2.0)
    return db


def rows(tb, rel: str) -> dict[int, dict]:
    """{line: turn_boundaries row + event columns} for one real file (user-role events)."""
    cur = tb.con.execute(
        "SELECT e.line, e.last_line, e.kind, e.text, t.* FROM turn_boundaries t JOIN events e USING (event_id) "
        "WHERE e.file = ? ORDER BY e.line",
        [str(tb.root / rel)],
    )
    cols = [d[0] for d in cur.description]
    return {r[0]: dict(zip(cols, r)) for r in cur.fetchall()}


def test_sql_agrees_with_reference_on_every_real_file(tb):
    assert reference_mismatches(tb.con, 2.0) == []


def test_every_user_role_event_labelled_once(tb):
    n = tb.con.execute("SELECT count(*) FROM events WHERE role IN ('user', 'tool')").fetchall()[0][0]
    assert tb.con.execute("SELECT count(*), count(DISTINCT event_id) FROM user_labels").fetchall()[0] == (n, n)
    assert tb.con.execute("SELECT count(*) FROM turn_boundaries").fetchall()[0][0] == n


# ---- Claude Code: claude-reliability stop hooks (PROVENANCE §2b) ----------------------------------
@pytest.mark.parametrize(
    "name,line,gap",
    [
        ("hello-world-script", 8, 0.030),
        ("stop-hook-reflection-first-stop", 13, 0.031),
        ("python-to-rust-port", 87, 0.422),
    ],
)
def test_stop_hook_feedback_is_automatic_and_fast(tb, name, line, gap):
    r = rows(tb, f"{CC}drmaciver-claude-reliability/{name}/transcript.jsonl")
    hook = r[line]
    assert (hook["origin"], hook["origin_rule"], hook["starts_request"]) == (
        "automatic",
        "claude.stop_hook_feedback",
        True,
    )
    assert hook["prev_reply_status"] == "final" and hook["gap_s"] == pytest.approx(gap, abs=0.002)
    assert (hook["decided_by"], hook["decision"], hook["error"]) == ("gap", "continuation", "none")
    assert r[2]["origin"] == "human"  # the scripted prompt is the session's human request
    assert [l for l, x in r.items() if x["origin"] == "automatic"] == [line]


@pytest.mark.parametrize("name", ["stop-hook-fast-path-clean", "stop-hook-reflection-second-stop"])
def test_no_hook_feedback_when_the_hook_allowed_the_stop(tb, name):
    r = rows(tb, f"{CC}drmaciver-claude-reliability/{name}/transcript.jsonl")
    assert {x["origin"] for x in r.values() if x["kind"] != "tool_result"} == {"human"}


# ---- Claude Code: marot/spotter (PROVENANCE §2a) -------------------------------------------------
def test_spotter_short_and_tool_heavy(tb):
    r = rows(tb, f"{CC}marot-spotter/short.jsonl")
    assert r[4]["origin"] == "human"
    assert (r[13]["origin"], r[13]["starts_request"]) == ("automatic", False)  # interrupt marker
    r = rows(tb, f"{CC}marot-spotter/tool_heavy.jsonl")
    assert r[4]["origin"] == r[26]["origin"] == "human"
    assert r[26]["gap_s"] == pytest.approx(80, abs=1)
    assert r[20]["origin_rule"] == "claude.local_command_caveat" and r[20]["origin"] == "automatic"
    assert r[21]["origin_rule"] == "claude.command_echo" and r[21]["origin"] == "human"
    assert r[22]["origin_rule"] == "claude.local_command_output" and r[22]["origin"] == "automatic"
    for line in (18, 39, 20, 21, 22):
        assert r[line]["starts_request"] is False, line


def test_spotter_slash_command_and_expansion(tb):
    r = rows(tb, f"{CC}marot-spotter/subagent.jsonl")
    assert (r[4]["origin"], r[4]["origin_rule"]) == ("human", "claude.command_echo")
    assert (r[5]["origin"], r[5]["origin_rule"], r[5]["starts_request"]) == (
        "automatic",
        "claude.command_expansion",
        True,
    )
    assert r[69]["origin_rule"] == "claude.interrupt_marker"
    assert r[71]["origin"] == "human" and r[71]["gap_s"] == pytest.approx(115, abs=1)


def test_spotter_long_session(tb):
    r = rows(tb, f"{CC}marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    assert r[5]["origin"] == r[1858]["origin"] == "human"
    assert r[1858]["gap_s"] == pytest.approx(572, abs=1)
    assert r[495]["origin_rule"] == "claude.interrupt_marker"
    for line in (496, 1847):
        assert (r[line]["origin"], r[line]["origin_rule"]) == ("automatic", "claude.task_notification")
    assert r[1847]["gap_s"] == pytest.approx(1.0, abs=0.05)
    assert r[1847]["decision"] == "continuation"  # fast automatic prompt: the gap rule gets it right
    # auto-compaction (L1256 boundary, trigger auto): the summary starts a request, the model carries on at L1261
    assert (r[1257]["origin"], r[1257]["origin_rule"], r[1257]["starts_request"]) == (
        "automatic",
        "claude.compact_summary.after_auto_compaction",
        True,
    )
    # typed while the agent worked: human, never a user line of their own (the fast humans)
    for line in (497, 603):
        assert (r[line]["kind"], r[line]["origin"], r[line]["starts_request"]) == ("queued_input", "human", True)
        assert r[line]["error"] == "human_as_auto"
    # enqueued task notifications later written as user lines are copies, not requests
    for line in (280, 520):
        assert (r[line]["origin"], r[line]["starts_request"]) == ("automatic", False)


# ---- Claude Code: kfischer (PROVENANCE §2c) and VibeCodingTracker (§2d) --------------------------
def test_kfischer_project(tb):
    base = f"{CC}kfischer-claude-history/-Users-user-project/"
    r = rows(tb, base + "b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl")
    human = [l for l, x in r.items() if x["origin"] == "human" and x["kind"] == "message"]
    assert human == [2, 11, 21, 28, 35, 43, 50, 55, 58]
    assert r[50]["gap_s"] == pytest.approx(1064, abs=1)
    assert r[56]["origin_rule"] == "claude.interrupt_marker"
    warm = tb.con.execute(
        "SELECT count(*), count(*) FILTER (WHERE l.origin = 'automatic' AND l.origin_rule = 'claude.warmup') "
        "FROM events e JOIN user_labels l USING (event_id) WHERE e.file LIKE ? AND e.text = 'Warmup'",
        [str(tb.root / base) + "/agent-a%"],
    ).fetchall()[0]
    assert warm == (18, 18)
    r = rows(tb, base + "0d3b22c1-ba90-4fd3-b8d2-056ffc626725.jsonl")
    assert (r[2]["origin_rule"], r[3]["origin_rule"]) == ("claude.local_command_caveat", "claude.command_echo")
    r = rows(tb, base + "agent-a434715.jsonl")
    assert (r[1]["origin"], r[1]["origin_rule"]) == ("automatic", "claude.sidechain_task_prompt")


def test_vibecodingtracker_claude(tb):
    r = rows(tb, f"{CC}mai0313-vibecodingtracker/claude_code.jsonl")
    assert [l for l, x in r.items() if x["origin_rule"] == "default_human"] == [1, 21, 54, 64]
    assert r[20]["origin_rule"] == r[63]["origin_rule"] == "claude.interrupt_marker"
    for a, b, c in ((51, 52, 53), (82, 83, 84)):
        assert [r[l]["origin_rule"] for l in (a, b, c)] == [
            "claude.local_command_caveat",
            "claude.command_echo",
            "claude.local_command_output",
        ]
        assert not any(r[l]["starts_request"] for l in (a, b, c))
    for line in (21, 54, 64):
        assert 28 <= r[line]["gap_s"] <= 52, line


# ---- Claude Code second batch: per-file counts (PROVENANCE §12) ---------------------------------
SECOND_BATCH = {
    "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__35_00b4613672_2_full.jsonl": (41, 11),
    "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__09_cb2aeecea3_2_full.jsonl": (34, 9),
    "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__5f_b95c04a965_1_full.jsonl": (38, 0),
    "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__07_d253ca52d8_2_full.jsonl": (22, 0),
    "yashpunmiya-Solsmile/claude-session.jsonl": (5, 7),
    "Sarthib7-FundWise/claude-session.jsonl": (3, 0),
}


@pytest.mark.parametrize("rel", sorted(SECOND_BATCH))
def test_second_batch_counts(tb, rel):
    """'user lines that are not tool results: human prompts N; harness-written M' (slash-command echoes
    are harness-written there; here they are human records that start no request)."""
    r = rows(tb, CC + rel)
    lines = [x for x in r.values() if x["kind"] == "message"]
    human = sum(1 for x in lines if x["origin"] == "human" and x["origin_rule"] != "claude.command_echo")
    assert (human, len(lines) - human) == SECOND_BATCH[rel]


def test_claude_typed_prompts_are_never_faster_than_the_threshold(tb):
    """modeling.md §4: after a final reply no typed prompt came faster than 3.9 s (plain prompts 4.7 s)."""
    fastest = tb.con.execute(
        "SELECT min(gap_s) FROM turn_boundaries WHERE source_format = 'claude_code' AND prev_reply_status = 'final' "
        "AND origin = 'human' AND starts_request AND kind = 'message'"
    ).fetchall()[0][0]
    assert fastest == pytest.approx(4.7, abs=0.05)


# ---- Codex (PROVENANCE §3, §12) -----------------------------------------------------------------
CODEX = {  # file: (human prompts, harness-written user-role items)
    "Krosss0001-rave-era-project/codex-session.jsonl": (7, 2),
    "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__5f_b95c04a965_0_full.jsonl": (19, 1),
    "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__bf_8e29b5ca2e_0_full.jsonl": (30, 3),
    "kunalcode12-openclaw_agent/codex-session.jsonl": (2, 1),
    "yashpunmiya-Solsmile/codex-session.jsonl": (2, 3),
    "pinouchon-rtchess/019aad50-a7e6-7422-b7a8-0b384290624f_rtchess_1.jsonl": (54, 1),
    "mai0313-vibecodingtracker/codex.jsonl": (1, 1),
}


@pytest.mark.parametrize("rel", sorted(CODEX))
def test_codex_counts(tb, rel):
    r = rows(tb, "codex/" + rel)
    human = sum(1 for x in r.values() if x["origin"] == "human")
    auto = sum(1 for x in r.values() if x["origin"] == "automatic")
    assert (human, auto) == CODEX[rel]
    assert all(not x["starts_request"] for x in r.values() if x["origin"] == "automatic")


def test_codex_fast_humans(tb):
    r = rows(tb, "codex/pinouchon-rtchess/019aad50-a7e6-7422-b7a8-0b384290624f_rtchess_1.jsonl")
    undo = next(x for x in r.values() if 1097 in (x["line"], x["last_line"]))
    assert undo["origin"] == "human" and 3.5 < undo["gap_s"] < 4.0 and undo["decision"] == "human"
    assert min(x["gap_s"] for x in r.values() if x["origin"] == "human" and x["gap_s"] is not None) > 3.5
    # prompts typed while the agent worked arrive < 1 s after the reply: human, read as continuation
    r = rows(tb, "codex/blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__bf_8e29b5ca2e_0_full.jsonl")
    fast = [x for x in r.values() if x["gap_s"] is not None and x["gap_s"] < 2 and x["origin"] == "human"]
    assert len(fast) == 2 and all(x["error"] == "human_as_auto" for x in fast)
    r = rows(tb, "codex/yashpunmiya-Solsmile/codex-session.jsonl")
    assert r[23]["origin_rule"] == "codex.turn_aborted" and r[31]["origin"] == "human"


# ---- Hermes session logs (hermes-session/NOTES.md) ------------------------------------------------
def test_hermes_sessions(tb):
    r = rows(tb, "hermes-session/NousResearch-hermes-agent/20260421_055527_49457147.jsonl")
    users = {l: x for l, x in r.items() if x["role"] == "user"}
    assert sorted(users) == [1, 3, 5, 7, 71, 73]
    assert (users[71]["origin"], users[71]["origin_rule"]) == ("automatic", "hermes.background_process")
    assert all(users[l]["origin"] == "human" for l in (1, 3, 5, 7, 73))
    # per-flush timestamps (one per turn): no gap is trusted, the rules without time decide
    assert all(x["gap_s"] is None for x in r.values())
    assert users[71]["decided_by"] == "no_time" and users[71]["error"] == "auto_as_human"
    r = rows(tb, "hermes-session/NousResearch-hermes-agent/20260422_005427_557b5676.jsonl")
    assert [l for l, x in r.items() if x["role"] == "user" and x["origin"] == "human"] == [2, 6, 10, 14]


# ---- other formats: asserted once they are registered ---------------------------
def _need(fmt_prefix: str):
    if not any(f.startswith(fmt_prefix) for f in detect.FORMATS):
        pytest.skip(f"no {fmt_prefix}* format registered yet")


def _ingest_one(tmp_path, rel):
    from tests.helpers import real_root
    from tests.real.helpers import ingest_dirs

    path = real_root() / rel
    if not path.exists():
        pytest.skip(f"{rel} not present")
    con, _ = ingest_dirs([path])
    label_events(con, config={})
    replay_boundaries(con, 2.0)
    return con


def _labelled(con):
    cur = con.execute(
        "SELECT e.line, e.role, e.kind, e.text, t.* FROM turn_boundaries t JOIN events e USING (event_id) "
        "ORDER BY e.line, e.part"
    )
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def test_cline_no_tool_nudges(tmp_path):
    _need("cline")
    con = _ingest_one(tmp_path, "cline/mike4567-MRA04242026/api_conversation_history.json")
    got = [x for x in _labelled(con) if (x["text"] or "").lstrip().startswith("[ERROR] You did not use a tool")]
    assert len(got) == 7 and all(x["origin"] == "automatic" for x in got)  # PROVENANCE §4
    assert all(0.6 < x["gap_s"] < 0.9 for x in got if x["gap_s"] is not None)
    resumptions = [x for x in _labelled(con) if (x["text"] or "").lstrip().startswith("[TASK RESUMPTION]")]
    assert len(resumptions) == 8 and all(x["origin"] == "automatic" and x["human_content"] for x in resumptions)
    assert reference_mismatches(con, 2.0) == []


def test_gemini_please_continue(tmp_path):
    _need("gemini")
    con = _ingest_one(tmp_path, "gemini-cli/mai0313-vibecodingtracker/gemini.jsonl")
    got = [x for x in _labelled(con) if (x["text"] or "").strip() == "System: Please continue."]
    assert len(got) == 1 and got[0]["origin"] == "automatic"  # PROVENANCE §5
    assert got[0]["gap_s"] == pytest.approx(13.8, abs=0.1)
    # a > 2 s automatic prompt: the gap rule alone calls it a person
    assert got[0]["gap_only_decision"] == "human" and got[0]["gap_only_error"] == "auto_as_human"
    assert reference_mismatches(con, 2.0) == []


def test_copilot_autopilot_nudge(tmp_path):
    _need("copilot")
    con = _ingest_one(tmp_path, "copilot-cli/mai0313-vibecodingtracker/copilot.jsonl")
    users = [x for x in _labelled(con) if x["role"] == "user" and x["kind"] != "tool_result"]
    assert [x["origin"] for x in users] == ["human", "automatic"]  # PROVENANCE §6
    assert users[1]["gap_s"] == pytest.approx(0.063, abs=0.005)
    assert reference_mismatches(con, 2.0) == []


def test_swe_agent_observations(tmp_path):
    _need("swe")
    con = _ingest_one(tmp_path, "swe-agent/swe-agent/pydicom__pydicom-1458.gpt4.traj")
    users = [x for x in _labelled(con) if x["role"] == "user"]
    assert len(users) == 13  # PROVENANCE §8
    human = [x for x in users if x["origin"] == "human"]
    assert len(human) == 1 and human[0]["text"].startswith("We're currently solving the following issue")
    assert reference_mismatches(con, 2.0) == []
