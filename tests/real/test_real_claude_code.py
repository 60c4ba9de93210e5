"""Ingest of the real Claude Code transcripts (../shared/data/real/claude-code), checked against the raw files.

Expected values are recomputed here from each line's own markers (``type``, ``message.id``,
``operation``, ``isSidechain`` ...) with plain ``json``; figures documented in PROVENANCE.md §2/§12 and
formats.md §1 are hard-coded next to the computed ones, so both must agree with the ingest.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.real import helpers as _h

count_records, compare_rows, event_rows, fetch = _h.count_records, _h.compare_rows, _h.event_rows, _h.fetch
file_row, finish_norm, norm_text, parse_ts = _h.file_row, _h.finish_norm, _h.norm_text, _h.parse_ts
read_jsonl, same_arguments, skipped_by_kind = _h.read_jsonl, _h.same_arguments, _h.skipped_by_kind
skipped_lines = _h.skipped_lines


# --------------------------------------------------------------------------------------------------
# independent model of what the ingest must produce for one Claude Code file
# --------------------------------------------------------------------------------------------------
def _blocks_text(blocks) -> str | None:
    texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(texts) if texts else None


def _user_text(content):
    if isinstance(content, str):
        return content
    return _blocks_text(content)


def _tool_result_text(block):
    c = block.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return _blocks_text(c)
    return None


def _session_ids(o, file_sids):
    """Allowed session_id values for a record: sessionId, or sessionId/agentId for agent (sidechain) records."""
    agent = o.get("agentId")
    if agent:
        # schema.sql documents sessionId/agentId; sessionId/agent-<agentId> (the file stem) is tolerated here
        # and pinned down separately in test_agent_session_id_is_session_slash_agent_id
        return {f"{sid}/{a}" for sid in file_sids for a in (agent, f"agent-{agent}")}
    return {o.get("sessionId")}


def claude_model(path):
    """(expected events ordered by first line, {skipped line: its type}, event-line count)."""
    recs = read_jsonl(path)
    file_sids = {o.get("sessionId") for _, o in recs if o and o.get("sessionId")}
    events: list[Any] = []
    skipped: dict[int, Any] = {}
    by_msg: dict[str, Any] = {}
    event_lines = 0
    for ln, o in recs:
        assert o is not None, f"{path}:{ln} blank line (the real files have none)"
        t = o.get("type")
        if t == "assistant":
            event_lines += 1
            mid = o["message"]["id"]
            if mid in by_msg:
                by_msg[mid]["recs"].append((ln, o))
                continue
            ev = {"src": "assistant", "recs": [(ln, o)]}
            by_msg[mid] = ev
            events.append(ev)
        elif t in ("user", "system"):
            event_lines += 1
            events.append({"src": t, "recs": [(ln, o)]})
        elif t == "queue-operation" and o.get("operation") == "enqueue":
            event_lines += 1
            events.append({"src": "enqueue", "recs": [(ln, o)]})
        else:
            skipped[ln] = t
    out = [_expect(path, ev, file_sids) for ev in events]
    out.sort(key=lambda e: e["line"])
    return out, skipped, event_lines


def _expect(path, ev, file_sids):
    recs = ev["recs"]
    first_ln, first = recs[0]
    last_ln, last = recs[-1]
    exp: dict[str, Any] = {
        "source_format": "claude_code",
        "file": str(path),
        "line": first_ln,
        "last_line": last_ln,
        "part": 0,
        "n_records": len(recs),
        "ts": parse_ts(first.get("timestamp")),
        "ts_end": parse_ts(last.get("timestamp")),
        "ts_quality": "per_message",
        "is_sidechain": bool(first.get("isSidechain", False)),
        "session_id": _session_ids(first, file_sids),
        "initiator": None,
    }
    checks: dict[str, Any] = {}  # non-column expectations (meta, tool_calls, text)
    src = ev["src"]
    if src == "assistant":
        msg_blocks = [b for _, o in recs for b in o["message"]["content"]]
        calls = [b for b in msg_blocks if b.get("type") == "tool_use"]
        stop = [o["message"].get("stop_reason") for _, o in recs]
        raw_finish = stop[-1]
        exp.update(
            role="assistant",
            kind="message",
            message_id=first["message"]["id"],
            model=first["message"].get("model"),
            finish_reason=raw_finish,
            finish_norm=finish_norm(raw_finish),
            n_tool_calls=len(calls),
            tool_call_id=None,
            record_id={o.get("uuid") for _, o in recs},
            parent_id={o.get("parentUuid") for _, o in recs},
        )
        checks["text"] = _blocks_text(msg_blocks)
        checks["tool_calls"] = [(b["id"], b["name"], b.get("input")) for b in calls]
        checks["meta"] = {"isMeta": first.get("isMeta"), "isCompactSummary": first.get("isCompactSummary")}
        checks["meta_required"] = False
    elif src == "user":
        content = first["message"]["content"]
        results = (
            [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if isinstance(content, list)
            else []
        )
        exp.update(
            role="user",
            record_id=first.get("uuid"),
            parent_id=first.get("parentUuid"),
            n_tool_calls=0,
            finish_reason=None,
            finish_norm=None,
            message_id=None,
        )
        if results:
            exp.update(kind="tool_result", tool_call_id=results[0]["tool_use_id"])
            checks["text"] = _tool_result_text(results[0])
        else:
            exp.update(
                kind={"message", "compaction"} if first.get("isCompactSummary") else "message", tool_call_id=None
            )
            checks["text"] = _user_text(content)
        checks["tool_calls"] = []
        checks["meta"] = {"isMeta": first.get("isMeta"), "isCompactSummary": first.get("isCompactSummary")}
        checks["meta_required"] = True
    elif src == "system":
        kind = {"compaction", "system"} if first.get("subtype") == "compact_boundary" else {"system", "turn_end"}
        exp.update(
            role="system",
            kind=kind,
            record_id=first.get("uuid"),
            parent_id=first.get("parentUuid"),
            n_tool_calls=0,
            tool_call_id=None,
        )
        checks["tool_calls"] = []
    else:  # queue-operation enqueue: a message typed while the agent was busy
        exp.update(
            role="user",
            kind="queued_input",
            n_tool_calls=0,
            tool_call_id=None,
            finish_reason=None,
            finish_norm=None,
            message_id=None,
        )
        checks["text"] = first.get("content")
        checks["tool_calls"] = []
    exp["_checks"] = checks
    return exp


def check_event(actual: dict, exp: dict) -> list[str]:
    where = f"{exp['file'].rsplit('/', 3)[-1]} L{exp['line']}"
    cols = {k: v for k, v in exp.items() if not k.startswith("_")}
    problems = compare_rows(actual, cols, where)
    checks = exp["_checks"]
    if "text" in checks and norm_text(actual.get("text")) != norm_text(checks["text"]):
        problems.append(f"{where}: text = {actual.get('text')!r:.120}, expected {checks['text']!r:.120}")
    calls = actual.get("tool_calls") or []
    want = checks.get("tool_calls", [])
    if len(calls) != len(want) or any(
        c["id"] != i or c["name"] != n or not same_arguments(c["arguments"], a) for c, (i, n, a) in zip(calls, want)
    ):
        problems.append(
            f"{where}: tool_calls = {[(c['id'], c['name']) for c in calls]}, "
            f"expected {[(i, n) for i, n, _ in want]} (with arguments = input JSON)"
        )
    if "meta" in checks:
        meta = actual.get("meta") or {}
        for key, val in checks["meta"].items():
            if checks.get("meta_required") and key not in meta:
                problems.append(f"{where}: meta has no key {key!r} (meta={meta})")
            elif meta.get(key) != val:
                problems.append(f"{where}: meta.{key} = {meta.get(key)!r}, expected {val!r} (copied from line)")
    return problems


def _norm_kind(kind: str) -> str:
    """Queue operations other than enqueue may be labelled 'queue-operation' or 'queue-operation:<op>'."""
    return "queue-operation" if kind.startswith("queue-operation") else kind


def _norm_skipped(c: Counter) -> Counter:
    out: Counter[str] = Counter()
    for k, n in c.items():
        out[_norm_kind(k)] += n
    return +out


def _by_line(rows):
    return {r["line"]: r for r in rows}


def _rel(path, db):
    return str(path.relative_to(db.root))


def _path(db, rel):
    p = db.root / "claude-code" / rel
    assert p.exists(), f"missing real file {p}"
    return p


# --------------------------------------------------------------------------------------------------
# every file: conservation, files row, skipped kinds, every event row
# --------------------------------------------------------------------------------------------------
def test_claude_conservation(db, claude_path):
    con = db.con
    n_real = count_records(claude_path)
    expected, skipped, event_lines = claude_model(claude_path)
    fr = file_row(con, claude_path)
    assert fr is not None, f"no files row for {claude_path}"
    assert fr["n_lines"] == n_real, f"n_lines {fr['n_lines']} != {n_real} real records"
    assert fr["n_lines"] == fr["n_event_lines"] + fr["n_skipped"] + fr["n_rejects"], fr
    assert fr["n_rejects"] == 0, fetch(con, "SELECT * FROM rejects WHERE file = ?", [str(claude_path)])
    assert fetch(con, "SELECT count(*) AS n FROM rejects WHERE file = ?", [str(claude_path)])[0]["n"] == 0
    if n_real == 0:
        assert fr["status"] == "empty", fr
        assert fr["n_events"] == 0 and fr["n_event_lines"] == 0 and fr["n_skipped"] == 0, fr
    else:
        assert fr["status"] == "ok", fr
        assert fr["source_format"] == "claude_code", fr
    assert fr["n_event_lines"] == event_lines, (fr["n_event_lines"], event_lines)
    assert fr["n_skipped"] == len(skipped), (fr["n_skipped"], Counter(skipped.values()))
    assert fr["n_events"] == len(expected), (fr["n_events"], len(expected))
    n_db = fetch(con, "SELECT count(*) AS n FROM events WHERE file = ?", [str(claude_path)])[0]["n"]
    assert n_db == len(expected)
    assert _norm_skipped(skipped_by_kind(con, claude_path)) == _norm_skipped(Counter(skipped.values()))
    per_line = skipped_lines(con, claude_path)
    if per_line is not None:  # one skipped row per line: the very lines must match
        got = {ln: _norm_kind(k) for ln, k in per_line.items()}
        want = {ln: _norm_kind(k) for ln, k in skipped.items()}
        diff = sorted(set(got.items()) ^ set(want.items()))[:20]
        assert got == want, f"skipped lines differ (line, kind) symmetric difference: {diff}"


def test_claude_events_match_raw(db, claude_path):
    """Every event row (all documented columns) equals what the raw lines say."""
    expected, _, _ = claude_model(claude_path)
    rows = event_rows(db.con, claude_path)
    assert [r["line"] for r in rows] == [e["line"] for e in expected], "event first-lines differ"
    problems = []
    for r, e in zip(rows, expected):
        problems += check_event(r, e)
    assert not problems, f"{len(problems)} mismatches:\n" + "\n".join(problems[:40])


def test_claude_seq_is_file_order(db, claude_path):
    rows = event_rows(db.con, claude_path)
    by_session: dict[str, list[Any]] = {}
    for r in rows:
        by_session.setdefault(r["session_id"], []).append(r)
    for sid, evs in by_session.items():
        seqs = [r["seq"] for r in evs]  # evs already in (line, part) order
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), f"{sid}: seq not in file order: {seqs[:20]}"
    ids = [r["event_id"] for r in rows]
    assert len(set(ids)) == len(ids)
    for r in rows:
        assert r["n_tool_calls"] == len(r["tool_calls"] or [])
        assert r["line"] <= r["last_line"]
        assert r["ts"] is None or r["ts_end"] is None or r["n_records"] > 1 or r["ts"] == r["ts_end"]


# --------------------------------------------------------------------------------------------------
# marot/spotter 258c7280 (PROVENANCE §2a, formats.md §1)
# --------------------------------------------------------------------------------------------------
SPOTTER = "marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def test_spotter_split_replies_merge(db):
    p = _path(db, SPOTTER)
    recs = read_jsonl(p)
    asst_lines = [o for _, o in recs if o["type"] == "assistant"]
    distinct_ids = {o["message"]["id"] for o in asst_lines}
    n_tool_use = sum(1 for o in asst_lines for b in o["message"]["content"] if b.get("type") == "tool_use")
    n_progress = sum(1 for _, o in recs if o["type"] == "progress")
    # computed == documented (PROVENANCE §2a: 299 assistant lines = 152 API messages, 186 tool_use, 1,333 progress)
    assert (len(asst_lines), len(distinct_ids), n_tool_use, n_progress) == (299, 152, 186, 1333)
    assert count_records(p) == 1863

    rows = [r for r in event_rows(db.con, p) if r["role"] == "assistant"]
    assert len(rows) == len(distinct_ids) == 152
    assert sum(r["n_records"] for r in rows) == len(asst_lines) == 299
    assert sum(r["n_tool_calls"] for r in rows) == n_tool_use == 186
    assert {r["message_id"] for r in rows} == distinct_ids
    assert skipped_by_kind(db.con, p)["progress"] == n_progress == 1333


def test_spotter_human_and_harness_lines(db):
    p = _path(db, SPOTTER)
    raw = dict(read_jsonl(p))
    ev = _by_line(event_rows(db.con, p))
    sid = "258c7280-ae70-4798-800f-63464d01a85d"

    # human prompts L5 and L1858 (whole rows)
    for ln, text in ((5, "Implement spotter-gqc"), (1858, "did you push?")):
        assert raw[ln]["message"]["content"] == text
        assert not compare_rows(
            ev[ln],
            {
                "source_format": "claude_code",
                "file": str(p),
                "line": ln,
                "last_line": ln,
                "part": 0,
                "n_records": 1,
                "session_id": sid,
                "ts": parse_ts(raw[ln]["timestamp"]),
                "ts_end": parse_ts(raw[ln]["timestamp"]),
                "ts_quality": "per_message",
                "role": "user",
                "kind": "message",
                "text": text,
                "n_tool_calls": 0,
                "tool_call_id": None,
                "record_id": raw[ln]["uuid"],
                "parent_id": raw[ln]["parentUuid"],
                "is_sidechain": False,
            },
            f"L{ln}",
        ), ev[ln]
        assert ev[ln]["meta"].get("isMeta") is None and ev[ln]["meta"].get("isCompactSummary") is None

    # queued human input that never became a user line: L497, L603 (+ task-notification enqueues L280, L520)
    for ln, text in ((497, "check again"), (603, "new beads for the epic were added. tackle them")):
        assert raw[ln]["type"] == "queue-operation" and raw[ln]["operation"] == "enqueue"
        assert raw[ln]["content"] == text
        assert not compare_rows(
            ev[ln],
            {
                "line": ln,
                "last_line": ln,
                "n_records": 1,
                "role": "user",
                "kind": "queued_input",
                "text": text,
                "ts": parse_ts(raw[ln]["timestamp"]),
                "session_id": sid,
                "is_sidechain": False,
            },
            f"L{ln}",
        ), ev[ln]
    for ln in (280, 520):
        assert ev[ln]["kind"] == "queued_input" and ev[ln]["text"] == raw[ln]["content"]
        assert ev[ln]["text"].startswith("<task-notification>")
    enqueues = [ln for ln, o in raw.items() if o["type"] == "queue-operation" and o["operation"] == "enqueue"]
    assert enqueues == [280, 497, 520, 603]
    assert sorted(r["line"] for r in ev.values() if r["kind"] == "queued_input") == enqueues
    assert 505 not in ev and 604 not in ev  # 'remove' operations are skipped

    # compaction: L1256 system/compact_boundary, L1257 the isCompactSummary user line
    assert raw[1256]["subtype"] == "compact_boundary" and raw[1257]["isCompactSummary"] is True
    assert ev[1256]["role"] == "system"
    assert ev[1257]["role"] == "user" and ev[1257]["meta"].get("isCompactSummary") is True
    assert ev[1257]["text"].startswith("This session is being continued from a previous conversation")

    # interrupt marker and task notifications are plain user lines (classification is not ingest's job)
    assert ev[495]["text"] == "[Request interrupted by user for tool use]" and ev[495]["kind"] == "message"
    for ln in (496, 1847):
        assert ev[ln]["role"] == "user" and ev[ln]["text"].startswith("<task-notification>")


def test_spotter_non_monotonic_timestamps_preserved(db):
    """L495 20:51:10.733 precedes L496 20:51:10.715 in file order; both kept as given, seq = file order."""
    p = _path(db, SPOTTER)
    raw = dict(read_jsonl(p))
    assert raw[495]["timestamp"] == "2026-02-11T20:51:10.733Z"
    assert raw[496]["timestamp"] == "2026-02-11T20:51:10.715Z"
    ev = _by_line(event_rows(db.con, p))
    assert ev[495]["ts"] == parse_ts("2026-02-11T20:51:10.733Z")
    assert ev[496]["ts"] == parse_ts("2026-02-11T20:51:10.715Z")
    assert ev[495]["ts"] > ev[496]["ts"]
    assert ev[495]["seq"] < ev[496]["seq"]


def test_spotter_first_reply_whole_row(db):
    """The first API reply (lines 6..) is one event spanning all lines with its message.id."""
    p = _path(db, SPOTTER)
    recs = read_jsonl(p)
    mid = next(o for _, o in recs if o["type"] == "assistant")["message"]["id"]
    lines = [(ln, o) for ln, o in recs if o["type"] == "assistant" and o["message"]["id"] == mid]
    blocks = [b for _, o in lines for b in o["message"]["content"]]
    ev = _by_line(event_rows(db.con, p))[lines[0][0]]
    assert lines[0][0] == 6
    assert not compare_rows(
        ev,
        {
            "line": lines[0][0],
            "last_line": lines[-1][0],
            "n_records": len(lines),
            "role": "assistant",
            "kind": "message",
            "message_id": mid,
            "model": "claude-opus-4-6",
            "ts": parse_ts(lines[0][1]["timestamp"]),
            "ts_end": parse_ts(lines[-1][1]["timestamp"]),
            "finish_reason": None,
            "finish_norm": None,
            "is_sidechain": False,
            "n_tool_calls": sum(b.get("type") == "tool_use" for b in blocks),
        },
        "first reply",
    ), ev
    assert norm_text(ev["text"]) == norm_text(_blocks_text(blocks))
    assert [c["id"] for c in ev["tool_calls"] or []] == [b["id"] for b in blocks if b.get("type") == "tool_use"]


def test_spotter_subagents_are_sidechains(db):
    for rel, agent in (
        ("marot-spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl", "a881341"),
        ("marot-spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl", "acompact-fffbd0"),
    ):
        p = _path(db, rel)
        rows = event_rows(db.con, p)
        assert rows and all(r["is_sidechain"] for r in rows)
        assert {r["session_id"] for r in rows} <= {
            f"258c7280-ae70-4798-800f-63464d01a85d/{agent}",
            f"258c7280-ae70-4798-800f-63464d01a85d/agent-{agent}",
        }
        assert rows[0]["role"] == "user" and rows[0]["line"] == 1


def test_spotter_small_files(db):
    ev = _by_line(event_rows(db.con, _path(db, "marot-spotter/short.jsonl")))
    assert ev[4]["role"] == "user" and ev[4]["text"] == "mix phx.server doesnt seem to start"
    assert ev[13]["text"] == "[Request interrupted by user for tool use]"
    p = _path(db, "marot-spotter/tool_heavy.jsonl")
    raw = dict(read_jsonl(p))
    ev = _by_line(event_rows(db.con, p))
    assert raw[20]["isMeta"] is True and ev[20]["meta"].get("isMeta") is True
    assert "<command-name>/mcp</command-name>" in ev[21]["text"]
    assert ev[22]["text"].startswith("<local-command-stdout>")
    assert ev[9]["kind"] == "queued_input" and ev[9]["text"] == "/mcp"  # enqueue L9; remove L10 skipped
    assert 10 not in ev
    ev = _by_line(event_rows(db.con, _path(db, "marot-spotter/subagent.jsonl")))
    assert ev[5]["meta"].get("isMeta") is True
    assert ev[71]["text"] == "create the beads"


def test_agent_session_id_is_session_slash_agent_id(db):
    """schema.sql: a sidechain's session_id is 'sessionId/agent-<agentId>', e.g. '.../agent-a881341'."""
    bad = []
    for p in db.files["claude-code"]:
        recs = {ln: o for ln, o in read_jsonl(p) if o}
        for r in event_rows(db.con, p):
            o = recs[r["line"]]
            want = (
                f"{o['sessionId']}/agent-{o['agentId']}"
                if o.get("agentId") and o.get("isSidechain")
                else o.get("sessionId")
            )
            if want and r["session_id"] != want:
                bad.append(f"{p.name} L{r['line']}: {r['session_id']!r} != {want}")
    assert not bad, f"{len(bad)} events:\n" + "\n".join(bad[:10])


