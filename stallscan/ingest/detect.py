"""Decide a file's format from its content (first records), not only its name."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

HEAD = 65536


@dataclass(frozen=True)
class FormatSpec:
    """How a format's files are read. Each format has queries/ingest/<name>_events.sql."""

    name: str
    whole_file: bool = False  # one JSON document per file: read whole, elements numbered 1.. as lines
    appendable: bool = True  # a grown file can be read from where the last ingest stopped
    then: tuple[str, ...] = ()  # further query files run after <name>_events.sql (shared steps)


SPECS: dict[str, FormatSpec] = {
    "claude_code": FormatSpec("claude_code"),
    "codex": FormatSpec("codex"),
    "openai_chat": FormatSpec("openai_chat"),
    # the other harnesses (queries/ingest/<name>_events.sql documents each mapping)
    "cline_api": FormatSpec("cline_api", whole_file=True, appendable=False),
    "cline_ui": FormatSpec("cline_ui", whole_file=True, appendable=False),
    "gemini_cli": FormatSpec("gemini_cli", appendable=False, then=("gemini_messages",)),  # ids re-written: read whole
    "gemini_cli_json": FormatSpec("gemini_cli_json", whole_file=True, appendable=False, then=("gemini_messages",)),
    "copilot_cli": FormatSpec("copilot_cli"),
    "openhands": FormatSpec("openhands", whole_file=True, appendable=False),
    "swe_agent": FormatSpec("swe_agent", whole_file=True, appendable=False),
    "hermes_traj": FormatSpec("hermes_traj"),
    "aider": FormatSpec("aider", appendable=False),  # paired with .aider.input.history
    "aider_input": FormatSpec("aider_input", appendable=False),
    # `opencode export` documents ({info, messages: [{info, parts}]}) and bare [{info, parts}] lists
    "opencode": FormatSpec("opencode", whole_file=True, appendable=False),
    "stallscan_guard": FormatSpec("stallscan_guard"),  # the guard's own decision log
}
FORMATS = tuple(SPECS)

CLAUDE_TYPES = {
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "file-history-delta",
    "last-prompt",
    "mode",
    "permission-mode",
    "ai-title",
    "attachment",
    "custom-title",
}
CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}


def compression_of(path: Path) -> str:
    """none / gzip / zstd, from the file name."""
    name = path.name.lower()
    if name.endswith(".gz"):
        return "gzip"
    if name.endswith(".zst") or name.endswith(".zstd"):
        return "zstd"
    return "none"


def open_binary(path: Path, compression: str) -> BinaryIO:
    if compression == "gzip":
        import gzip

        return cast(BinaryIO, gzip.open(path, "rb"))
    if compression == "zstd":
        import pyarrow as pa  # (only for zstd: detecting a plain file loads neither pyarrow nor numpy)

        return cast(BinaryIO, pa.CompressedInputStream(pa.OSFile(str(path), "rb"), "zstd"))
    return open(path, "rb")


def read_head(path: Path, n: int = 65536) -> bytes:
    """First n (decompressed) bytes, for format detection."""
    with open_binary(path, compression_of(path)) as fh:
        return fh.read(n)


def read_first_line(path: Path, limit: int = 256 * 1024 * 1024) -> bytes:
    with open_binary(path, compression_of(path)) as fh:
        return fh.readline(limit) if hasattr(fh, "readline") else fh.read(limit).split(b"\n", 1)[0]


def detect_format(path: Path) -> str | None:
    """Return a format name, or None when no known format matches."""

    head = read_head(path)
    fmt = _classify_head(head, path.name)
    if fmt:
        return fmt
    for rec in _records(head):
        fmt = _classify(rec)
        if fmt:
            return fmt
    if len(head) >= HEAD and b"\n" not in head[:-1]:
        # one long first record (a 10 MB tool result): read that whole line
        for rec in _records(read_first_line(path), limit=1, cut=False):
            return _classify(rec)
    return None


def _records(head: bytes, limit: int = 20, cut: bool = True) -> Iterator[dict[str, Any]]:
    lines = head.split(b"\n")
    if cut and len(head) >= HEAD:
        lines = lines[:-1]  # the last one may be cut
    n = 0
    for raw in lines:
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):  # a record nested too deep: try the next
            continue
        if isinstance(rec, dict):
            yield rec
            n += 1
            if n >= limit:
                return


