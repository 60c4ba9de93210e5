"""Ingest of the real Hermes Agent session logs (../shared/data/real/hermes-session), read as openai_chat.

Expected values come from the lines themselves (role, content, tool_calls, finish_reason, timestamp) and
from hermes-session/NOTES.md, whose tables are hard-coded below next to the computed figures.
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

F1 = "NousResearch-hermes-agent/20260421_055527_49457147.jsonl"
F2 = "NousResearch-hermes-agent/20260422_005427_557b5676.jsonl"

# NOTES.md, per file
NOTES: dict[str, dict[str, Any]] = {
    F1: dict(
        lines=87,
        roles={"user": 6, "assistant": 34, "tool": 47},
        session_meta=0,
        finish={"tool_calls": 28, "stop": 3, None: 3},
        stop_lines=[70, 72, 87],
        absent_lines=[2, 4, 6],
        calls=47,
        parallel=12,
        tools={
            "read_file": 13,
            "search_files": 6,
            "terminal": 5,
            "process": 5,
            "todo": 4,
            "patch": 4,
            "execute_code": 4,
            "vision_analyze": 3,
            "skill_view": 2,
            "browser_navigate": 1,
        },
        ts_ranges=[
            ((7, 70), "2026-04-21T09:40:54.567158"),
            ((71, 72), "2026-04-21T09:41:14.986576"),
            ((73, 87), "2026-04-22T01:24:48.748567"),
        ],
        no_ts=[1, 2, 3, 4, 5, 6],
    ),
    F2: dict(
        lines=49,
        roles={"user": 4, "assistant": 24, "tool": 20},
        session_meta=1,
        finish={"tool_calls": 20, "stop": 4},
        stop_lines=[5, 9, 13, 49],
        absent_lines=[],
        calls=20,
        parallel=0,
        tools={"terminal": 11, "search_files": 3, "delegate_task": 2, "todo": 2, "skill_view": 1, "read_file": 1},
        ts_ranges=[
            ((1, 5), "2026-04-22T00:54:48.399331"),
            ((6, 9), "2026-04-22T00:56:38.182710"),
            ((10, 13), "2026-04-22T01:14:05.223752"),
            ((14, 49), "2026-04-22T01:23:05.941964"),
        ],
        no_ts=[],
    ),
}


def hermes_model(path):
    recs = read_jsonl(path)
    msgs = [(ln, o) for ln, o in recs if o.get("role") != "session_meta"]
    shared = Counter(o.get("timestamp") for _, o in msgs if o.get("timestamp") is not None)
    events = []
    for ln, o in msgs:
        ts = o.get("timestamp")
        quality = "none" if ts is None else ("per_flush" if shared[ts] > 1 else "per_message")
        role = o["role"]
        fin = o.get("finish_reason")
        events.append(
            {
                "source_format": "openai_chat",
                "file": str(path),
                "line": ln,
                "last_line": ln,
                "part": 0,
                "n_records": 1,
                "session_id": path.stem,
                "ts": parse_ts(ts),
                "ts_end": parse_ts(ts),
                "ts_quality": quality,
                "role": role,
                "kind": {"user": "message", "assistant": "message", "tool": "tool_result"}[role],
                "tool_call_id": o.get("tool_call_id"),
                "finish_reason": fin,
                "finish_norm": finish_norm(fin),
                "n_tool_calls": len(o.get("tool_calls") or []),
                "is_sidechain": False,
                "_text": o.get("content"),
                "_calls": [
                    (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in o.get("tool_calls") or []
                ],
            }
        )
    skipped = {ln: "session_meta" for ln, o in recs if o.get("role") == "session_meta"}
    return events, skipped


def _path(db, rel):
    p = db.root / "hermes-session" / rel
    assert p.exists(), p
    return p


def test_hermes_conservation(db, hermes_path):
    con = db.con
    expected, skipped = hermes_model(hermes_path)
    fr = file_row(con, hermes_path)
    assert fr is not None, f"no files row for {hermes_path}"
    assert fr["source_format"] == "openai_chat" and fr["status"] == "ok", fr
    assert fr["n_lines"] == count_records(hermes_path)
    assert fr["n_lines"] == fr["n_event_lines"] + fr["n_skipped"] + fr["n_rejects"], fr
    assert fr["n_rejects"] == 0
    assert fetch(con, "SELECT count(*) AS n FROM rejects WHERE file = ?", [str(hermes_path)])[0]["n"] == 0
    assert fr["n_event_lines"] == len(expected) and fr["n_events"] == len(expected)
    assert fr["n_skipped"] == len(skipped)
    assert skipped_by_kind(con, hermes_path) == Counter(skipped.values())
    per_line = skipped_lines(con, hermes_path)
    if per_line is not None:
        assert per_line == skipped


def test_hermes_events_match_raw(db, hermes_path):
    expected, _ = hermes_model(hermes_path)
    rows = event_rows(db.con, hermes_path)
    assert [r["line"] for r in rows] == [e["line"] for e in expected]
    problems = []
    for r, e in zip(rows, expected):
        where = f"{hermes_path.name} L{e['line']}"
        problems += compare_rows(r, {k: v for k, v in e.items() if not k.startswith("_")}, where)
        if norm_text(r["text"]) != norm_text(e["_text"]):
            problems.append(f"{where}: text {r['text']!r:.80} != {e['_text']!r:.80}")
        calls = r["tool_calls"] or []
        if [(c["id"], c["name"]) for c in calls] != [(i, n) for i, n, _ in e["_calls"]] or any(
            not same_arguments(c["arguments"], a) for c, (_, _, a) in zip(calls, e["_calls"])
        ):
            problems.append(
                f"{where}: tool_calls {[(c['id'], c['name']) for c in calls]} != {[(i, n) for i, n, _ in e['_calls']]}"
            )
    seqs = [r["seq"] for r in rows]
    if seqs != sorted(seqs) or len(set(seqs)) != len(seqs):
        problems.append(f"seq not in file order: {seqs[:20]}")
    assert not problems, f"{len(problems)} mismatches:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize("rel", [F1, F2])
def test_hermes_notes_tables(db, rel):
    p = _path(db, rel)
    n = NOTES[rel]
    recs = read_jsonl(p)
    # raw file == NOTES.md
    assert count_records(p) == n["lines"]
    assert Counter(o["role"] for _, o in recs if o["role"] != "session_meta") == Counter(n["roles"])
    asst = [(ln, o) for ln, o in recs if o["role"] == "assistant"]
    assert Counter(o.get("finish_reason") for _, o in asst) == Counter(n["finish"])
    assert [ln for ln, o in asst if o.get("finish_reason") == "stop"] == n["stop_lines"]
    assert [ln for ln, o in asst if "finish_reason" not in o] == n["absent_lines"]
    assert Counter(c["function"]["name"] for _, o in recs for c in o.get("tool_calls") or []) == Counter(n["tools"])

    # ingest == NOTES.md
    rows = event_rows(db.con, p)
    ev = {r["line"]: r for r in rows}
    assert Counter(r["role"] for r in rows) == Counter(n["roles"])
    a_rows = [r for r in rows if r["role"] == "assistant"]
    assert Counter(r["finish_reason"] for r in a_rows) == Counter(n["finish"])
    assert Counter(r["finish_norm"] for r in a_rows) == Counter(n["finish"])  # tool_calls/stop/NULL map to themselves
    assert [r["line"] for r in a_rows if r["finish_reason"] == "stop"] == n["stop_lines"]
    assert [r["line"] for r in a_rows if r["finish_reason"] is None] == n["absent_lines"]
    assert sum(r["n_tool_calls"] for r in rows) == n["calls"]
    assert sum(r["n_tool_calls"] > 1 for r in rows) == n["parallel"]
    assert Counter(c["name"] for r in rows for c in r["tool_calls"] or []) == Counter(n["tools"])
    # no dropped tool calls: every finish_reason 'tool_calls' carries calls
    assert all(r["n_tool_calls"] > 0 for r in a_rows if r["finish_reason"] == "tool_calls")
    # every tool result answers a call of this session
    call_ids = {c["id"] for r in rows for c in r["tool_calls"] or []}
    tool_rows = [r for r in rows if r["role"] == "tool"]
    assert all(r["kind"] == "tool_result" and r["tool_call_id"] in call_ids for r in tool_rows)
    assert len({r["tool_call_id"] for r in tool_rows}) == len(tool_rows) == n["calls"]
    # timestamps: one value per user turn, naive -> UTC, never decreasing, shared -> per_flush
    distinct = {r["ts"] for r in rows if r["ts"] is not None}
    assert len(distinct) == len(n["ts_ranges"])
    for (lo, hi), value in n["ts_ranges"]:
        want = parse_ts(value)
        assert want.utcoffset().total_seconds() == 0
        for ln in range(lo, hi + 1):
            if ln in ev:  # (line 1 of F2 is the skipped session_meta)
                assert ev[ln]["ts"] == want and ev[ln]["ts_end"] == want, ln
                assert ev[ln]["ts_quality"] == "per_flush", ln
    for ln in n["no_ts"]:
        assert ev[ln]["ts"] is None and ev[ln]["ts_quality"] == "none"
    stamped = [r["ts"] for r in rows if r["ts"] is not None]
    assert stamped == sorted(stamped)
    assert {r["session_id"] for r in rows} == {p.stem}
    assert skipped_by_kind(db.con, p) == (Counter({"session_meta": 1}) if n["session_meta"] else Counter())


def test_hermes_first_file_rows(db):
    p = _path(db, F1)
    raw = dict(read_jsonl(p))
    ev = {r["line"]: r for r in event_rows(db.con, p)}
    # L4: pre-compaction summary stored as an assistant message (role and content only)
    assert set(raw[4]) == {"role", "content"}
    assert not compare_rows(
        ev[4],
        {
            "role": "assistant",
            "kind": "message",
            "ts": None,
            "ts_quality": "none",
            "finish_reason": None,
            "finish_norm": None,
            "n_tool_calls": 0,
        },
        "L4",
    ), ev[4]
    assert ev[4]["text"].startswith("[CONTEXT COMPACTION")
    # L71: system notice injected into a user message
    assert ev[71]["role"] == "user" and "[SYSTEM: Background process" in ev[71]["text"]
    # L87: the final stop
    assert not compare_rows(
        ev[87],
        {
            "role": "assistant",
            "finish_reason": "stop",
            "finish_norm": "stop",
            "n_tool_calls": 0,
            "ts": parse_ts("2026-04-22T01:24:48.748567"),
        },
        "L87",
    ), ev[87]
    # the first parallel call: whole row
    ln = min(l for l, o in raw.items() if len(o.get("tool_calls") or []) > 1)
    calls = raw[ln]["tool_calls"]
    assert not compare_rows(
        ev[ln],
        {
            "source_format": "openai_chat",
            "file": str(p),
            "line": ln,
            "last_line": ln,
            "part": 0,
            "n_records": 1,
            "session_id": "20260421_055527_49457147",
            "role": "assistant",
            "kind": "message",
            "finish_reason": "tool_calls",
            "finish_norm": "tool_calls",
            "n_tool_calls": len(calls),
            "tool_call_id": None,
            "ts": parse_ts(raw[ln]["timestamp"]),
            "ts_quality": "per_flush",
            "is_sidechain": False,
        },
        f"L{ln}",
    ), ev[ln]
    assert [(c["id"], c["name"], c["arguments"]) for c in ev[ln]["tool_calls"]] == [
        (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls
    ]


def test_hermes_reingest_is_idempotent(db, h):
    files = [str(p) for p in db.files["hermes-session"]]
    con, _ = h.ingest_dirs([db.root / "hermes-session"])
    try:
        first = h.events_checksum(con)
        side1 = h.side_tables(con, files)
        from stallscan.ingest.run import ingest_paths

        ingest_paths(con, [str(db.root / "hermes-session")], fmt="auto")
        assert h.events_checksum(con) == first
        assert h.side_tables(con, files) == side1
        assert first == h.events_checksum(db.con, files)
    finally:
        con.close()
