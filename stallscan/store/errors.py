"""Errors a user can cause, each with a documented exit code and a hint.

Exit codes (also in docs/errors.md):
  0  success
  1  ingest / report finished but --strict and some lines were rejected, a file was in no known format, a
     record of a known format had a shape its reader does not know (unknown_shape), or a forced
     --input-format matched nothing in a file
  2  usage error (bad option, unknown format), nothing found to ingest, no event in a report's scope
  3  input path missing or unreadable (a file name that is not UTF-8, a --db that is a FIFO or device)
  4  database locked by another process
  5  database written by a newer stallscan schema (or not a stallscan database)
  6  database error: no space left on the disk (disk_full), a damaged database (damaged_db), a database
     ingest cannot write (read-only), others
"""

from __future__ import annotations

import os
import re

EXIT_OK = 0
EXIT_REJECTS = 1
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_LOCKED = 4
EXIT_SCHEMA = 5
EXIT_DB = 6


class StallscanError(Exception):
    """An error with a one-line message, a hint and an exit code."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, hint: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class InputError(StallscanError):
    exit_code = EXIT_INPUT


class DatabaseLocked(StallscanError):
    exit_code = EXIT_LOCKED


class SchemaError(StallscanError):
    exit_code = EXIT_SCHEMA


class DatabaseError(StallscanError):
    exit_code = EXIT_DB


_NO_SPACE = ("no space left on device", "disk full", "not enough space", "file too large")
_CORRUPT = ("corrupt database file", "checksum", "invalid block", "failed to read block")
_WRITE_PATH = re.compile(r'(?:write|open|create|extend|truncate) file \\?"([^"\\]+)', re.IGNORECASE)


def no_space(message: str) -> bool:
    low = message.lower()
    return any(k in low for k in _NO_SPACE)


def corrupt(message: str) -> bool:
    low = message.lower()
    return any(k in low for k in _CORRUPT)


def disk_full(message: str, path: str | None = None) -> StallscanError:
    """A write that ran out of space (ENOSPC, or the file size limit): the disk, not the database, is at
    fault, and what was committed before is intact."""
    where = path
    if where is None:
        m = _WRITE_PATH.search(message)
        where = m.group(1) if m else None
    folder = os.path.dirname(os.path.abspath(where)) if where else None
    first = message.strip().splitlines()[0] if message.strip() else "no space left on device"
    return StallscanError(
        f"no space left to write{' in ' + folder if folder else ''}: {first}",
        hint=(f"free space on that disk (df -h {folder})" if folder else "free space on the disk")
        + ", or write to another disk; the database keeps everything committed before: then re-run the command",
        exit_code=EXIT_DB,
    )


def damaged_db(message: str, db: str | None) -> StallscanError:
    first = message.strip().splitlines()[0] if message.strip() else "damaged"
    name = db or "the database"
    return DatabaseError(
        f"database {name} is damaged: {first}",
        hint=f"`stallscan check --db {name}` reads every block and says which table; the database holds only what "
        f"ingest derived from the transcripts: move it aside and ingest again (mv {name} {name}.damaged && "
        f"stallscan ingest PATH --db {name})",
    )


def from_db_error(message: str, db: str | None = None) -> StallscanError:
    """A DuckDB error as the user error it is: a full disk, a damaged database, or another database error."""
    if no_space(message):
        return disk_full(message)
    if corrupt(message):
        return damaged_db(message, db)
    first = message.strip().splitlines()[0] if message.strip() else "unknown"
    return DatabaseError(
        f"database error: {first}",
        hint="if the database file may be damaged, `stallscan check` reads every block and says what to do",
    )
