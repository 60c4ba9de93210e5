"""Plan an ingest: which files to read, from which line and byte, in which format; book the rest.

`plan(con, files, fmt, res)` compares each file with its `files` row: unchanged files are counted and
skipped, grown files resume at their stored resume point, rewritten ones are read again from the start.
Nothing here needs numpy or pyarrow, so a run with nothing to read never loads them.
"""

from __future__ import annotations

import hashlib
import os
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from stallscan.ingest.detect import SPECS, compression_of, detect, forced_format

if TYPE_CHECKING:
    from stallscan.ingest.result import IngestResult


def read_errors() -> tuple[type[BaseException], ...]:
    """What reading a file can raise besides a clean result: gone, unreadable, damaged gzip / zstd stream
    (pyarrow's errors only once pyarrow is loaded: before that nothing can raise them)."""
    pa = sys.modules.get("pyarrow")
    return (OSError, EOFError, zlib.error) + ((pa.ArrowException,) if pa is not None else ())


@dataclass
class FilePlan:
    path: Path
    fmt: str
    compression: str
    size: int
    mtime: float
    start_line: int = 1
    start_offset: int = 0
    skip_leading_newline: bool = False
    ctx_session: str | None = None
    ctx_model: str | None = None
    ctx_turn: str | None = None
    chunked: bool = True  # read at most BATCH_BYTES per pass (False once a pass could not move forward)
    array: bool = False  # a line format's records saved as one JSON array: elements numbered 1.. as lines
    known: bool = False  # the file has a `files` row (else no rows: they are written with it, batch.py)


def _known(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[Any, ...]]:
    return {
        r[0]: r
        for r in con.execute(
            "SELECT path, source_format, size, mtime, consumed_bytes, head_hash, tail_hash, ends_newline, "
            "resume_line, resume_offset, ctx_session, ctx_model, ctx_turn FROM files"
        ).fetchall()
    }


def _unchanged(row: tuple[Any, ...] | None, kind: str | None, st: os.stat_result) -> bool:
    """Same format, size and modification time as at the last ingest: nothing to read."""
    return bool(row and row[1] == kind and row[2] == st.st_size and row[3] == st.st_mtime)


def all_unchanged(con: duckdb.DuckDBPyConnection, files: list[Path], fmt: str) -> int | None:
    """How many files there are when every one is unchanged since the last ingest; None as soon as one is
    not (or cannot be read): then plan() has work to do. Reads only, writes nothing."""
    known = _known(con)
    errors: tuple[type[BaseException], ...] = (RecursionError, *read_errors())
    for path in files:
        try:
            st = path.stat()
            kind = _kind(path, st, fmt)[0]
        except errors:
            return None
        if not _unchanged(known.get(str(path)), kind, st):
            return None
    return len(files)


def same_stats(con: duckdb.DuckDBPyConnection, files: list[Path]) -> int | None:
    """How many files there are when every one has a `files` row with its size and modification time (the
    stats _unchanged compares; the format is taken as recorded, nothing is read); None as soon as one has
    not. all_unchanged also detects each file's format: this is the console script's memo-hit check
    (stallscan.entry), which hands anything else to the full command."""
    return stats_match(con.execute(f"SELECT {STATS_COLUMNS} FROM files").fetchall(), files)


STATS_COLUMNS = "path, source_format, size, mtime"  # the `files` columns same_stats compares


def stats_match(rows: list[tuple[Any, ...]], files: list[Path]) -> int | None:
    """same_stats over the `files` rows (STATS_COLUMNS) already read."""
    known = {r[0]: r for r in rows}
    for path in files:
        try:
            st = path.stat()
        except OSError:
            return None
        row = known.get(str(path))
        if row is None or not _unchanged(row, row[1], st):
            return None
    return len(files)


def _kind(path: Path, st: os.stat_result, fmt: str) -> tuple[str | None, bool]:
    """The file's format and whether it is a JSON array of a line format's records (detect.detect); None for a
    0-byte file, whatever its name says (nothing to read: booked as empty, and a file read before loses its
    rows, see _record_unrecognized)."""
    if st.st_size == 0:
        return None, False
    return detect(path) if fmt == "auto" else (forced_format(path, fmt), False)