# --------------------------------------------------------------------------------------------------
# DRMacIver/claude-reliability: Stop-hook feedback lines and their gaps (PROVENANCE §2b)
# --------------------------------------------------------------------------------------------------
RELIABILITY = {  # file -> {stop-hook line: documented gap in seconds}
    "hello-world-script": {8: 0.030},
    "stop-hook-reflection-first-stop": {13: 0.031},
    "python-to-rust-port": {87: 0.422},
    "stop-hook-fast-path-clean": {},
    "stop-hook-reflection-second-stop": {},
}


@pytest.mark.parametrize("name", sorted(RELIABILITY))
def test_reliability_stop_hook_lines(db, name):
    p = _path(db, f"drmaciver-claude-reliability/{name}/transcript.jsonl")
    recs = read_jsonl(p)
    raw = dict(recs)
    # computed from the raw markers: isMeta user lines whose text starts "Stop hook feedback:"
    hook_lines = [
        ln
        for ln, o in recs
        if o["type"] == "user"
        and o.get("isMeta") is True
        and isinstance(o["message"]["content"], str)
        and o["message"]["content"].startswith("Stop hook feedback:")
    ]
    assert hook_lines == sorted(RELIABILITY[name])
    assert raw[1]["type"] == "queue-operation" and raw[1]["operation"] == "dequeue"

    rows = event_rows(db.con, p)
    ev = _by_line(rows)
    assert 1 not in ev  # the headless dequeue is skipped
    assert ev[2]["role"] == "user" and ev[2]["kind"] == "message"  # the scripted prompt
    assert ev[2]["text"] == raw[2]["message"]["content"]
    for ln in hook_lines:
        e = ev[ln]
        assert e["role"] == "user" and e["kind"] == "message" and e["meta"].get("isMeta") is True
        assert e["text"].startswith("Stop hook feedback:\n[${CLAUDE_PLUGIN_ROOT}/scripts/hooks/stop.sh]: ")
        # gap = event.ts - previous assistant event's ts_end (previous by seq in the same session)
        prev = max(
            (
                r
                for r in rows
                if r["role"] == "assistant" and r["session_id"] == e["session_id"] and r["seq"] < e["seq"]
            ),
            key=lambda r: r["seq"],
        )
        gap = (e["ts"] - prev["ts_end"]).total_seconds()
        prev_raw = max(l for l, o in recs if o["type"] == "assistant" and l < ln)
        raw_gap = (parse_ts(raw[ln]["timestamp"]) - parse_ts(raw[prev_raw]["timestamp"])).total_seconds()
        assert prev["last_line"] == prev_raw
        assert abs(gap - raw_gap) < 1e-6
        assert abs(gap - RELIABILITY[name][ln]) < 0.0005, (gap, RELIABILITY[name][ln])


