"""Load the SQL files in queries/ (one concern a file, `$named` parameters)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import duckdb

# $STALLSCAN_PROFILE=1: every statement run() executes, and every timed() step, adds its wall seconds
# here under "stage/name#i" (statement i of the file) or the step's label; report() prints them to stderr
PROFILE: dict[str, list[float]] | None = {} if os.environ.get("STALLSCAN_PROFILE") else None


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """ROLLBACK after a failed statement without hiding its error: once a write failed (a full disk, say)
    DuckDB may have no transaction left or have invalidated the connection, and the ROLLBACK's own error
    ("cannot rollback - no transaction is active") would replace the real cause. Also turns back on the
    optimizer rules a query file turns off around one statement (queries/ingest/ingest_commit.sql,
    queries/replay/stall_rounds.sql): when that statement failed, the file's own RESET did not run, and in an
    aborted transaction it could not."""
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")
    with contextlib.suppress(duckdb.Error):
        con.execute("RESET disabled_optimizers")
    with contextlib.suppress(duckdb.Error):  # (queries/replay/stall_rounds.sql: this connection's setting)
        con.execute("RESET SESSION preserve_insertion_order")
    with contextlib.suppress(duckdb.Error):  # (the parse views a rolled-back batch made are gone: ingest/parse_batch)
        con.execute("RESET VARIABLE parse_views")


def after_failure(con: duckdb.DuckDBPyConnection, statement: str, failed: bool) -> None:
    """A clean-up statement of a `finally:`; when the block failed, its own error must not hide the first."""
    try:
        con.execute(statement)
    except duckdb.Error:
        if not failed:
            raise


@contextmanager
def timed(label: str) -> Iterator[None]:
    """Add the wall time of the block to PROFILE under `label` (nothing when profiling is off)."""
    if PROFILE is None:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        entry = PROFILE.setdefault(label, [0.0, 0])  # (one look-up: report() may take the label meanwhile)
        entry[0] += time.perf_counter() - t0
        entry[1] += 1


def report(title: str) -> None:
    """Print the collected timings (largest first) to stderr and clear them. The title is printed also when
    nothing was timed: two threads' steps (stallscan.report.build's lanes) go to one PROFILE, and the other's
    report may have printed and cleared this one's."""
    if PROFILE is None:
        return
    taken = PROFILE.copy()  # (atomic under the GIL: the other thread may add steps meanwhile)
    for label in taken:
        PROFILE.pop(label, None)
    total = sum(v[0] for v in taken.values())
    sys.stderr.write(f"-- {title}: {total:.2f} s in timed steps\n")
    for label, (secs, n) in sorted(taken.items(), key=lambda kv: -kv[1][0]):
        sys.stderr.write(f"{secs:8.3f} s {int(n):5d}x  {label}\n")


def queries_dir() -> Path:
    """queries/ inside the wheel (stallscan/queries), else the source tree's top-level queries/."""
    package = Path(__file__).resolve().parents[1]
    packaged = package / "queries"
    if packaged.is_dir():
        return packaged
    return package.parent / "queries"


@cache
def load(name: str) -> list[str]:
    """Statements of queries/<stage>/<name>.sql (name given as "stage/name"), split at `;` that ends a line."""
    text = (queries_dir() / f"{name}.sql").read_text(encoding="utf-8")
    parts = re.split(r";[ \t]*(?:--[^\n]*)?\n", text + "\n")
    out = []
    for part in parts:
        body = "\n".join(l for l in part.splitlines() if not l.strip().startswith("--")).strip()
        if body:
            out.append(part.strip())
    return out


def run(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None) -> None:
    """Run every statement of a query file; each gets only the parameters it names."""
    for i, stmt in enumerate(load(name)):
        used = {k: v for k, v in (params or {}).items() if re.search(r"\$" + k + r"\b", stmt)}
        with timed(f"{name}#{i}"):
            con.execute(stmt, used) if used else con.execute(stmt)


def query(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None) -> duckdb.DuckDBPyConnection:
    """Run a single-statement query file and return the relation result."""
    stmts = load(name)
    if len(stmts) != 1:
        raise ValueError(f"{name}.sql holds {len(stmts)} statements; query() needs one")
    stmt = stmts[0]
    used = {k: v for k, v in (params or {}).items() if re.search(r"\$" + k + r"\b", stmt)}
    return con.execute(stmt, used) if used else con.execute(stmt)


def first(res: duckdb.DuckDBPyConnection) -> tuple[Any, ...] | None:
    """The first row of an executed query (None when it has none), its whole result read. `fetchone()` leaves the
    result open on the connection: a `register()` after it is refused, and a CHECKPOINT on another cursor can be
    refused while it is (docs/benchmarks.md, "lead23"). For a query that always returns one row:
    `.fetchall()[0]`. (stallscan/replay/ keeps four fetchone() calls: its modules are in the rules hash, so an edit
    there replays every database once; its scans complete any open result before they fetch: replay/scan.py.)"""
    rows = res.fetchall()
    return rows[0] if rows else None