def plan(con: duckdb.DuckDBPyConnection, files: list[Path], fmt: str, res: IngestResult) -> list[FilePlan]:
    known = _known(con)
    plans = []
    for path in files:
        array = False
        try:
            st = path.stat()
            kind, array = _kind(path, st, fmt)
        except read_errors() as exc:
            res.unreadable.append((str(path), why_unreadable(exc)))
            continue
        except RecursionError:  # (detection skips records nested deeper than Python's json decodes)
            kind = None
        row = known.get(str(path))
        if _unchanged(row, kind, st):
            res.unchanged += 1
            continue
        if kind is None:
            status = "empty" if st.st_size == 0 else "unrecognized"
            if status == "unrecognized":
                res.unrecognized.append(str(path))
            else:
                res.empty += 1
            removed = _record_unrecognized(con, path, st, status, had_rows=bool(row and row[1] is not None))
            if removed:
                res.emptied.append((str(path), status, removed))
            continue
        # a format that cannot be read on from a line (appendable=False: aider, gemini_cli) is read in one
        # pass: a chunk boundary is such a resume point too (its session header / ids would be lost there)
        plan = FilePlan(
            path,
            kind,
            compression_of(path),
            st.st_size,
            st.st_mtime,
            array=array,
            chunked=SPECS[kind].appendable,
            known=row is not None,
        )
        if (
            not array
            and row
            and row[1] == kind
            and plan.compression == "none"
            and SPECS[kind].appendable
            and not SPECS[kind].whole_file
            and _same_prefix(path, row)
        ):
            plan.start_line, plan.start_offset = row[8], row[9]
            plan.skip_leading_newline = not row[7] and row[9] == row[4]
            plan.ctx_session, plan.ctx_model, plan.ctx_turn = row[10], row[11], row[12]
        plans.append(plan)
    return plans


def _same_prefix(path: Path, row: tuple[Any, ...]) -> bool:
    """True when the bytes consumed last time are still the file's first bytes (it only grew)."""
    consumed, head_hash, tail_hash = row[4], row[5], row[6]
    if consumed is None or row[8] is None or path.stat().st_size < consumed:
        return False
    head, tail = file_hashes(path, consumed)
    return bool(head == head_hash and tail == tail_hash)


def file_hashes(path: Path, consumed: int) -> tuple[str, str]:
    with open(path, "rb") as fh:
        head = fh.read(min(consumed, 65536))
        fh.seek(max(0, consumed - 4096))
        tail = fh.read(min(consumed, 4096))
    return hashlib.md5(head).hexdigest(), hashlib.md5(tail).hexdigest()


def _record_unrecognized(
    con: duckdb.DuckDBPyConnection, path: Path, st: os.stat_result, status: str, had_rows: bool = False
) -> int:
    """Book a file no format reads (or an empty one) so it is listed, not lost, and not re-read.

    A file read before (truncated to nothing, or rewritten as something that is no transcript) has its
    rows replaced with none: its events, skips and rejects are deleted with the `files` row's update in
    one transaction, and the sessions they belonged to are logged as changed (store/stamps.py), so the
    derived tables replay them. Returns how many rows were removed."""
    if not had_rows:
        con.execute(_BOOK, [str(path), compression_of(path), st.st_size, st.st_mtime, status])
        return 0
    from stallscan.store import sql, stamps

    con.execute("BEGIN TRANSACTION")
    try:
        removed = sum(
            int(con.execute(f"SELECT count(*) FROM {t} WHERE file = ?", [str(path)]).fetchall()[0][0])
            for t in ("events", "skipped", "rejects")
        )
        sql.run(con, "ingest/remove_file", {"file": str(path)})
        sql.run(con, "ingest/renumber_seq")
        con.execute(_BOOK, [str(path), compression_of(path), st.st_size, st.st_mtime, status])
        stamps.record_changes(con, "SELECT session_id FROM emptied")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.execute("DROP TABLE IF EXISTS emptied")
    return removed


_BOOK = (
    "INSERT OR REPLACE INTO files (path, source_format, compression, size, mtime, n_lines, n_event_lines, "
    "n_skipped, n_rejects, n_events, status, ingested_at) VALUES (?, NULL, ?, ?, ?, 0, 0, 0, 0, 0, ?, now())"
)


def why_unreadable(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc).strip().split("\n")[0] or type(exc).__name__


# a format whose conversation of record may live in a sibling file: Cline's ui_messages.json is read as
# the conversation only when its task folder has no api_conversation_history.json
COMPANIONS = {"cline_ui": "api_conversation_history.json"}


def has_companion(plan: FilePlan) -> bool:
    name = COMPANIONS.get(plan.fmt)
    return name is not None and (plan.path.parent / name).is_file()


def file_stem(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".zst", ".zstd", ".jsonl", ".json", ".ndjson", ".traj", ".log", ".txt", ".out"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name