def test_reliability_parallel_tool_use_one_event(db):
    """python-to-rust-port L65-67: one reply (text + 2 Bash tool_use lines), answered by L68 and L69."""
    p = _path(db, "drmaciver-claude-reliability/python-to-rust-port/transcript.jsonl")
    raw = dict(read_jsonl(p))
    assert len({raw[ln]["message"]["id"] for ln in (65, 66, 67)}) == 1
    ev = _by_line(event_rows(db.con, p))
    e = ev[65]
    assert (e["last_line"], e["n_records"], e["n_tool_calls"]) == (67, 3, 2)
    ids = [raw[ln]["message"]["content"][0]["id"] for ln in (66, 67)]
    assert [c["id"] for c in e["tool_calls"]] == ids
    assert [c["name"] for c in e["tool_calls"]] == ["Bash", "Bash"]
    assert 66 not in ev and 67 not in ev
    assert [ev[68]["tool_call_id"], ev[69]["tool_call_id"]] == ids
    assert ev[68]["kind"] == ev[69]["kind"] == "tool_result" and ev[68]["role"] == "user"


# --------------------------------------------------------------------------------------------------
# kfischer-okarin: empty files, metadata-only files, Warmup agents, branches (PROVENANCE §2c)
# --------------------------------------------------------------------------------------------------
KF = "kfischer-claude-history/-Users-user-project"
KF_EMPTY = ["0f13eeba-e6ed-42ea-ad8c-d8db37e1304e", "34d48ba8-bf7c-478e-aa05-b568b8be4cd1"]
KF_METADATA_ONLY = [
    "3f6ddfee-788c-48a5-8f7a-d43377b51472",
    "a751b8dd-6b29-4eed-8cb9-64bc9a916a39",
    "be89c3cd-bfbf-4c4f-a515-5af6e13249bf",
    "6d3dc917-03e0-448d-a7a5-d5e6c1a6dd27",
    "b8649630-2a03-472f-b005-712c4650e6e9",
    "e9040aa9-cf0d-4b25-a964-b30198f1f544",
]


