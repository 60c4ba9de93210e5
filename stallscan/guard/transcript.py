"""Read the tail of a live Claude Code or Codex transcript into event dicts (plain Python, no duckdb).

The guard needs only the current turn: its rounds back to the last landed tool call or human prompt, and
its own earlier nudges. So it reads the file backwards in chunks and stops as soon as the window holds a
tool round or a human turn start (or a size cap): a 500 MB transcript costs what a small one does.

The events have the columns the replay reads (stallscan.replay.stalls_ref): event_id, session_id, seq,
role, kind, text, n_tool_calls, finish_reason, finish_norm, model, source_format, meta. They are built the
way queries/ingest/claude_code_events.sql and codex_events.sql build them (one Claude reply written over
several lines of one message.id is one event; Codex output items up to the next breaking record are one
event; a Codex user item is the human's prompt only when an event_msg/user_message carries its text).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

CHUNK = 256 * 1024
MAX_WINDOW = 16 * 1024 * 1024  # never read more than this much of the tail

CLAUDE_TYPES = {"user", "assistant", "system", "queue-operation"}
CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_FINISH = {
    "stop": {"stop", "end_turn", "stop_sequence", "eos", "complete", "completed", "final_answer"},
    "tool_calls": {"tool_calls", "tool_use", "tool-calls", "function_call", "tool_call"},
    "length": {"length", "max_tokens", "max_output_tokens", "model_context_window_exceeded"},
    "content_filter": {"content_filter", "content-filter", "refusal", "safety", "recitation"},
    "error": {"error", "failed", "failure"},
    "cancelled": {"cancelled", "canceled", "aborted", "interrupted", "abort"},
}
_CODEX_OUT = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call"}
_CODEX_BREAK_ITEMS = {"message", "function_call_output", "custom_tool_call_output", "tool_search_output"}
_CODEX_BREAK_EVENTS = {"user_message", "task_started", "task_complete", "turn_aborted"}


class SchemaUnknown(Exception):
    """The transcript's records are neither Claude Code nor Codex records."""


def finish_norm(raw: str | None) -> str | None:
    """The SQL macro finish_norm (queries/store/schema.sql) in Python."""
    if raw is None:
        return None
    low = raw.lower()
    for norm, values in _FINISH.items():
        if low in values:
            return norm
    return None


