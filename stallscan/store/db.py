"""Open the stallscan database: create or check the schema, map DuckDB errors to user errors."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from stallscan.store import sql
from stallscan.store.errors import DatabaseError, DatabaseLocked, InputError, damaged_db
from stallscan.store.schema_check import SCHEMA_STAMP_KEY, check_version, schema_stamp
from stallscan.store.version import SCHEMA_VERSION, __version__

DEFAULT_DB = "stallscan.duckdb"
# the names of the incremental replays' scratch databases (stallscan.replay.derive: SCRATCH, and the report's second
# lane's); DuckDB names a database file's catalog after the file, so a file of one of these names cannot be used
SCRATCH_NAMES = ("stallscan_inc", "stallscan_inc_stalls")


MEMORY_BUDGET_CAP = 2 * 2**30  # a process's default budget: half the machine's memory, at most this
DUCKDB_SHARE = 0.6  # of that budget, DuckDB's memory_limit; the rest is Python's (the replay's column scans)


def memory_budget() -> int:
    """Bytes a stallscan process may use by default: half the machine's memory, at most 2 GiB
    ($STALLSCAN_MEMORY_BUDGET, e.g. 4GB or 4096MB, overrides)."""
    env = os.environ.get("STALLSCAN_MEMORY_BUDGET")
    if env:
        m = re.fullmatch(r"\s*([0-9.]+)\s*([KMG]?)B?\s*", env.upper())
        if m:
            return int(float(m.group(1)) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[m.group(2)])
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 4 * 2**30
    return int(min(total // 2, MEMORY_BUDGET_CAP))


def default_memory_limit() -> str:
    """DuckDB's memory_limit by default: its share of memory_budget(), in MB (at least 256MB)."""
    return f"{max(256, int(memory_budget() * DUCKDB_SHARE) // 2**20)}MB"


def default_db_path() -> str:
    return os.environ.get("STALLSCAN_DB") or DEFAULT_DB


def connect(
    path: str | os.PathLike[str] | None = None,
    read_only: bool = False,
    rebuild: bool = False,
    checked: bool = False,
    macros: bool = True,
) -> duckdb.DuckDBPyConnection:
    """Connect to a stallscan database (":memory:" for a throw-away one), schema ready, TimeZone UTC.

    A database from an older schema is upgraded in place when every step has a migration; otherwise
    opening it fails (exit 5) with the advice to re-ingest with --rebuild. `rebuild=True` drops every
    table and view first (the next ingest re-reads everything). `checked=True`: another write connection
    of this process, open while this one opens (so DuckDB shares its database and its file lock: nothing
    else wrote in between), already checked the schema and made it ready; the check is not repeated.
    `macros=False`: without the temp macros (redaction, truth) that only the report's and the read commands'
    queries call: a connection that only ingests (5-8 CPU ms a connection)."""
    target = str(path) if path is not None else default_db_path()
    if read_only and target != ":memory:" and not Path(target).exists():
        raise DatabaseError(f"no database at {target}", hint="run `stallscan ingest PATH` first, or pass --db")
    if target != ":memory:" and Path(target).exists() and not Path(target).is_file():
        raise InputError(  # (a FIFO would block the open until a writer comes; a device reads forever)
            f"database {target} is not a regular file", hint="pass the database file, e.g. --db stallscan.duckdb"
        )
    if not read_only and target != ":memory:" and Path(target).is_file() and (why := not_writable(target)):
        raise DatabaseError(
            f"cannot write database {target}: {why}",
            hint="ingest needs to write the file and its folder (DuckDB keeps a .wal next to it); report, show, "
            "sql, sweep and export read it as it is",
        )
    if target != ":memory:" and catalog_name(target).lower() in SCRATCH_NAMES:
        raise InputError(
            f"cannot use database {target}: the name {catalog_name(target)!r} is reserved for stallscan's "
            "incremental replays (DuckDB names a database after its file)",
            hint="rename the file (e.g. stallscan.duckdb) or pass another --db",
        )
    try:
        con = duckdb.connect(target, read_only=read_only)
    except duckdb.IOException as exc:  # lock held by another process, or unreadable file
        raise _io_error(target, exc) from None
    except duckdb.Error as exc:
        if "corrupt" in str(exc).lower() or "checksum" in str(exc).lower():
            raise damaged_db(_first_line(exc), target) from None
        raise DatabaseError(
            f"cannot open database {target}: {_first_line(exc)}",
            hint="is it a DuckDB file written by stallscan? use another --db",
        ) from None
    _session(con, macros=macros)
    if target != ":memory:":
        # spill files next to the database (same directory, same owner, the user's umask), never in /tmp
        con.execute("SET temp_directory = $d", {"d": str(Path(target).resolve()) + ".tmp"})
    if rebuild and not read_only:
        _drop_all(con)
    if checked and not read_only and not rebuild:
        return con
    current = check_version(con, target, read_only)
    if not read_only and not current:
        # tables and version stamp in one transaction: a process killed while creating a new database
        # leaves either nothing or a complete, stamped schema (never tables that look stale)
        con.execute("BEGIN TRANSACTION")
        try:
            sql.run(con, "store/schema")
            con.execute(
                "INSERT OR REPLACE INTO stallscan_meta VALUES ('schema_version', $v), ('writer', $w), "
                f"('{SCHEMA_STAMP_KEY}', $s)",
                {"v": str(SCHEMA_VERSION), "w": f"stallscan {__version__}", "s": schema_stamp()},
            )
            con.execute("COMMIT")
        except BaseException:
            sql.rollback(con)
            raise
    return con


