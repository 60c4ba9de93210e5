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
    before: tuple[str, ...] = ()  # query files run before it (shared macros)
    held: tuple[str, ...] = ()  # its large per-batch temp tables, held as Arrow during an ingest (parse_batch.Held)
    # of those, the ones made from the staged lines alone, parsed in a second DuckDB instance (ingest/parse_apart.py)
    apart: tuple[str, ...] = ()


OPENAI_CALLS = ("openai_tool_calls",)  # the macro that reads an OpenAI chat `tool_calls` value

SPECS: dict[str, FormatSpec] = {
    "claude_code": FormatSpec("claude_code", held=("cc", "cc_reply"), apart=("cc",)),
    "codex": FormatSpec("codex"),
    "openai_chat": FormatSpec("openai_chat"),
    # the other harnesses (queries/ingest/<name>_events.sql documents each mapping)
    "cline_api": FormatSpec("cline_api", whole_file=True, appendable=False),
    "cline_ui": FormatSpec("cline_ui", whole_file=True, appendable=False),
    "gemini_cli": FormatSpec("gemini_cli", appendable=False, then=("gemini_messages",)),  # ids re-written: read whole
    "gemini_cli_json": FormatSpec("gemini_cli_json", whole_file=True, appendable=False, then=("gemini_messages",)),
    # issue 25: Gemini CLI checkpoint-<tag>.json histories ([Content] / {history}) and logs.json prompt logs
    "gemini_cli_history": FormatSpec("gemini_cli_history", whole_file=True, appendable=False),
    "copilot_cli": FormatSpec("copilot_cli"),
    "openhands": FormatSpec("openhands", whole_file=True, appendable=False),
    "swe_agent": FormatSpec("swe_agent", whole_file=True, appendable=False),
    "hermes_traj": FormatSpec("hermes_traj"),
    "aider": FormatSpec("aider", appendable=False),  # paired with .aider.input.history
    "aider_input": FormatSpec("aider_input", appendable=False),
    # `opencode export` documents ({info, messages: [{info, parts}]}) and bare [{info, parts}] lists
    "opencode": FormatSpec("opencode", whole_file=True, appendable=False),
    # `opencode run --format json` event streams (a model message spans lines: re-read whole)
    "opencode_run": FormatSpec("opencode_run", appendable=False),
    "stallscan_guard": FormatSpec("stallscan_guard"),  # the guard's own decision log
    # OTLP JSON traces (one export a line, or one pretty-printed export a file), LiteLLM payloads
    "otlp": FormatSpec("otlp", then=("otlp_exports", "otlp_spans"), before=OPENAI_CALLS),
    "otlp_doc": FormatSpec(
        "otlp_doc", whole_file=True, appendable=False, then=("otlp_exports", "otlp_spans"), before=OPENAI_CALLS
    ),
    "phoenix_spans": FormatSpec("phoenix_spans", then=("otlp_spans",), before=OPENAI_CALLS),  # Phoenix span lines
    "litellm": FormatSpec("litellm", before=OPENAI_CALLS),
}
FORMATS = tuple(SPECS)
# shapes of one tool's format: a file forced to the family's name (--input-format opencode) is read in the
# shape its content shows
FAMILIES = {
    "opencode": ("opencode", "opencode_run"),
    "gemini_cli": ("gemini_cli", "gemini_cli_json", "gemini_cli_history"),
    "gemini_cli_json": ("gemini_cli", "gemini_cli_json", "gemini_cli_history"),
}
OPENCODE_RUN_TYPES = ("step_start", "step_finish", "text", "reasoning", "tool_use", "error")

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


SALVAGE_STEP = 65536  # a damaged compressed stream is read in pieces this size: what decodes before the damage is kept


def read_some(fh: BinaryIO, n: int | None, compression: str) -> tuple[bytes, BaseException | None]:
    """Up to n bytes of a stream, and the error that stopped it early (a truncated or corrupt gzip / zstd
    stream): the bytes that decoded before the damage are returned with it. A plain file reads in one call.
    n None: to the end."""
    if compression == "none":
        return fh.read(-1 if n is None else n), None
    parts: list[bytes] = []
    got = 0
    read1 = getattr(fh, "read1", fh.read)  # gzip: one inflate step a call, so a raising step loses no output
    try:
        while n is None or got < n:
            piece = read1(SALVAGE_STEP if n is None else min(SALVAGE_STEP, n - got))
            if not piece:
                break
            parts.append(piece)
            got += len(piece)
    except Exception as exc:  # zlib / EOFError / OSError / pyarrow's: the stream is damaged from here on
        return b"".join(parts), exc
    return b"".join(parts), None


