"""Open the stallscan database: create or check the schema, map DuckDB errors to user errors."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Collection
from pathlib import Path
from typing import cast

import duckdb

from stallscan.store import sql
from stallscan.store.errors import DatabaseError, DatabaseLocked, InputError, SchemaError, damaged_db
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


# In-place upgrades: MIGRATIONS[v] is the SQL that turns a schema-v database into schema v+1 without
# making any stored row wrong. A step that is missing (None) means rows written by the older version
# may be wrong under the new one (a parser fix, a new column only a re-read can fill): such a
# database must be re-ingested with `stallscan ingest --rebuild`.
MIGRATIONS: dict[int, str | None] = {
    0: None,  # unversioned databases (before stallscan_meta)
    1: None,  # 2: a reply is a run of one message.id inside one session; multi-message lines counted once;
    #    Codex / OpenAI records that made no event are rejects; timestamps outside 1970..2199 NULL
}
BASE_TABLES = ("events", "files", "skipped", "rejects")


def connect(
    path: str | os.PathLike[str] | None = None,
    read_only: bool = False,
    rebuild: bool = False,
    checked: bool = False,
) -> duckdb.DuckDBPyConnection:
    """Connect to a stallscan database (":memory:" for a throw-away one), schema ready, TimeZone UTC.

    A database from an older schema is upgraded in place when every step has a migration; otherwise
    opening it fails (exit 5) with the advice to re-ingest with --rebuild. `rebuild=True` drops every
    table and view first (the next ingest re-reads everything). `checked=True`: another write connection
    of this process, open while this one opens (so DuckDB shares its database and its file lock: nothing
    else wrote in between), already checked the schema and made it ready; the check is not repeated."""
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
    _session(con)
    if target != ":memory:":
        # spill files next to the database (same directory, same owner, the user's umask), never in /tmp
        con.execute("SET temp_directory = $d", {"d": str(Path(target).resolve()) + ".tmp"})
    if rebuild and not read_only:
        _drop_all(con)
    if checked and not read_only and not rebuild:
        return con
    current = _check_version(con, target, read_only)
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


def cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A second connection to con's database (its own transactions, temp tables and macros), set up as
    connect() sets up a connection. The database's own settings (memory_limit, threads) are not set again:
    they are the database's, which con's set-up set (a cursor's SET memory_limit cost up to 2 CPU ms)."""
    cur = con.cursor()
    _session(cur, shared=True)
    return cur


def _session(con: duckdb.DuckDBPyConnection, shared: bool = False) -> None:
    """The connection's settings and temp macros; shared: a cursor of a database set up already (the global
    settings, memory_limit and threads, left as they are)."""
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")  # never draw on stdout (--json must stay clean)
    if not shared:
        # spill rather than grow: DuckDB's share of the process's budget (the replay's scans hold the rest)
        con.execute(f"SET memory_limit = '{os.environ.get('STALLSCAN_MEMORY_LIMIT') or default_memory_limit()}'")
        if _threads_set():  # DuckDB's worker threads (default: one per CPU)
            con.execute(f"SET threads = {_threads_set()}")
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
        row = con.execute("SELECT value FROM stallscan_meta WHERE key = 'schema_version'").fetchone()
        if row is None or row[0] != str(SCHEMA_VERSION):
            con.close()
            return None
        con.execute("SET TimeZone = 'UTC'")
    except duckdb.Error:
        con.close()
        return None
    return con


# stallscan_meta's key for schema_stamp(): the schema file and versions whose statements last ran on the database
SCHEMA_STAMP_KEY = "schema_stamp"
_STAMP: list[str] = []


def schema_stamp() -> str:
    """A checksum of queries/store/schema.sql and the versions: a write connection runs that file (14 statements
    and a commit, about 9 CPU ms) only when the database's stamp differs or a base table or the view is missing."""
    if not _STAMP:
        text = (sql.queries_dir() / "store" / "schema.sql").read_bytes()
        _STAMP.append(hashlib.sha256(text + f"\0{__version__}\0{SCHEMA_VERSION}".encode()).hexdigest()[:16])
    return _STAMP[0]