@pytest.mark.parametrize("stem", KF_EMPTY)
def test_kfischer_empty_files(db, stem):
    p = _path(db, f"{KF}/{stem}.jsonl")
    assert p.stat().st_size == 0 and count_records(p) == 0
    fr = file_row(db.con, p)
    assert fr is not None, "0-byte file must still get a files row"
    assert fr["status"] == "empty" and fr["n_lines"] == 0 and fr["n_events"] == 0
    assert event_rows(db.con, p) == []
    assert not skipped_by_kind(db.con, p)


@pytest.mark.parametrize("stem", KF_METADATA_ONLY)
def test_kfischer_metadata_only_files(db, stem):
    p = _path(db, f"{KF}/{stem}.jsonl")
    recs = read_jsonl(p)
    kinds = Counter(o["type"] for _, o in recs)
    assert set(kinds) <= {"summary", "file-history-snapshot"}
    fr = file_row(db.con, p)
    assert fr["n_lines"] == len(recs) == fr["n_skipped"]
    assert fr["n_event_lines"] == 0 and fr["n_events"] == 0
    assert event_rows(db.con, p) == []
    assert skipped_by_kind(db.con, p) == kinds


def test_kfischer_warmup_agents(db):
    agents = sorted((db.root / "claude-code" / KF).glob("agent-*.jsonl"))
    warm = []
    for p in agents:
        first = read_jsonl(p)[0][1]
        if first["type"] == "user" and first.get("isSidechain") and first["message"]["content"] == "Warmup":
            warm.append(p)
    assert len(agents) == 19 and len(warm) == 18  # documented: 18 Warmup files + agent-a434715
    no_reply = []
    for p in warm:
        rows = event_rows(db.con, p)
        assert rows, p
        assert all(r["is_sidechain"] for r in rows), p
        assert rows[0]["line"] == 1 and rows[0]["role"] == "user" and rows[0]["kind"] == "message"
        assert rows[0]["text"] == "Warmup"
        agent = read_jsonl(p)[0][1]["agentId"]
        assert all(r["session_id"].endswith((f"/{agent}", f"/agent-{agent}")) for r in rows)
        if not any(r["role"] == "assistant" for r in rows):
            no_reply.append(p.name)
    assert sorted(no_reply) == ["agent-a1593bc.jsonl", "agent-a86dcdc.jsonl"]  # "2 of them have no reply"


