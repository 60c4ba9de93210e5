"""Ingest of the real Cline, Gemini CLI, Copilot CLI, OpenHands, SWE-agent, Hermes-trajectory and aider files
(../shared/data/real), checked against the raw files (plain json / text) and the figures of PROVENANCE.md.

Record counts are computed here from the raw files: JSONL lines, JSON-array elements, Gemini `messages`,
SWE-agent `history`, Markdown / input-history lines. PROVENANCE figures are hard-coded next to them.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect
from tests.helpers import memory_copy, real_root

REAL = real_root()
SUBS = ["cline", "gemini-cli", "copilot-cli", "openhands", "swe-agent", "hermes-trajectory", "aider"]

pytestmark = pytest.mark.skipif(
    not all((REAL / s).is_dir() for s in SUBS),
    reason=f"real transcripts not found at {REAL} (cline, gemini-cli, ... folders)",
)


def raw_records(p: Path) -> int:
    """Records of a file, counted with plain Python."""
    data = p.read_bytes()
    if p.suffix in (".json", ".traj"):
        doc = json.loads(data)
        if isinstance(doc, list):
            return len(doc)
        return len(doc["history"]) if "history" in doc else len(doc["messages"])
    n = data.count(b"\n")
    return n + (1 if data and not data.endswith(b"\n") else 0)


def all_files() -> list[Path]:
    out = []
    for s in SUBS:
        out += [p for p in sorted((REAL / s).rglob("*")) if p.is_file()]
    return out


@pytest.fixture(scope="module")
def db():
    con = connect(":memory:")
    res = ingest_paths(con, [str(REAL / s) for s in SUBS])
    yield con.cursor(), res
    con.close()


def rows(cur, sql, params=()):
    c = cur.execute(sql, list(params))
    cols = [d[0] for d in c.description]
    return [dict(zip(cols, r)) for r in c.fetchall()]


def ev(cur, path):
    out = rows(cur, "SELECT * FROM events WHERE file = ? ORDER BY line, part", [str(path)])
    for r in out:
        r["meta"] = json.loads(r["meta"]) if r["meta"] else {}
    return out


def test_every_file_recognised_and_conserved(db):
    cur, res = db
    assert res.unrecognized == [] and res.rejects == 0
    for p in all_files():
        f = rows(cur, "SELECT * FROM files WHERE path = ?", [str(p)])
        assert f, p
        f = f[0]
        assert f["n_lines"] == raw_records(p), p
        assert f["n_lines"] == f["n_event_lines"] + f["n_skipped"] + f["n_rejects"], p
        assert f["n_rejects"] == 0, p
        lines = {r["line"] for r in rows(cur, "SELECT line FROM skipped WHERE file = ?", [str(p)])}
        for e in ev(cur, p):
            assert (
                e["n_records"] == 0
                or not (set(range(e["line"], e["last_line"] + 1)) & lines)
                or e["n_records"] < e["last_line"] - e["line"] + 1
            )


def test_formats_detected(db):
    cur, _ = db
    got = {
        Path(r["path"]).relative_to(REAL).parts[0] + ":" + r["source_format"]
        for r in rows(cur, "SELECT path, source_format FROM files")
    }
    assert got == {
        "cline:cline_api",
        "gemini-cli:gemini_cli",
        "gemini-cli:gemini_cli_json",
        "copilot-cli:copilot_cli",
        "openhands:openhands",
        "swe-agent:swe_agent",
        "hermes-trajectory:hermes_traj",
        "aider:aider",
        "aider:aider_input",
    }


# --- Cline ------------------------------------------------------------------------------------------
def test_cline_messages_and_no_tool_nudges(db):
    cur, _ = db
    p = REAL / "cline/mike4567-MRA04242026/api_conversation_history.json"
    raw = json.loads(p.read_bytes())
    assert len(raw) == 443  # PROVENANCE §4
    events = ev(cur, p)
    assert [e["line"] for e in events] == list(range(1, 444))
    assert [e["role"] for e in events] == [m["role"] for m in raw]
    nudges = [
        i
        for i, m in enumerate(raw)
        if m["role"] == "user"
        and m["content"][0].get("text", "").startswith("[ERROR] You did not use a tool in your previous response!")
    ]
    assert nudges == [232, 246, 284, 304, 320, 398, 412]  # PROVENANCE [i], 0-based
    by_line = {e["line"]: e for e in events}
    for i in nudges:
        e, prev = by_line[i + 1], by_line[i]
        assert e["role"] == "user" and e["kind"] == "message" and e["meta"]["no_tool_error"]
        assert e["text"].startswith("[ERROR] You did not use a tool") and "<environment_details>" not in e["text"]
        assert prev["role"] == "assistant" and prev["n_tool_calls"] == 0
        gap = (e["ts"] - prev["ts_end"]).total_seconds()
        assert 0.64 <= gap <= 0.83
        assert gap == pytest.approx((raw[i]["ts"] - raw[i - 1]["ts"]) / 1000)
    resumptions = [e["line"] - 1 for e in events if e["meta"].get("task_resumption")]
    assert resumptions == [10, 14, 134, 148, 236, 262, 400, 434]
    assert events[0]["meta"]["has_task"] and events[-1]["meta"]["has_user_message"]
    results = [e for e in events if e["kind"] == "tool_result"]
    assert len(results) == sum(
        1 for m in raw if m["role"] == "user" and re.match(r"\[[^\n]*\] Result:", m["content"][0].get("text", ""))
    )
    assert all(e["tool_call_id"] for e in results)
    assert {e["session_id"] for e in events} == {"mike4567-MRA04242026"}
    calls = sum(1 for m in raw if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use")
    assert sum(e["n_tool_calls"] for e in events) == calls
    assert {e["model"] for e in events if e["role"] == "assistant"} == {"claude_4_5_opus"}


# --- Gemini -----------------------------------------------------------------------------------------
def test_gemini_duplicate_ids_collapse_and_continue_prompt(db):
    cur, _ = db
    p = REAL / "gemini-cli/mai0313-vibecodingtracker/gemini.jsonl"
    recs = [json.loads(line) for line in p.read_text().splitlines()]
    assert len(recs) == 28
    events = [e for e in ev(cur, p) if e["part"] == 0]
    ids: dict[Any, list[int]] = {}
    for n, r in enumerate(recs, 1):
        if "id" in r and "type" in r:
            ids.setdefault(r["id"], []).append(n)
    assert sorted((v[0], v[-1]) for v in ids.values() if len(v) > 1) == [(6, 8), (9, 11), (12, 14), (15, 17), (24, 26)]
    assert [(e["line"], e["last_line"], e["n_records"]) for e in events] == [
        (v[0], v[-1], len(v)) for v in sorted(ids.values())
    ]
    cont = next(e for e in events if e["text"] == "System: Please continue.")
    assert cont["line"] == 18 and cont["role"] == "user"
    prev = max((e for e in events if e["role"] == "assistant" and e["line"] < 18), key=lambda e: e["line"])
    assert round((cont["ts"] - prev["ts_end"]).total_seconds(), 1) == 13.8
    assert {e["session_id"] for e in events} == {recs[0]["sessionId"]}
    n_calls = sum(len(recs[v[-1] - 1].get("toolCalls") or []) for v in ids.values())
    assert sum(e["n_tool_calls"] for e in events) == n_calls
    assert sum(len(e["meta"]["tool_results"] or []) for e in events) == n_calls


def test_gemini_single_json(db):
    cur, _ = db
    p = next((REAL / "gemini-cli").rglob("*.json"))
    doc = json.loads(p.read_bytes())
    events = [e for e in ev(cur, p) if e["part"] == 0]
    assert len(events) == len(doc["messages"]) == 32
    assert [e["role"] for e in events] == ["user" if m["type"] == "user" else "assistant" for m in doc["messages"]]
    assert sum(e["n_tool_calls"] for e in events) == sum(len(m.get("toolCalls") or []) for m in doc["messages"])


# --- Copilot ----------------------------------------------------------------------------------------
def test_copilot_autopilot_nudge(db):
    cur, _ = db
    p = REAL / "copilot-cli/mai0313-vibecodingtracker/copilot.jsonl"
    recs = [json.loads(line) for line in p.read_text().splitlines()]
    events = ev(cur, p)
    users = [e for e in events if e["role"] == "user"]
    assert len(users) == sum(1 for r in recs if r["type"] == "user.message") == 2
    human, nudge = users
    assert human["meta"]["content_empty"] is False and human["text"] == recs[human["line"] - 1]["data"]["content"]
    assert nudge["meta"]["content_empty"] is True and nudge["meta"]["text_from"] == "transformedContent"
    assert nudge["text"].startswith("You have not yet marked the task as complete using the task_complete tool.")
    prev = max((e for e in events if e["role"] == "assistant" and e["line"] < nudge["line"]), key=lambda e: e["line"])
    assert prev["n_tool_calls"] == 0 and prev["text"]
    assert round((nudge["ts"] - prev["ts"]).total_seconds() * 1000) == 63
    assert nudge["turn_id"] != human["turn_id"]
    assert {e["session_id"] for e in events} == {recs[0]["data"]["sessionId"]}
    assert sum(e["n_tool_calls"] for e in events) == sum(
        len(r["data"].get("toolRequests") or []) for r in recs if r["type"] == "assistant.message"
    )


# --- OpenHands --------------------------------------------------------------------------------------
def test_openhands_user_messages_and_finish_reason(db):
    cur, _ = db
    want = {
        "basic.json": [0],
        "basic_gui_mode.json": [4],
        "basic_interactions.json": [0, 6, 12],
        "wrong_initial_state.json": [0],
    }
    for name, ids in want.items():
        p = REAL / "openhands/all-hands-ai-openhands" / name
        raw = json.loads(p.read_bytes())
        events = ev(cur, p)
        assert (
            [int(e["record_id"]) for e in events if e["role"] == "user"]
            == ids
            == [x["id"] for x in raw if x["source"] == "user" and x.get("action") == "message"]
        )
        for e in events:
            assert e["meta"]["ts_zone"] == "UTC" and e["meta"]["ts_naive"]
        for x in raw:
            mr = (x.get("tool_call_metadata") or {}).get("model_response")
            if x.get("action") and mr:
                e = next(e for e in events if e["message_id"] == mr["id"] and e["role"] == "assistant")
                assert e["finish_reason"] == mr["choices"][0]["finish_reason"] == "tool_calls"
    events = ev(cur, REAL / "openhands/all-hands-ai-openhands/basic_interactions.json")
    for rid, gap in ((6, 190.5), (12, 94.3)):
        i = next(k for k, e in enumerate(events) if e["record_id"] == str(rid))
        prev = events[i - 1]
        assert (prev["role"] == "assistant" and prev["meta"]["wait_for_response"] is True) or rid == 12
        assert round((events[i]["ts"] - prev["ts_end"]).total_seconds(), 1) == gap
    first = events[0]
    assert first["ts"] == datetime(2025, 2, 1, 0, 14, 10, 787622, tzinfo=UTC)


# --- SWE-agent --------------------------------------------------------------------------------------
def test_swe_agent_old_format_observations_as_user(db):
    cur, _ = db
    p = REAL / "swe-agent/swe-agent/pydicom__pydicom-1458.gpt4.traj"
    hist = json.loads(p.read_bytes())["history"]
    events = ev(cur, p)
    users = [e for e in events if e["role"] == "user"]
    assert len(users) == sum(1 for m in hist if m["role"] == "user") == 13  # PROVENANCE §8
    assert len([e for e in events if e["role"] == "assistant"]) == 12
    # the demonstration (is_demo) is context, the task is the one human message, every other is an observation
    assert [(e["line"], e["kind"]) for e in users[:2]] == [(2, "context"), (3, "message")]
    assert all(e["kind"] == "tool_result" and e["meta"]["observation_as_user"] for e in users[2:])
    assert all(e["ts"] is None and e["ts_quality"] == "none" for e in events)
    acts = [e for e in events if e["role"] == "assistant"]
    assert all(e["n_tool_calls"] == 1 and e["meta"]["action_from_text"] for e in acts)
    assert [e["tool_calls"][0]["arguments"] for e in acts] == [
        m["action"].rstrip("\n") for m in hist if m["role"] == "assistant"
    ]


def test_swe_agent_function_calling(db):
    cur, _ = db
    for name in ("function_calling_simple.traj", "marshmallow-code__marshmallow-1867.function_calling_replace.traj"):
        p = REAL / "swe-agent/swe-agent" / name
        hist = json.loads(p.read_bytes())["history"]
        events = ev(cur, p)
        assert [e["role"] for e in events] == [m["role"] for m in hist]
        assert [e["meta"]["message_type"] for e in events] == [m.get("message_type") for m in hist]
        tools = [e for e in events if e["role"] == "tool"]
        assert [e["tool_call_id"] for e in tools] == [m["tool_call_ids"][0] for m in hist if m["role"] == "tool"]
        assert sum(e["n_tool_calls"] for e in events) == sum(len(m.get("tool_calls") or []) for m in hist)


# --- Hermes trajectories ----------------------------------------------------------------------------
def test_hermes_trajectories(db):
    cur, _ = db
    for p in sorted((REAL / "hermes-trajectory").rglob("*.jsonl")):
        lines = [json.loads(x) for x in p.read_text().splitlines() if x.strip()]
        events = ev(cur, p)
        assert len(events) == sum(len(c["conversations"]) for c in lines)
        assert sum(e["n_records"] for e in events) == len(lines)
        assert all(e["ts_quality"] == "per_session" for e in events)
        calls = sum(t["value"].count("<tool_call>") for c in lines for t in c["conversations"] if t["from"] == "gpt")
        assert sum(e["n_tool_calls"] for e in events) == calls
        assert len({e["session_id"] for e in events}) == len(lines)
    failed = ev(cur, REAL / "hermes-trajectory/rohithbalasubramani-neurareport-v2/failed_trajectories.jsonl")
    assert [e["text"] for e in failed if e["role"] == "user"].count("Continue to finalize. Approve any warnings.") == 2
    last_gpt = [e for e in failed if e["role"] == "assistant"][-1]
    assert last_gpt["n_tool_calls"] == 0 and "file upload to trigger the state transition" in last_gpt["text"]
    assert last_gpt["meta"]["completed"] is False


# --- aider ------------------------------------------------------------------------------------------
def test_aider_prompts_reflections_and_input_times(db):
    cur, _ = db
    p = REAL / "aider/7onc3k-brejlator/.aider.chat.history.md"
    text = p.read_text(encoding="utf-8").splitlines()
    events = ev(cur, p)
    refl = [e for e in events if e["meta"].get("reflection")]
    assert [e["line"] for e in refl] == [68, 1591]  # PROVENANCE §10 (L68ff, L1591ff)
    assert all(e["role"] == "user" and e["kind"] == "message" for e in refl)
    assert "Just reply with fixed versions of the blocks above that failed to match." in refl[1]["text"]
    headers = [n for n, l in enumerate(text, 1) if l.startswith("# aider chat started at")]
    assert [e["line"] for e in events if e["meta"]["aider_block"] == "header"] == headers
    assert len({e["session_id"] for e in events}) == len(headers) == 10
    humans = [e for e in events if e["meta"]["aider_block"] == "human"]
    assert all(text[e["line"] - 1].startswith("####") for e in humans)
    paired = [e for e in humans if e["meta"]["input_paired"]]
    assert all(e["ts_quality"] == "per_message" for e in paired) and len(paired) >= 0.75 * len(humans)
    q = REAL / "aider/abdulalkawasmeh-metadata-aider/.aider.chat.history.md"
    inputs = (REAL / "aider/abdulalkawasmeh-metadata-aider/.aider.input.history").read_text().splitlines()
    stamps = {l[2:] for l in inputs if l.startswith("# 20")}
    humans = [e for e in ev(cur, q) if e["meta"]["aider_block"] == "human"]
    assert len(humans) == 12 and all(e["meta"]["input_paired"] for e in humans)
    assert all(e["ts"].strftime("%Y-%m-%d %H:%M:%S.%f") in stamps for e in humans)
    assert [e["ts"] for e in humans] == sorted(e["ts"] for e in humans)


def test_aider_input_pairing_is_deterministic():
    """Ingesting the aider files again (any thread count) gives the same events, row for row.

    Regression: the left-over prompts (paired by their first line as a prefix of an input entry) were
    ranked after the prompt x entry join, where one prompt has a row per candidate entry and those rows
    tie: the '/clear' + '/drop' run at line 155 got 14:39:21 in one run, 14:13:46 in another, and most
    '/clear ...' prompts of the session got no input time at all."""
    base = None
    for threads in (1, 2, 4, 8, 1, 2, 4, 8, 3, 6):
        con = connect(":memory:")
        con.execute(f"SET threads = {threads}")
        ingest_paths(con, [str(REAL / "aider")])
        got = con.execute("SELECT file, line, part, ts, e::VARCHAR FROM events e ORDER BY file, line, part").fetchall()
        con.close()
        if base is None:
            base = got
        else:
            diff = [(a, b) for a, b in zip(base, got) if a != b]
            assert len(got) == len(base) and not diff, (
                f"threads={threads}: (line, ts before, ts now) {[(a[1], str(a[3]), str(b[3])) for a, b in diff]}"
            )
    # and the pairing is the documented one, checked against the raw input history: in the session
    # started at line 1, the k-th prompt whose first line is /clear (none of them matches an entry by its
    # whole text) takes the k-th '/clear' entry typed in that session, so their times rise with the line
    p = REAL / "aider/7onc3k-brejlator/.aider.chat.history.md"
    text = p.read_text(encoding="utf-8").splitlines()
    head = [
        (n, datetime.fromisoformat(l[24:])) for n, l in enumerate(text, 1) if l.startswith("# aider chat started at ")
    ]
    (_, start), (next_line, end) = head[0], head[1]
    entries: list[list[Any]] = []
    cur: list[Any] | None = None
    for l in (p.parent / ".aider.input.history").read_text(encoding="utf-8").splitlines():
        if re.match(r"# \d{4}-\d\d-\d\d ", l):
            cur = [datetime.fromisoformat(l[2:]), ""]
            entries.append(cur)
        elif l.startswith("+") and cur is not None:
            cur[1] += l[1:]
    clears = [ts for ts, t in entries if start <= ts < end and t.strip() == "/clear"]
    con = connect(":memory:")
    ingest_paths(con, [str(REAL / "aider")])
    events = ev(con.cursor(), p)
    con.close()
    prompts = [
        e
        for e in events
        if e["meta"]["aider_block"] == "human" and e["line"] < next_line and e["text"].startswith("/clear")
    ]
    assert [e["line"] for e in prompts] == [155, 1206, 1388, 1746, 2283]
    assert prompts[0]["text"] == "/clear\n\n/drop"
    assert all(e["meta"]["input_paired"] for e in prompts)
    assert [e["ts"].replace(tzinfo=None) for e in prompts] == clears
    assert prompts[0]["ts"].replace(tzinfo=None) == datetime(2024, 8, 20, 14, 13, 46, 441946)


def test_mixed_folder_one_command(real_ingested_file):
    """All real formats (and the Claude/Codex/Hermes-session ones) in one folder: one ingest (the run's
    `stallscan ingest REAL`, real_ingested_file, read from a copy)."""
    dst = REAL
    con = memory_copy(real_ingested_file)
    cur = con.cursor()
    one = lambda q: cur.execute(q).fetchone()[0]
    assert one("SELECT count(*) FROM rejects") == one("SELECT coalesce(sum(n_rejects), 0) FROM files") == 0
    assert one("SELECT count(*) FROM files WHERE status = 'unrecognized'") == 0  # (the result's unrecognized list)
    files = [
        p for p in dst.rglob("*") if (p.is_file() and p.suffix != ".md") or p.name.endswith(".aider.chat.history.md")
    ]
    files = [p for p in files if p.name not in ("PROVENANCE.md", "README.md", "NOTES.md")]
    for p in files:
        f = rows(cur, "SELECT n_lines, n_event_lines, n_skipped, n_rejects, status FROM files WHERE path = ?", [str(p)])
        assert f, p
        f = f[0]
        assert f["n_rejects"] == 0 and f["n_lines"] == f["n_event_lines"] + f["n_skipped"] + f["n_rejects"], p
        if p.stat().st_size and any(s in str(p) for s in SUBS):
            assert f["n_lines"] == raw_records(p), p
    assert {
        r[0] for r in cur.execute("SELECT DISTINCT source_format FROM files WHERE source_format IS NOT NULL").fetchall()
    } >= {
        "cline_api",
        "gemini_cli",
        "gemini_cli_json",
        "copilot_cli",
        "openhands",
        "swe_agent",
        "hermes_traj",
        "aider",
        "aider_input",
        "claude_code",
        "codex",
        "openai_chat",
    }
    con.close()


def test_every_real_line_is_an_event_a_skip_or_a_reject(real_ingested_file):
    """The whole real corpus, every format at once (the run's `stallscan ingest REAL`, real_ingested_file, read
    from a copy): per file, lines on disk (or a document's records) = event lines + skipped + rejects, and
    every table row belongs to a files row (tests/hostile.py)."""
    from tests.hostile import accounting_errors

    con = memory_copy(real_ingested_file)
    assert accounting_errors(con) == []
    n_lines, n_ev, n_sk, n_rj = con.execute(
        "SELECT sum(n_lines), sum(n_event_lines), sum(n_skipped), sum(n_rejects) FROM files"
    ).fetchone()
    assert n_lines == n_ev + n_sk + n_rj and n_ev > 0
    con.close()
