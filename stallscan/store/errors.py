"""Errors a user can cause, each with a documented exit code and a hint.

Exit codes (also in docs/errors.md):
  0  success
  1  ingest finished but --strict and some lines were rejected
  2  usage error (bad option, unknown format, nothing to ingest)
  3  input path missing or unreadable
  4  database locked by another process
  5  database written by a newer stallscan schema (or not a stallscan database)
  6  database error (corrupt file, disk full, ...)
"""

from __future__ import annotations

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