def test_kfischer_task_agent(db):
    p = _path(db, f"{KF}/agent-a434715.jsonl")
    rows = event_rows(db.con, p)
    assert all(r["is_sidechain"] for r in rows)
    assert rows[0]["line"] == 1 and rows[0]["role"] == "user" and rows[0]["text"].startswith("Read the file")
    assert sum(r["n_tool_calls"] for r in rows) == 2  # "sidechain prompt L1 + 2 tool calls"
    assert sum(r["kind"] == "tool_result" for r in rows) == 2


def test_kfischer_branches_file(db):
    p = _path(db, f"{KF}/b3edadab-bca0-4054-9b41-f7ffa6941260.jsonl")
    raw = dict(read_jsonl(p))
    ev = _by_line(event_rows(db.con, p))
    humans = [2, 11, 21, 28, 35, 43, 50, 55, 58]
    for ln in humans:
        assert ev[ln]["role"] == "user" and ev[ln]["kind"] == "message", ln
        assert ev[ln]["text"] == _user_text(raw[ln]["message"]["content"])
    assert ev[50]["text"] == "Hi"
    assert ev[56]["text"].startswith("[Request interrupted by user")
    sk = skipped_by_kind(db.con, p)
    assert (sk["summary"], sk["file-history-snapshot"]) == (1, 10)
    assert count_records(p) == 60
    # 2.0.74 logs "tool_use" as stop_reason on 2 of this file's assistant lines: kept raw + normalised
    fin = [r for r in ev.values() if r["finish_reason"] is not None]
    assert len(fin) == 2 and all(r["finish_reason"] == "tool_use" and r["finish_norm"] == "tool_calls" for r in fin)