def _check_version(con: duckdb.DuckDBPyConnection, target: str, read_only: bool = False) -> bool:
    """SchemaError for another schema or stale columns (a write connection upgrades what has every migration);
    returns whether schema_stamp() is the database's and its base tables and the sessions view are there."""
    tables = {
        r[0]
        for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()
    }
    if not tables & (set(BASE_TABLES) | {"stallscan_meta"}):
        return False  # a new database
    meta: dict[str, str] = {}
    if "stallscan_meta" in tables:
        meta = dict(
            con.execute(
                "SELECT key, value FROM stallscan_meta WHERE key IN ('schema_version', $k)", {"k": SCHEMA_STAMP_KEY}
            ).fetchall()
        )
    row = (meta["schema_version"],) if "schema_version" in meta else None
    stored = int(row[0]) if row and str(row[0]).isdigit() else 0
    if stored > SCHEMA_VERSION:
        con.close()
        raise SchemaError(
            f"database {target} was written by a newer stallscan (schema {stored}, this one reads {SCHEMA_VERSION})",
            hint="upgrade stallscan, or ingest into a new file with --db",
        )
    steps = [MIGRATIONS.get(v) for v in range(stored, SCHEMA_VERSION)]
    drift = _column_drift(con, tables)
    if stored < SCHEMA_VERSION and all(steps) and not read_only:
        con.execute("BEGIN TRANSACTION")
        for step in steps:
            con.execute(cast(str, step))  # all(steps): none is None
        con.execute("INSERT OR REPLACE INTO stallscan_meta VALUES ('schema_version', $v)", {"v": str(SCHEMA_VERSION)})
        con.execute("COMMIT")
        stored = SCHEMA_VERSION
        drift = _column_drift(con, tables)
    elif stored < SCHEMA_VERSION and all(steps):
        drift = drift or [f"schema {stored} needs an upgrade"]
    if stored < SCHEMA_VERSION or drift:
        con.close()
        what = "; ".join(drift) if drift else "rows written by it may be wrong for this version"
        raise SchemaError(
            f"database {target} was written by stallscan schema {stored} (this one uses {SCHEMA_VERSION}): "
            f"its tables are stale ({what})",
            hint=f"re-ingest: stallscan ingest PATH --rebuild --db {target} (drops the tables and re-reads "
            "every file), or use a new --db",
        )
    return meta.get(SCHEMA_STAMP_KEY) == schema_stamp() and {*BASE_TABLES, "stallscan_meta", "sessions"} <= tables


EXPECTED_PREFIX = "stallscan_expected_"  # the temp tables _expected_columns makes (and drops) on the checked connection
_EXPECTED: list[dict[str, list[tuple[str, str]]]] = []  # its answer, found once per process


def _expected_columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    """The columns (name, DuckDB's type name) queries/store/schema.sql gives each base table: its CREATE TABLE
    statements run as temp tables of `con` (EXPECTED_PREFIX + name), read from the catalog and dropped. A
    second, in-memory database for them cost 0.03-0.045 CPU s to open; a schema statement of another shape
    still runs there."""
    if not _EXPECTED:
        _EXPECTED.append(_expected_here(con) or _expected_apart())
    return _EXPECTED[0]


def _expected_here(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]] | None:
    made: list[str] = []
    try:
        for stmt in sql.load("store/schema"):  # its tables only (the view and macros add no column)
            if not re.match(r"(?:\s|--[^\n]*\n)*CREATE TABLE ", stmt):
                continue
            head = re.match(r"(?:\s|--[^\n]*\n)*CREATE TABLE IF NOT EXISTS (\w+) \(", stmt)
            if head is None:
                return None
            made.append(head.group(1))
            con.execute(f"CREATE OR REPLACE TEMP TABLE {EXPECTED_PREFIX}{head.group(1)} (" + stmt[head.end() :])
        out: dict[str, list[tuple[str, str]]] = {}
        for name, col, typ in con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_catalog = 'temp' AND table_schema = 'main' AND starts_with(table_name, $p) "
            "ORDER BY table_name, ordinal_position",
            {"p": EXPECTED_PREFIX},
        ).fetchall():
            if name[len(EXPECTED_PREFIX) :] in BASE_TABLES:
                out.setdefault(name[len(EXPECTED_PREFIX) :], []).append((col, typ))
        return out
    except duckdb.Error:
        return None
    finally:
        for name in made:
            sql.after_failure(con, f"DROP TABLE IF EXISTS temp.{EXPECTED_PREFIX}{name}", True)


def _expected_apart() -> dict[str, list[tuple[str, str]]]:
    scratch = duckdb.connect(":memory:")
    try:
        for stmt in sql.load("store/schema"):
            if re.match(r"(?:\s|--[^\n]*\n)*CREATE TABLE ", stmt):
                scratch.execute(stmt)
        return _columns(scratch, BASE_TABLES)
    finally:
        scratch.close()


def _columns(con: duckdb.DuckDBPyConnection, tables: Collection[str]) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for name, col, typ in con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
    ).fetchall():
        if name in tables:
            out.setdefault(name, []).append((col, typ))
    return out


def _column_drift(con: duckdb.DuckDBPyConnection, tables: set[str]) -> list[str]:
    """How the stored tables differ from queries/store/schema.sql ([] when they match)."""
    want = _expected_columns(con)
    have = _columns(con, tables)
    out = []
    for table, cols in want.items():
        if table not in have:
            if tables & set(BASE_TABLES):
                out.append(f"table {table} missing")
            continue
        missing = [c for c, _ in cols if c not in dict(have[table])]
        extra = [c for c, _ in have[table] if c not in dict(cols)]
        retyped = [c for c, t in cols if c in dict(have[table]) and dict(have[table])[c] != t]
        if missing:
            out.append(f"{table} lacks {', '.join(missing)}")
        if extra:
            out.append(f"{table} has unknown {', '.join(extra)}")
        if retyped:
            out.append(f"{table}.{', '.join(retyped)} changed type")
        if not (missing or extra or retyped) and [c for c, _ in have[table]] != [c for c, _ in cols]:
            out.append(f"{table} columns out of order")
    return out


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
