"""The guard log: one JSONL record per hook call, beside the database.

Path: the `--log` option, else $STALLSCAN_GUARD_LOG, else `log` in stallscan.toml [guard], else
`stallscan-guard.jsonl` in the directory of the database ($STALLSCAN_DB, else <cwd>/stallscan.duckdb,
with cwd the harness's working directory from the hook input). `stallscan ingest` reads the file as its
own format (stallscan_guard; queries/ingest/stallscan_guard_events.sql).

Record fields: stallscan_guard (log format version), time (UTC ISO-8601), harness, event, session, turn,
verdict (the replay's round_kind), signature, stalls (the guard's earlier nudges in this turn), bound,
decision (block / would_block / allow), reason, mode, latency_ms, stop_hook_active, after_tool_round,
reply_from, and for stalls only an excerpt: the reply's last 80 characters with secrets masked
(stallscan/data/secrets.toml). No other transcript text is written.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from stallscan.guard.files import open_regular

LOG_VERSION = 1
LOG_NAME = "stallscan-guard.jsonl"
EXCERPT_CHARS = 80


def log_path(settings: dict[str, Any], payload: Any) -> str:
    if settings.get("log"):
        return os.path.expanduser(str(settings["log"]))
    env = os.environ.get("STALLSCAN_GUARD_LOG")
    if env:
        return os.path.expanduser(env)
    cwd = payload.get("cwd") if isinstance(payload, dict) and isinstance(payload.get("cwd"), str) else None
    db = os.path.expanduser(os.environ.get("STALLSCAN_DB") or "stallscan.duckdb")
    if not os.path.isabs(db) and cwd:
        db = os.path.join(cwd, db)
    return os.path.join(os.path.dirname(os.path.abspath(db)), LOG_NAME)


def excerpt(text: str | None) -> str | None:
    """At most EXCERPT_CHARS characters of the reply's end, secrets masked (before and after the cut, so
    neither a cut-off key nor a mask longer than the cut survives)."""
    if not text:
        return None
    from stallscan.store.redact import mask

    s = " ".join(text.split())
    return mask(mask(s)[-EXCERPT_CHARS:])[-EXCERPT_CHARS:]


def record(rec: dict[str, Any]) -> dict[str, Any]:
    ms = int(time.time() * 1000)  # one reading: seconds and milliseconds from two could be a second apart
    now = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"
    out: dict[str, Any] = {"stallscan_guard": LOG_VERSION, "time": now}
    for key in (
        "harness",
        "event",
        "session",
        "turn",
        "verdict",
        "signature",
        "stalls",
        "bound",
        "decision",
        "reason",
        "mode",
        "latency_ms",
        "stop_hook_active",
        "after_tool_round",
        "reply_from",
        "excerpt",
        "stalls_logged",
        "config_error",
    ):
        out[key] = rec.get(key)
    return out


def append(path: str | os.PathLike[str], rec: dict[str, Any]) -> dict[str, Any]:
    """Append one record; raises OSError when it could not be written whole (the caller then must not
    block: the record is what bounds the re-prompts). Text that is not encodable as UTF-8 (a lone UTF-16
    surrogate in a reply) is written with U+FFFD in its place, so the record is always valid UTF-8 JSON."""
    line = json.dumps(record(rec), ensure_ascii=False) + "\n"
    data = line.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace").encode("utf-8")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        if os.write(fd, data) != len(data):
            raise OSError(f"short write to {os.fspath(path)!s}")
    finally:
        os.close(fd)
    out: dict[str, Any] = json.loads(data)
    return out


def blocks_since(path: str | os.PathLike[str], session: str | None, since: float | None, tail: int = 65536) -> int:
    """The guard's `block` records of this session logged after `since` (epoch seconds), read from the
    log's last `tail` bytes; 0 when the session or the time is unknown."""
    if session is None or since is None:
        return 0
    from stallscan.guard.transcript import epoch

    try:
        fd = open_regular(path, os.O_RDONLY)
    except OSError:
        return 0
    with os.fdopen(fd, "rb") as fh:  # only the tail: the open is checked regular, the read is bounded
        size = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, size - tail))
        lines = fh.read(tail).split(b"\n")[1 if size > tail else 0 :]
    n = 0
    for ln in lines:
        if b'"block"' not in ln:
            continue
        try:
            r = json.loads(ln)
        except ValueError:
            continue
        if r.get("session") == session and r.get("decision") == "block":
            t = epoch(r.get("time"))
            if t is not None and t > since:
                n += 1
    return n


def read(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a guard log (lines that are not records are skipped)."""
    out: list[dict[str, Any]] = []
    try:
        fd = open_regular(path, os.O_RDONLY)
    except OSError:  # missing, or a FIFO / device: no log
        return out
    with os.fdopen(fd, encoding="utf-8", errors="replace") as fh:
        for ln in fh:
            try:
                r = json.loads(ln)
            except ValueError:
                continue
            if isinstance(r, dict) and "stallscan_guard" in r:
                out.append(r)
    return out