def test_kfischer_clear_session(db):
    p = _path(db, f"{KF}/0d3b22c1-ba90-4fd3-b8d2-056ffc626725.jsonl")
    ev = _by_line(event_rows(db.con, p))
    assert sorted(ev) == [2, 3, 4]
    assert ev[2]["meta"].get("isMeta") is True and ev[2]["text"].startswith("Caveat:")
    assert "<command-name>/clear</command-name>" in ev[3]["text"]
    assert not any(r["role"] == "assistant" for r in ev.values())


# --------------------------------------------------------------------------------------------------
# Mai0313/VibeCodingTracker (1.0.95), second-batch files (PROVENANCE §2d, §12)
# --------------------------------------------------------------------------------------------------
def test_vibecodingtracker_claude(db):
    p = _path(db, "mai0313-vibecodingtracker/claude_code.jsonl")
    raw = dict(read_jsonl(p))
    ev = _by_line(event_rows(db.con, p))
    for ln in (1, 21, 54, 64):
        assert ev[ln]["role"] == "user" and ev[ln]["kind"] == "message"
        assert ev[ln]["text"] == _user_text(raw[ln]["message"]["content"])
    for ln in (20, 63):
        assert ev[ln]["text"] == "[Request interrupted by user for tool use]"
    assert skipped_by_kind(db.con, p) == Counter({"file-history-delta": 1})
    # two sessionIds share this file: events keep their own line's sessionId
    assert {r["session_id"] for r in ev.values()} == {
        o["sessionId"] for o in raw.values() if o["type"] in ("user", "assistant")
    }


