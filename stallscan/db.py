"""Open the stallscan database: create or check the schema, map DuckDB errors to user errors."""
from __future__ import annotations

import os
import re
from pathlib import Path

import duckdb

from . import SCHEMA_VERSION, __version__
from . import sql
from .errors import DatabaseError, DatabaseLocked, SchemaError

DEFAULT_DB = "stallscan.duckdb"


def default_db_path() -> str:
    return os.environ.get("STALLSCAN_DB") or DEFAULT_DB


def connect(path: str | os.PathLike | None = None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Connect to a stallscan database (":memory:" for a throw-away one), schema ready, TimeZone UTC."""
    target = str(path) if path is not None else default_db_path()
    if read_only and target != ":memory:" and not Path(target).exists():
        raise DatabaseError(f"no database at {target}", hint="run `stallscan ingest PATH` first, or pass --db")
    try:
        con = duckdb.connect(target, read_only=read_only)
    except duckdb.IOException as exc:  # lock held by another process, or unreadable file
        raise _io_error(target, exc) from None
    except duckdb.Error as exc:
        raise DatabaseError(f"cannot open database {target}: {_first_line(exc)}",
                            hint="is it a DuckDB file written by stallscan? use another --db") from None
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")  # never draw on stdout (--json must stay clean)
    _check_version(con, target)
    if not read_only:
        sql.run(con, "schema")
        con.execute("INSERT OR REPLACE INTO stallscan_meta VALUES ('schema_version', $v), ('writer', $w)",
                    {"v": str(SCHEMA_VERSION), "w": f"stallscan {__version__}"})
    return con


def _check_version(con: duckdb.DuckDBPyConnection, target: str) -> None:
    has_meta = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'stallscan_meta'").fetchone()[0]
    if not has_meta:
        return
    row = con.execute("SELECT value FROM stallscan_meta WHERE key = 'schema_version'").fetchone()
    if row and int(row[0]) > SCHEMA_VERSION:
        con.close()
        raise SchemaError(
            f"database {target} was written by a newer stallscan (schema {row[0]}, this one reads {SCHEMA_VERSION})",
            hint="upgrade stallscan, or ingest into a new file with --db")


def _io_error(target: str, exc: Exception) -> Exception:
    msg = str(exc)
    if "lock" in msg.lower():
        pid = re.search(r"PID (\d+)", msg)
        who = f"process {pid.group(1)}" if pid else "another process"
        return DatabaseLocked(f"database {target} is locked by {who}",
                              hint="wait for that stallscan to finish, or use another --db")
    return DatabaseError(f"cannot open database {target}: {_first_line(exc)}",
                         hint="check the path and its permissions")


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