def read_head(path: Path, n: int = 65536) -> bytes:
    """First n (decompressed) bytes, for format detection: of a damaged gzip / zstd stream, what decodes
    (its damage raises only when nothing at all decodes)."""
    compression = compression_of(path)
    with open_binary(path, compression) as fh:
        data, err = read_some(fh, n, compression)
    if err is not None and not data:
        raise err
    return data


def read_first_line(path: Path, limit: int = 256 * 1024 * 1024) -> bytes:
    compression = compression_of(path)
    with open_binary(path, compression) as fh:
        if compression == "none":
            return fh.readline(limit)
        return read_some(fh, limit, compression)[0].split(b"\n", 1)[0]


def detect_format(path: Path) -> str | None:
    """Return a format name, or None when no known format matches."""
    return detect(path)[0]


def detect(path: Path, forced: str | None = None) -> tuple[str | None, bool]:
    """The format (`forced`, else detected from content) and whether the file is a JSON array of that line
    format's records (read as a document: `is_array_document`)."""
    head = read_head(path)
    fmt = forced or _detect_head(path, head)
    return fmt, fmt is not None and forced is None and is_array_document(head, fmt)


def _detect_head(path: Path, head: bytes) -> str | None:
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
        # no record (nested deeper than Python decodes, damaged): the records after it decide
        for rec in _records(_after_first_line(path)):
            fmt = _classify(rec)
            if fmt:
                return fmt
    return None


def _after_first_line(path: Path, limit: int = 256 * 1024 * 1024) -> bytes:
    """The HEAD bytes that follow a long first line."""
    compression = compression_of(path)
    with open_binary(path, compression) as fh:
        if compression == "none":
            fh.readline(limit)
            return fh.read(HEAD)
        data = read_some(fh, limit + HEAD, compression)[0]
    return data.split(b"\n", 1)[1][:HEAD] if b"\n" in data else b""


def holds_records(path: str | Path, n: int = 8192) -> bool:
    """True when the first n bytes of a file a walk only sniffs (a name not in suffixes.WALK_SUFFIXES) hold a
    record of a known format; plain-text lines before it are fine, a record cut at n bytes does not count."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(n)
    except OSError:
        return False
    return b"{" in head and any(_classify(rec) for rec in _records(head))


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
# a Gemini CLI session document whose keys come in another order (`kind` or `messages` first, pretty-printed;
# chatRecordingService.ts writes the record as JSON.stringify(conversation, null, 2), key order follows
# the object it built): a first key of ConversationRecord and a marker only Gemini's record carries
_GEMINI_DOC_KEY = re.compile(
    rb'^\s*\{\s*"(sessionId|projectHash|startTime|lastUpdated|kind|summary|directories|memoryScratchpad|messages)"\s*:'
)
_GEMINI_MARK = re.compile(rb'"projectHash"\s*:|"kind"\s*:\s*"(main|subagent)"|"type"\s*:\s*"gemini"')
GEMINI_TYPES = ("user", "gemini", "info", "error", "warning")
# Gemini CLI logger.ts: checkpoint-<tag>.json ({history: [Content]} or a bare [Content]; a Content's keys come
# in either order) and logs.json ([{sessionId, messageId, timestamp, type, message}])
_GEMINI_CONTENT = rb'\{\s*("role"\s*:\s*"(user|model)"\s*,\s*"parts"|"parts"\s*:\s*\[)'
_GEMINI_HISTORY_LIST = re.compile(rb"^\s*\[\s*" + _GEMINI_CONTENT)
_GEMINI_HISTORY_DOC = re.compile(rb'^\s*\{\s*"history"\s*:\s*\[\s*(\]|' + _GEMINI_CONTENT + rb")")
_GEMINI_PROMPT_LOG = re.compile(rb'^\s*\[\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"messageId"\s*:\s*\d+')
_OPENCODE_DOC = re.compile(rb'^\s*\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"ses_')
_OPENCODE_LIST = re.compile(rb'^\s*\[\s*\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"msg_')
_OTLP_DOC = re.compile(rb'^\s*\{\s*"resourceSpans"\s*:')
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
        if _GEMINI_HISTORY_LIST.match(head) or _GEMINI_PROMPT_LOG.match(head):
            return "gemini_cli_history"
        if lname == "api_conversation_history.json":
            return "cline_api"  # empty or truncated array: the name is all there is
        if lname == "ui_messages.json":
            return "cline_ui"
        return _array_of_records(stripped)
    if stripped.startswith(b"{"):
        first = stripped.split(b"\n", 1)[0]
        try:
            rec = json.loads(first)
        except (ValueError, UnicodeDecodeError, RecursionError):  # nested too deep: the next records decide
            rec = None
        if isinstance(rec, dict):
            return None  # one object per line (or one minified document): _classify decides
        if _OTLP_DOC.match(head):
            return "otlp_doc"
        if _GEMINI_HISTORY_DOC.match(head):
            return "gemini_cli_history"
        if _OPENCODE_DOC.match(head):
            return "opencode"
        if _GEMINI_DOC.match(head) or (_GEMINI_DOC_KEY.match(head) and _GEMINI_MARK.search(head)):
            return "gemini_cli_json"
        if _SWE_DOC.match(head) or lname.endswith(".traj"):
            return "swe_agent"
    return None


def _array_of_records(head: bytes) -> str | None:
    """A JSON array whose first element is a record of a line format (a JSONL transcript saved as one
    array, say): that format. Its elements are read as the file's records (`is_array_document`)."""
    try:
        text = head.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        text = head[: exc.start].decode("utf-8")  # a character cut at the head's end
    at = text.find("[") + 1
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    try:
        rec, _ = json.JSONDecoder().raw_decode(text, at)
    except (ValueError, RecursionError):
        return None
    fmt = _classify(rec) if isinstance(rec, dict) else None
    return fmt if fmt is not None and not SPECS[fmt].whole_file else None