SECOND_BATCH = {
    # file: (documented line types, enqueue count, human prompts)
    "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__35_00b4613672_2_full.jsonl": (
        dict(
            assistant=489,
            user=323,
            system=91,
            **{
                "last-prompt": 75,
                "mode": 75,
                "permission-mode": 75,
                "ai-title": 75,
                "file-history-snapshot": 59,
                "attachment": 56,
                "queue-operation": 8,
            },
        ),
        4,
        1326,
    ),
    "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__09_cb2aeecea3_2_full.jsonl": (
        dict(
            assistant=358,
            user=210,
            system=78,
            **{
                "last-prompt": 53,
                "mode": 53,
                "permission-mode": 53,
                "ai-title": 53,
                "attachment": 44,
                "file-history-snapshot": 41,
                "queue-operation": 2,
            },
        ),
        1,
        945,
    ),
    "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__5f_b95c04a965_1_full.jsonl": (
        dict(
            assistant=203,
            user=110,
            system=83,
            **{
                "file-history-snapshot": 48,
                "last-prompt": 27,
                "mode": 27,
                "permission-mode": 27,
                "ai-title": 27,
                "attachment": 20,
            },
        ),
        0,
        572,
    ),
    "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__07_d253ca52d8_2_full.jsonl": (
        dict(
            assistant=225,
            user=125,
            system=50,
            **{
                "last-prompt": 32,
                "mode": 32,
                "permission-mode": 32,
                "ai-title": 32,
                "file-history-snapshot": 30,
                "attachment": 19,
            },
        ),
        0,
        577,
    ),
    "yashpunmiya-Solsmile/claude-session.jsonl": (
        dict(
            assistant=175,
            user=129,
            **{"file-history-snapshot": 45, "queue-operation": 10, "last-prompt": 2, "ai-title": 1},
        ),
        5,
        362,
    ),
    "Sarthib7-FundWise/claude-session.jsonl": (
        dict(
            assistant=132,
            user=86,
            system=2,
            **{"last-prompt": 18, "attachment": 12, "queue-operation": 6, "ai-title": 1},
        ),
        3,
        257,
    ),
}