def union_all(con: duckdb.DuckDBPyConnection, into: str, name: str, params: list[dict[str, Any]]) -> None:
    """Append to table `into` the rows of queries/<name>.sql's one SELECT run once per parameter set of
    `params`, in one INSERT: the copies joined by UNION ALL, copy i's parameters renamed $<param>_i. Each copy
    keeps its constant parameters (a regex is compiled once per copy, as in a statement of its own), and one
    statement is parsed, planned and committed instead of one per set. After one new session the stall replay's
    31 signatures took 0.069 s of wall in 31 statements, most of it DuckDB compiling the regexes (about 2 ms
    each, which stays); one statement saved 0.02-0.03 CPU s of the replay."""
    if not params:
        return
    (select,) = load(name)
    select = "\n".join(line for line in select.splitlines() if not line.lstrip().startswith("--"))
    names = sorted({k for p in params for k in p}, key=len, reverse=True)
    own = re.compile(r"\$(" + "|".join(map(re.escape, names)) + r")\b")
    parts: list[str] = []
    values: dict[str, Any] = {}
    for i, p in enumerate(params):
        parts.append(own.sub(rf"$\g<1>_{i}", select))
        values.update({f"{k}_{i}": v for k, v in p.items() if re.search(r"\$" + k + r"\b", select)})
    with timed(name):
        con.execute(f"INSERT INTO {into}\n" + "\nUNION ALL\n".join(parts), values)


def relation(
    con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None
) -> duckdb.DuckDBPyRelation:
    """A single-statement query file as a relation (for arrow / polars output without a row copy)."""
    stmts = load(name)
    if len(stmts) != 1:
        raise ValueError(f"{name}.sql holds {len(stmts)} statements; relation() needs one")
    stmt = stmts[0]
    used = {k: v for k, v in (params or {}).items() if re.search(r"\$" + k + r"\b", stmt)}
    return con.sql(stmt, params=used) if used else con.sql(stmt)


def has_table(
    con: duckdb.DuckDBPyConnection, name: str, schema: str | None = "main", temporary: bool | None = False
) -> bool:
    """Whether table (or view) `name` exists: in `schema` of the current database (schema=None: in any schema of
    any attached database); temporary=False: a stored table only, True: a temporary one only, None: either."""
    return any(
        t == name and (schema is None or (s == schema and d == here)) and (temporary is None or tmp == temporary)
        for d, s, tmp, t, here in _catalog(con)
    )


def _catalog(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, bool, str, str]]:
    """Every table and view (not DuckDB's internal views): database, schema, temporary, name, and the current
    database's name. Filtered here, not in SQL: a WHERE over the catalog functions (list_contains of the
    names, the schema) cost about twice the unfiltered rows (2-3 against 4-6 CPU ms at 29 tables), and the
    report after one new session runs over 50 such look-ups."""
    return con.execute(
        "SELECT database_name, schema_name, temporary, table_name, current_database() FROM duckdb_tables() "
        "UNION ALL SELECT database_name, schema_name, temporary, view_name, current_database() FROM duckdb_views() "
        "WHERE NOT internal"
    ).fetchall()


def anywhere(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The names of every table and view in any schema of any attached database, temporary ones included: what
    has_table(con, name, schema=None, temporary=None) asks of one name, for several in one catalog query."""
    return {t for _d, _s, _tmp, t, _here in _catalog(con)}


def main_tables(con: duckdb.DuckDBPyConnection) -> tuple[str, set[str]]:
    """The current database's name and the names of every stored table and view in its schema main (one catalog
    query: each costs a few ms, the catalog functions describe every table); stallscan.store.stamps keeps them."""
    here, names = "", set()
    for d, s, tmp, t, cur in _catalog(con):
        here = cur
        if s == "main" and d == cur and not tmp:
            names.add(t)
    return here, names


def drop_stored_table(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Drop table `name` of the current schema when there is one: a database written before a derived table
    became a view (rounds, turn_boundaries, turn_boundary_variants) holds a table of the view's name."""
    stored = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = current_schema() AND table_name = $n",
        {"n": name},
    ).fetchall()[0]
    if stored and stored[0]:
        con.execute(f"DROP TABLE {name}")


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, types: dict[str, str], rows: list[dict[str, Any]]) -> None:
    """Append `rows` (each a dict by column) to `table` in one INSERT: the rows as one JSON parameter that
    from_json casts to `types` (column -> DuckDB type, in the table's column order). executemany would run one
    INSERT per row (about 0.35 s per call for the prompt library), and an Arrow table built from lists imports
    pandas."""
    if not rows:
        return
    shape = json.dumps([types]).replace("'", "''")
    con.execute(
        f"INSERT INTO {table} SELECT r.* FROM (SELECT unnest(from_json(?, '{shape}')) AS r)",
        [json.dumps([{c: r[c] for c in types} for r in rows])],
    )
