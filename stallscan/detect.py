"""Decide a file's format from its content (first records), not only its name."""
from __future__ import annotations

import json
from pathlib import Path

from .reader import read_first_line, read_head

HEAD = 65536

from dataclasses import dataclass


@dataclass(frozen=True)
class FormatSpec:
    """How a format's files are read. Each format has queries/<name>_events.sql."""

    name: str
    whole_file: bool = False   # one JSON document per file: read whole, elements numbered 1.. as lines
    appendable: bool = True    # a grown file can be read from where the last ingest stopped


SPECS: dict[str, FormatSpec] = {
    "claude_code": FormatSpec("claude_code"),
    "codex": FormatSpec("codex"),
    "openai_chat": FormatSpec("openai_chat"),
}
FORMATS = tuple(SPECS)

CLAUDE_TYPES = {"user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation",
                "progress", "file-history-delta", "last-prompt", "mode", "permission-mode", "ai-title",
                "attachment", "custom-title"}
CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}


def detect_format(path: Path) -> str | None:
    """Return a format name, or None when no known format matches."""
    head = read_head(path)
    for rec in _records(head):
        fmt = _classify(rec)
        if fmt:
            return fmt
    if len(head) >= HEAD and b"\n" not in head[:-1]:
        # one long first record (a 10 MB tool result): read that whole line
        for rec in _records(read_first_line(path), limit=1, cut=False):
            return _classify(rec)
    return None


def _records(head: bytes, limit: int = 20, cut: bool = True):
    lines = head.split(b"\n")
    if cut and len(head) >= HEAD:
        lines = lines[:-1]  # the last one may be cut
    n = 0
    for raw in lines:
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(rec, dict):
            yield rec
            n += 1
            if n >= limit:
                return


def _classify(rec: dict) -> str | None:
    t = rec.get("type")
    if isinstance(t, str) and t in CODEX_TYPES and "payload" in rec:
        return "codex"
    if isinstance(t, str) and t in CLAUDE_TYPES and (
            "sessionId" in rec or "uuid" in rec or "leafUuid" in rec or "messageId" in rec):
        return "claude_code"
    if isinstance(rec.get("messages"), list):
        return "openai_chat"
    role = rec.get("role")
    if isinstance(role, str) and role in ("user", "assistant", "tool", "system", "developer", "session_meta"):
        return "openai_chat"
    return None