def catalog_name(target: str) -> str:
    """The name DuckDB gives a database file's catalog: the file's name up to its first dot."""
    return Path(target).name.split(".")[0]


def threads() -> int:
    """Worker threads: $STALLSCAN_THREADS when set (a positive integer), else one per CPU."""
    return _threads_set() or max(1, os.cpu_count() or 1)


def _threads_set() -> int | None:
    env = os.environ.get("STALLSCAN_THREADS", "").strip()
    return int(env) if env.isdigit() and int(env) > 0 else None


@contextmanager
def one_thread(con: duckdb.DuckDBPyConnection, when: bool = True) -> Iterator[None]:
    """DuckDB's worker threads (a setting of the whole database: every connection and cursor of it) set to one for
    the block, then back to what they were; nothing when `when` is false or they are one already. For work made of
    many short statements over a few sessions' rows that already runs on two threads of its own (the report's
    lanes after one new session): there DuckDB's second worker only adds its tasks' set-up and hand-overs
    (docs/benchmarks.md "one23": 1.5-2.5 % of the whole report's instructions after one new session), never other rows."""
    if not when or threads() < 2:
        yield
        return
    # (fetchall: a result left unfinished blocks a register() on the connection after the block)
    was = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    if was < 2:
        yield
        return
    con.execute("SET threads = 1")
    failed = True
    try:
        yield
        failed = False
    finally:
        sql.after_failure(con, f"SET threads = {was}", failed)


def cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A second connection to con's database (its own transactions, temp tables and macros), set up as
    connect() sets up a connection. The database's own settings (memory_limit, threads) are not set again:
    they are the database's, which con's set-up set (a cursor's SET memory_limit cost up to 2 CPU ms)."""
    cur = con.cursor()
    _session(cur, shared=True)
    return cur


def _session(con: duckdb.DuckDBPyConnection, shared: bool = False, macros: bool = True) -> None:
    """The connection's settings and temp macros (not with macros=False); shared: a cursor of a database set up
    already (the global settings, memory_limit and threads, left as they are)."""
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")  # never draw on stdout (--json must stay clean)
    if not shared:
        # spill rather than grow: DuckDB's share of the process's budget (the replay's scans hold the rest)
        con.execute(f"SET memory_limit = '{os.environ.get('STALLSCAN_MEMORY_LIMIT') or default_memory_limit()}'")
        if _threads_set():  # DuckDB's worker threads (default: one per CPU)
            con.execute(f"SET threads = {_threads_set()}")
    if not macros:
        return
    from stallscan.store import redact

    redact.install(con)  # temp macros redact(t) / secret_leaks(t): every excerpt a report shows is masked
    sql.run(con, "store/truth_macros")  # truth(origin, is_human_turn) / truth_note(...): one vocabulary of truth


def not_writable(path: str | os.PathLike[str]) -> str | None:
    """Why this process cannot write the database file (None: it can): the file or its folder is read-only
    to this user, or the file system is mounted read-only (which stops root too)."""
    p = Path(path).resolve()
    for what, q in (("the file", p), ("its folder", p.parent)):
        if not os.access(q, os.W_OK):
            try:
                ro = bool(os.statvfs(q).f_flag & os.ST_RDONLY)
            except OSError:
                ro = False
            return f"{what} is on a read-only file system" if ro else f"{what} is not writable by this user"
    return None


def connect_copy(path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """A database this process may read but not write, for the read commands: every table copied into an
    in-memory database (schema, constraints and rows: COPY FROM DATABASE), where the derived tables are
    brought up to date as usual; nothing is written back. Opened read-only first, so a missing, locked,
    damaged or stale database fails as connect() says."""
    target = str(path)
    connect(target, read_only=True).close()
    con = duckdb.connect(":memory:")
    try:
        con.execute("ATTACH $p AS src (READ_ONLY)", {"p": target})
        try:
            con.execute("COPY FROM DATABASE src TO memory")
        finally:
            con.execute("DETACH src")
    except duckdb.IOException as exc:
        con.close()
        raise _io_error(target, exc) from None
    except BaseException:
        con.close()
        raise
    _session(con)
    return con


def peek(path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection | None:
    """A read-only connection for lookups in stallscan's own bookkeeping (the no-change ingest, the report
    memo), or None when the file cannot be opened read-only (missing, locked, not DuckDB) or holds another
    schema version: then connect() upgrades it or says why not. Unlike connect(), it skips the column-by-
    column schema comparison and the redaction macros (half of the open's time); TimeZone is UTC as there.
    Only a regular file is opened: a FIFO would block the open, a device read forever."""
    try:
        if not Path(path).is_file():
            return None
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return None
    try:
        row = sql.first(con.execute("SELECT value FROM stallscan_meta WHERE key = 'schema_version'"))
        if row is None or row[0] != str(SCHEMA_VERSION):
            con.close()
            return None
        con.execute("SET TimeZone = 'UTC'")
    except duckdb.Error:
        con.close()
        return None
    return con


def _drop_all(con: duckdb.DuckDBPyConnection) -> None:
    """--rebuild: drop every view and table of the database (all derived from the transcripts)."""
    con.execute("BEGIN TRANSACTION")
    for (name,) in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary AND schema_name = 'main'"
    ).fetchall():
        con.execute(f'DROP VIEW IF EXISTS "{name}"')
    for (name,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE NOT temporary AND schema_name = 'main'"
    ).fetchall():
        con.execute(f'DROP TABLE IF EXISTS "{name}"')
    con.execute("COMMIT")


def _io_error(target: str, exc: Exception) -> Exception:
    msg = str(exc)
    if "lock" in msg.lower():
        pid = re.search(r"PID (\d+)", msg)
        who = f"process {pid.group(1)}" if pid else "another process"
        return DatabaseLocked(
            f"database {target} is locked by {who}", hint="wait for that stallscan to finish, or use another --db"
        )
    if "not a valid duckdb database" in msg.lower():
        return damaged_db(_first_line(exc) + " (a damaged header, or not a database)", target)
    return DatabaseError(
        f"cannot open database {target}: {_first_line(exc)}", hint="check the path and its permissions"
    )


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