def _json_text(v: Any) -> str | None:
    """The SQL macro json_text: a string as is, a list of blocks as their texts joined by newlines."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        parts = [b.get("text") if isinstance(b, dict) else (b if isinstance(b, str) else None) for b in v]
        return "\n".join(p for p in parts if p) or None
    return json.dumps(v)


def read_tail_lines(
    path: str, enough: Callable[[list[bytes]], bool], chunk: int = CHUNK, cap: int = MAX_WINDOW
) -> tuple[list[bytes], bool]:
    """Complete lines of the file's tail, oldest first, growing the window until `enough(records)` says
    the parsed records suffice, the file start is reached or `cap` bytes are read.
    Returns (lines, reached_start)."""
    from stallscan.guard.files import open_regular

    with os.fdopen(open_regular(path, os.O_RDONLY), "rb") as fh:  # (a FIFO or device raises, never blocks)
        size = fh.seek(0, os.SEEK_END)
        start = size
        buf = b""
        while True:
            step = min(chunk, start)
            start -= step
            fh.seek(start)
            buf = fh.read(step) + buf
            lines = buf.split(b"\n")
            if start > 0:
                lines = lines[1:]  # the first piece may be the end of a longer line
            lines = [ln for ln in lines if ln.strip()]
            if start == 0 or size - start >= cap or enough(lines):
                return lines, start == 0
            chunk = min(chunk * 2, 4 * 1024 * 1024)


def parse_records(lines: list[bytes]) -> list[dict[str, Any]]:
    out = []
    for ln in lines:
        try:
            rec = json.loads(ln)
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def detect(records: list[dict[str, Any]]) -> str | None:
    for rec in reversed(records):
        t = rec.get("type")
        if t in CODEX_TYPES and "payload" in rec:
            return "codex"
        if t in CLAUDE_TYPES and ("sessionId" in rec or "uuid" in rec):
            return "claude_code"
    return None


# ------------------------------------------------------------------------------------------ Claude Code
def _claude_session(rec: dict[str, Any]) -> str:
    sid = str(rec.get("sessionId") or "")
    if rec.get("agentId") is not None and rec.get("isSidechain"):
        sid += f"/agent-{rec['agentId']}"
    return sid


def claude_events(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events of the last session in the records (claude_code_events.sql, restated for a tail)."""
    keep = [r for r in records if r.get("type") in CLAUDE_TYPES]
    last = next((r for r in reversed(keep) if r.get("type") in ("user", "assistant")), None)
    if last is None:
        return []
    session = _claude_session(last)
    seen: set[str] = set()
    events: list[dict[str, Any]] = []
    last_reply: dict[str, Any] | None = None
    for i, rec in enumerate(keep):
        if _claude_session(rec) != session:
            continue
        uuid = rec.get("uuid")
        if uuid is not None:
            if uuid in seen:
                continue  # a re-written line (resume): the first copy counts
            seen.add(uuid)
        typ = rec.get("type")
        msg: dict[str, Any] = rec["message"] if isinstance(rec.get("message"), dict) else {}
        if typ in ("user", "assistant") and msg.get("role") is None:
            continue
        content = msg.get("content")
        text: str | None
        if typ == "user":
            blocks = content if isinstance(content, list) else []
            results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
            if isinstance(content, str):
                text = content
            else:
                parts = []
                for b in blocks:
                    if not isinstance(b, dict):
                        continue
                    if b.get("type") == "text":
                        parts.append(b.get("text"))
                    elif b.get("type") == "tool_result":
                        parts.append(_json_text(b.get("content")))
                text = "\n".join(p for p in parts if p) or None
            events.append(_event(i, session, "user", "tool_result" if results else "message", text, 0, None, None, rec))
        elif typ == "queue-operation":
            if rec.get("operation") == "enqueue":
                events.append(
                    _event(i, session, "user", "queued_input", _json_text(rec.get("content")), 0, None, None, rec)
                )
        elif typ == "assistant":
            blocks = content if isinstance(content, list) else []
            texts = (
                [content]
                if isinstance(content, str)
                else [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
            )
            text = "\n".join(t for t in texts if t) or None
            calls_l = [
                {"name": b.get("name"), "arguments": json.dumps(b.get("input"))}
                for b in blocks
                if isinstance(b, dict) and b.get("type") == "tool_use"
            ]  # (name and arguments: the background-work evidence of intent_signatures.toml [[background]])
            calls = len(calls_l)
            mid = msg.get("id")
            # lines of one message.id merge even across the tool results written between them (the SQL
            # numbers runs over the assistant lines only)
            prev = last_reply
            if prev is not None and mid is not None and prev["message_id"] == mid:
                if text:
                    prev["text"] = text if prev["text"] is None else prev["text"] + "\n" + text
                prev["n_tool_calls"] += calls
                prev["tool_calls"] += calls_l
                if msg.get("stop_reason") is not None:
                    prev["finish_reason"] = msg["stop_reason"]
                    prev["finish_norm"] = finish_norm(msg["stop_reason"])
                prev["model"] = msg.get("model") or prev["model"]
                continue
            ev = _event(i, session, "assistant", "message", text, calls, msg.get("stop_reason"), msg.get("model"), rec)
            ev["message_id"] = mid
            ev["tool_calls"] = calls_l
            events.append(ev)
            last_reply = ev
    return events


def _event(
    i: int,
    session: str,
    role: str,
    kind: str,
    text: str | None,
    n_calls: int,
    finish: str | None,
    model: str | None,
    rec: dict[str, Any],
    fmt: str = "claude_code",
) -> dict[str, Any]:
    meta = {}
    for key in ("isMeta", "isCompactSummary", "permissionMode"):  # permissionMode: [[approval_mode]] evidence
        if rec.get(key) is not None:
            meta[key] = rec[key]
    return {
        "event_id": f"t{i:08d}",
        "seq": i,
        "session_id": session,
        "role": role,
        "kind": kind,
        "text": text,
        "n_tool_calls": n_calls,
        "finish_reason": finish,
        "finish_norm": finish_norm(finish),
        "model": model,
        "source_format": fmt,
        "record_id": rec.get("uuid"),
        "message_id": None,
        "meta": meta,
        "ts": rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None,
        "tool_calls": [],
    }


# ------------------------------------------------------------------------------------------------ Codex
def codex_events(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events of a Codex rollout tail (codex_events.sql, restated for a tail)."""
    # pair the k-th user item of a text with the k-th event_msg/user_message of that text
    items: dict[str, list[int]] = {}
    msgs: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        p: dict[str, Any] = rec["payload"] if isinstance(rec.get("payload"), dict) else {}
        if rec.get("type") == "response_item" and p.get("type") == "message" and p.get("role") == "user":
            t = _codex_text(p)
            if t is not None:
                items.setdefault(t.strip(), []).append(i)
        elif rec.get("type") == "event_msg" and p.get("type") == "user_message" and p.get("message") is not None:
            msgs.setdefault(str(p["message"]).strip(), []).append(i)
    paired_items, paired_msgs = set(), set()
    for t, lines in items.items():
        for a, b in zip(lines, msgs.get(t, [])):
            paired_items.add(a)
            paired_msgs.add(b)
    events: list[dict[str, Any]] = []
    model = turn = None
    open_reply: dict[str, Any] | None = None
    for i, rec in enumerate(records):
        typ = rec.get("type")
        p = rec["payload"] if isinstance(rec.get("payload"), dict) else {}
        ptype = p.get("type")
        if typ == "turn_context":
            model = p.get("model") or model
            turn = p.get("turn_id") or turn
        if typ == "event_msg" and ptype == "task_started":
            turn = p.get("turn_id") or turn
        is_out = typ == "response_item" and (
            ptype in _CODEX_OUT or (ptype == "message" and p.get("role") == "assistant")
        )
        is_break = (
            (typ == "response_item" and ptype in _CODEX_BREAK_ITEMS and not is_out)
            or (typ == "event_msg" and ptype in _CODEX_BREAK_EVENTS)
            or typ in ("compacted", "session_meta")
        )
        if is_out:
            if open_reply is None:
                open_reply = _event(i, "codex", "assistant", "message", None, 0, None, model, _ts(rec), "codex")
                open_reply["turn_id"] = turn
                events.append(open_reply)
            if ptype == "message":
                t = _codex_text(p)
                if t is not None:
                    open_reply["text"] = t if open_reply["text"] is None else open_reply["text"] + "\n" + t
                if p.get("phase") is not None:
                    open_reply["meta"]["phase"] = p["phase"]
            else:
                open_reply["n_tool_calls"] += 1
                args = p.get("arguments") if p.get("arguments") is not None else p.get("input", p.get("action"))
                open_reply["tool_calls"].append(
                    {
                        "name": p.get("name") or str(ptype).replace("_call", ""),
                        "arguments": args if isinstance(args, str) or args is None else json.dumps(args),
                    }
                )
            open_reply["model"] = model
            continue
        if is_break:
            open_reply = None
        if typ == "response_item" and ptype == "message" and p.get("role") in ("user", "developer", "system"):
            role = "system" if p.get("role") == "developer" else "user"
            kind = "message" if i in paired_items else "context"
            ev = _event(i, "codex", role, kind, _codex_text(p), 0, None, None, _ts(rec), "codex")
            ev["meta"]["paired"] = i in paired_items
            events.append(ev)
        elif typ == "event_msg" and ptype == "user_message" and i not in paired_msgs:
            events.append(
                _event(i, "codex", "user", "queued_input", p.get("message"), 0, None, None, _ts(rec), "codex")
            )
        elif typ == "response_item" and ptype in (
            "function_call_output",
            "custom_tool_call_output",
            "tool_search_output",
        ):
            events.append(_event(i, "codex", "tool", "tool_result", None, 0, None, None, _ts(rec), "codex"))
        elif typ == "event_msg" and ptype == "turn_aborted":
            events.append(
                _event(i, "codex", "system", "turn_aborted", p.get("reason"), 0, None, None, _ts(rec), "codex")
            )
    for ev in events:
        if ev["role"] == "assistant" and ev["text"] is not None and ev["text"] == "":
            ev["text"] = None
    return events


def _ts(rec: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": rec.get("timestamp")} if isinstance(rec.get("timestamp"), str) else {}


def epoch(ts: str | None) -> float | None:
    """An ISO-8601 time (as the transcripts and the guard log write it) as epoch seconds; None if unreadable."""
    if not ts:
        return None
    from datetime import UTC, datetime

    try:
        dt = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()


def _codex_text(p: dict[str, Any]) -> str | None:
    content = p.get("content")
    if not isinstance(content, list):
        return None
    parts = [str(c["text"]) for c in content if isinstance(c, dict) and c.get("text") is not None]
    return "\n".join(parts) or None


def events_of(fmt: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if fmt == "claude_code":
        return claude_events(records)
    if fmt == "codex":
        return codex_events(records)
    raise SchemaUnknown(fmt)