# cheap checks on the first bytes of files that are not one JSON object per line: a JSON document's
# first record may not end inside the 64 KiB head (Cline's first message embeds attached files)
_JSON_ARRAY_ROLE = re.compile(rb'^\s*\[\s*\{\s*"role"\s*:\s*"(user|assistant)"\s*,\s*"content"\s*:')
_CLINE_TS = re.compile(rb'"ts"\s*:\s*\d{12,}')
_CLINE_UI = re.compile(rb'^\s*\[\s*\{\s*"ts"\s*:\s*\d{12,}\s*,\s*"type"\s*:\s*"(say|ask)"')
_OPENHANDS = re.compile(
    rb'^\s*\[\s*\{\s*"id"\s*:\s*\d+\s*,\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"source"\s*:\s*"(user|agent|environment)"'
)
_SWE_DOC = re.compile(rb'^\s*\{\s*"(environment|trajectory|history|info|replay_config)"\s*:')
_GEMINI_DOC = re.compile(rb'^\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"\s*:')
_OPENCODE_DOC = re.compile(rb'^\s*\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"ses_')
_OPENCODE_LIST = re.compile(rb'^\s*\[\s*\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"msg_')
_AIDER_MD = re.compile(rb"^\s*# aider chat started at \d{4}-\d\d-\d\d")
_AIDER_INPUT = re.compile(rb"^\s*# \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\r?\n\+")


def _classify_head(head: bytes, name: str) -> str | None:
    """Formats recognised from the head bytes (and, for empty JSON arrays, the file name)."""
    lname = name.lower()
    for suffix in (".gz", ".zst", ".zstd"):
        if lname.endswith(suffix):
            lname = lname[: -len(suffix)]
    if _AIDER_MD.match(head) or (lname.endswith(".aider.chat.history.md") and not head.strip()):
        return "aider"
    if _AIDER_INPUT.match(head) or (lname.endswith(".aider.input.history") and not head.strip()):
        return "aider_input"
    stripped = head.lstrip()
    if stripped.startswith(b"["):
        if _CLINE_UI.match(head):
            return "cline_ui"
        if _JSON_ARRAY_ROLE.match(head) and (lname == "api_conversation_history.json" or _CLINE_TS.search(head)):
            return "cline_api"
        if _OPENHANDS.match(head):
            return "openhands"
        if _OPENCODE_LIST.match(head):
            return "opencode"
        if lname == "api_conversation_history.json":
            return "cline_api"  # empty or truncated array: the name is all there is
        if lname == "ui_messages.json":
            return "cline_ui"
        return None
    if stripped.startswith(b"{"):
        first = stripped.split(b"\n", 1)[0]
        try:
            rec = json.loads(first)
        except (ValueError, UnicodeDecodeError):
            rec = None
        if isinstance(rec, dict):
            return None  # one object per line (or one minified document): _classify decides
        if _OPENCODE_DOC.match(head):
            return "opencode"
        if _GEMINI_DOC.match(head):
            return "gemini_cli_json"
        if _SWE_DOC.match(head) or lname.endswith(".traj"):
            return "swe_agent"
    return None


def _classify(rec: dict[str, Any]) -> str | None:
    if "stallscan_guard" in rec and "decision" in rec:
        return "stallscan_guard"
    info = rec.get("info")
    if isinstance(info, dict) and isinstance(rec.get("messages"), list) and str(info.get("id", "")).startswith("ses_"):
        return "opencode"  # a minified `opencode export` document
    if isinstance(rec.get("history"), list) or isinstance(rec.get("trajectory"), list):
        return "swe_agent"
    if "projectHash" in rec and "sessionId" in rec:
        return "gemini_cli_json" if isinstance(rec.get("messages"), list) else "gemini_cli"
    if "$set" in rec and len(rec) == 1:
        return "gemini_cli"
    if (
        rec.get("type") in ("user", "gemini", "info")
        and "id" in rec
        and "timestamp" in rec
        and "content" in rec
        and "sessionId" not in rec
        and "uuid" not in rec
    ):
        return "gemini_cli"
    if (
        isinstance(rec.get("type"), str)
        and "." in rec["type"]
        and isinstance(rec.get("data"), dict)
        and "id" in rec
        and rec["type"].split(".", 1)[0]
        in ("session", "user", "assistant", "tool", "system", "subagent", "skill", "hook")
    ):
        return "copilot_cli"
    if isinstance(rec.get("conversations"), list):
        return "hermes_traj"
    t = rec.get("type")
    if isinstance(t, str) and t in CODEX_TYPES and "payload" in rec:
        return "codex"
    if (
        isinstance(t, str)
        and t in CLAUDE_TYPES
        and ("sessionId" in rec or "uuid" in rec or "leafUuid" in rec or "messageId" in rec)
    ):
        return "claude_code"
    if isinstance(rec.get("messages"), list):
        return "openai_chat"
    role = rec.get("role")
    if isinstance(role, str) and role in ("user", "assistant", "tool", "system", "developer", "session_meta"):
        return "openai_chat"
    return None