@pytest.mark.parametrize("rel", sorted(SECOND_BATCH))
def test_second_batch_documented_counts(db, rel):
    p = _path(db, rel)
    types, n_enqueue, n_lines = SECOND_BATCH[rel]
    recs = read_jsonl(p)
    computed = Counter(o["type"] for _, o in recs)
    assert computed == Counter(types)  # raw file == PROVENANCE
    assert count_records(p) == n_lines
    enq = [ln for ln, o in recs if o["type"] == "queue-operation" and o["operation"] == "enqueue"]
    assert len(enq) == n_enqueue
    rows = event_rows(db.con, p)
    asst_ids = {o["message"]["id"] for _, o in recs if o["type"] == "assistant"}
    assert sum(r["role"] == "assistant" for r in rows) == len(asst_ids)
    assert sum(r["n_records"] for r in rows if r["role"] == "assistant") == types["assistant"]
    assert sorted(r["line"] for r in rows if r["kind"] == "queued_input") == enq
    assert sum(r["role"] == "system" for r in rows) == types.get("system", 0)
    sk = skipped_by_kind(db.con, p)
    for kind in ("last-prompt", "mode", "permission-mode", "ai-title", "file-history-snapshot", "attachment"):
        assert sk.get(kind, 0) == types.get(kind, 0), kind


def test_fundwise_enqueue_matches_following_prompt(db):
    """Desktop app: every human prompt is preceded by an enqueue/dequeue pair carrying the same text."""
    p = _path(db, "Sarthib7-FundWise/claude-session.jsonl")
    raw = dict(read_jsonl(p))
    ev = _by_line(event_rows(db.con, p))
    for enq, prompt in ((1, 3), (57, 60), (130, 133)):
        assert raw[enq]["operation"] == "enqueue"
        assert ev[enq]["kind"] == "queued_input" and ev[enq]["text"] == raw[enq]["content"]
        assert ev[prompt]["kind"] == "message" and ev[prompt]["role"] == "user"
        assert ev[prompt]["text"] == _user_text(raw[prompt]["message"]["content"])
        assert ev[enq]["text"] == ev[prompt]["text"]


def test_finish_reason_raw_and_normalised(db):
    """stop_reason is on the last line of a split reply in 2.1.x desktop/vscode files; kept raw, normalised."""
    for rel in ("Sarthib7-FundWise/claude-session.jsonl", "yashpunmiya-Solsmile/claude-session.jsonl"):
        p = _path(db, rel)
        recs = read_jsonl(p)
        last_stop = {}
        for _, o in recs:
            if o["type"] == "assistant":
                last_stop[o["message"]["id"]] = o["message"].get("stop_reason")
        rows = [r for r in event_rows(db.con, p) if r["role"] == "assistant"]
        got = Counter(r["finish_reason"] for r in rows)
        assert got == Counter(last_stop.values())
        for r in rows:
            assert r["finish_norm"] == finish_norm(r["finish_reason"])
    rows = [
        r
        for r in event_rows(db.con, _path(db, "yashpunmiya-Solsmile/claude-session.jsonl"))
        if r["role"] == "assistant"
    ]
    assert {r["finish_norm"] for r in rows} <= {"tool_calls", "stop", None}
    assert sum(r["model"] == "<synthetic>" for r in rows) >= 1


# --------------------------------------------------------------------------------------------------
# whole directory: totals and re-ingest idempotence
# --------------------------------------------------------------------------------------------------
def test_claude_directory_totals(db):
    files = db.files["claude-code"]
    assert len(files) == 47
    n_events = sum(len(claude_model(p)[0]) for p in files)
    got = fetch(db.con, "SELECT count(*) AS n FROM events WHERE source_format = 'claude_code'")[0]["n"]
    assert got == n_events
    # no Claude event may come from a file outside the claude-code directory
    outside = fetch(db.con, "SELECT DISTINCT file FROM events WHERE source_format = 'claude_code'")
    assert {r["file"] for r in outside} <= {str(p) for p in files}


def test_claude_reingest_is_idempotent(db, h):
    files = [str(p) for p in db.files["claude-code"]]
    con, _ = h.ingest_dirs([db.root / "claude-code"])
    try:
        first = h.events_checksum(con)
        side1 = h.side_tables(con, files)
        from stallscan.ingest.run import ingest_paths

        ingest_paths(con, [str(db.root / "claude-code")], fmt="auto")
        second = h.events_checksum(con)
        side2 = h.side_tables(con, files)
        assert first == second
        assert side1 == side2
        # and the same as the shared session DB's rows for these files
        assert first == h.events_checksum(db.con, files)
    finally:
        con.close()
