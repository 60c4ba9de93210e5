"""The database's schema against this code's: the version and its in-place migrations, the base tables'
columns against queries/store/schema.sql, and the stamp that lets a write connection skip running that file."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Collection
from functools import cache
from typing import cast

import duckdb

from stallscan.store import sql
from stallscan.store.errors import SchemaError
from stallscan.store.version import SCHEMA_VERSION, __version__

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


# stallscan_meta's key for schema_stamp(): the schema file and versions whose statements last ran on the database
SCHEMA_STAMP_KEY = "schema_stamp"
_STAMP: list[str] = []


@cache
def _schema_text() -> bytes:
    return (sql.queries_dir() / "store" / "schema.sql").read_bytes()


def schema_sha() -> str:
    """The start of queries/store/schema.sql's sha256 (the name of the columns kept for it: _kept_path)."""
    return hashlib.sha256(_schema_text()).hexdigest()[:16]


def schema_stamp() -> str:
    """A checksum of queries/store/schema.sql and the versions: a write connection runs that file (14 statements
    and a commit, about 9 CPU ms) only when the database's stamp differs or a base table or the view is missing."""
    if not _STAMP:
        text = _schema_text()
        _STAMP.append(hashlib.sha256(text + f"\0{__version__}\0{SCHEMA_VERSION}".encode()).hexdigest()[:16])
    return _STAMP[0]


def check_version(con: duckdb.DuckDBPyConnection, target: str, read_only: bool = False) -> bool:
    """SchemaError for another schema or stale columns (a write connection upgrades what has every migration);
    returns whether schema_stamp() is the database's and its base tables and the sessions view are there."""
    # (the catalog functions, not information_schema's views over them: about half the CPU, docs/benchmarks.md "one27")
    tables = sql.main_tables(con)[1]
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
        cols = _kept_columns()
        if cols is None:
            cols = _expected_here(con) or _expected_apart()
            _keep_columns(cols)
        _EXPECTED.append(cols)
    return _EXPECTED[0]


def _kept_path() -> str:
    """<cache>/schema-columns-<schema.sql's sha256>-<DuckDB version>.json (the cache of stallscan.store.toml_cache):
    the columns depend on the schema file and on how this DuckDB names types, nothing else."""
    from stallscan.store.toml_cache import cache_dir

    return os.path.join(cache_dir(), f"schema-columns-{schema_sha()}-{duckdb.__version__}.json")


def _kept_columns() -> dict[str, list[tuple[str, str]]] | None:
    """The columns an earlier command found for this schema file and DuckDB version (the temp tables' 11 statements,
    about 5 CPU ms on a command's first connection, not run again); None when none were kept or the copy is not
    one (the columns are then found as before and kept anew)."""
    try:
        with open(_kept_path(), encoding="utf-8") as fh:
            doc = json.load(fh)
        cols = {str(t): [(str(c), str(ty)) for c, ty in v] for t, v in doc.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    return cols if set(cols) == set(BASE_TABLES) and all(cols.values()) else None


def _keep_columns(cols: dict[str, list[tuple[str, str]]]) -> None:
    """Write the columns found for _kept_columns (written whole, then renamed: a reader never sees half); an
    unwritable cache only means finding them again next time."""
    path = _kept_path()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(cols, fh)
        os.replace(tmp, path)
    except OSError:
        pass


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
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name, column_index"
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