def is_array_document(head: bytes, fmt: str) -> bool:
    """A file of a line format whose content is one JSON array (detected by _array_of_records, or forced
    with --input-format): read as a document, its elements numbered 1.. as lines."""
    return not SPECS[fmt].whole_file and head.lstrip()[:1] == b"["


def forced_format(path: Path, fmt: str) -> str | None:
    """The format to read `path` in: `fmt` unless it names a family whose other shape the content shows."""
    if fmt == "auto":
        return detect_format(path)
    if fmt in FAMILIES:
        found = detect_format(path)
        if found in FAMILIES[fmt]:
            return found
    return fmt


def _classify(rec: dict[str, Any]) -> str | None:
    if isinstance(rec.get("resourceSpans"), list):
        return "otlp"
    if isinstance(rec.get("context"), dict) and "span_id" in rec["context"] and "span_kind" in rec:
        return "phoenix_spans"
    if "standard_logging_object" in rec or ("call_type" in rec and "startTime" in rec and "messages" in rec):
        return "litellm"
    if "stallscan_guard" in rec and "decision" in rec:
        return "stallscan_guard"
    if (
        rec.get("type") in OPENCODE_RUN_TYPES
        and isinstance(rec.get("sessionID"), str)
        and "timestamp" in rec
        and (isinstance(rec.get("part"), dict) or "error" in rec)
    ):
        return "opencode_run"  # one line of `opencode run --format json` (cli/cmd/run.ts emit)
    info = rec.get("info")
    if isinstance(info, dict) and isinstance(rec.get("messages"), list) and str(info.get("id", "")).startswith("ses_"):
        return "opencode"  # a minified `opencode export` document
    hist = rec.get("history")
    if isinstance(hist, list) and hist and isinstance(hist[0], dict) and "parts" in hist[0] and "trajectory" not in rec:
        return "gemini_cli_history"  # a minified checkpoint-<tag>.json ({history: [Content], authType})
    if isinstance(hist, list) or isinstance(rec.get("trajectory"), list):
        return "swe_agent"
    if "projectHash" in rec and "sessionId" in rec:
        return "gemini_cli_json" if isinstance(rec.get("messages"), list) else "gemini_cli"
    if ("$set" in rec or "$rewindTo" in rec) and len(rec) == 1:
        return "gemini_cli"
    msgs = rec.get("messages")
    if isinstance(msgs, list) and (
        rec.get("kind") in ("main", "subagent")
        or any(isinstance(m, dict) and m.get("type") == "gemini" and "id" in m for m in msgs[:50])
    ):
        return "gemini_cli_json"  # a one-line session document whose keys start with `kind` or `messages`
    if (
        rec.get("type") in GEMINI_TYPES
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
