"""Load the SQL files in queries/ (one concern a file, `$named` parameters)."""

from __future__ import annotations

import os
import re
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any

import duckdb


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
    """Run every statement of a query file; each gets only the parameters it names.

    STALLSCAN_SQL_TIMING=1 prints each statement's seconds to stderr (file, statement number, first line)."""
    timing = bool(os.environ.get("STALLSCAN_SQL_TIMING"))
    for i, stmt in enumerate(load(name), 1):
        used = {k: v for k, v in (params or {}).items() if re.search(r"\$" + k + r"\b", stmt)}
        t0 = time.perf_counter() if timing else 0.0
        con.execute(stmt, used) if used else con.execute(stmt)
        if timing:
            head = next((l for l in stmt.splitlines() if l.strip() and not l.lstrip().startswith("--")), "")
            print(f"sql {time.perf_counter() - t0:8.3f} s  {name}#{i}  {head.strip()[:70]}", file=sys.stderr)


def query(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None) -> duckdb.DuckDBPyConnection:
    """Run a single-statement query file and return the relation result."""
    stmts = load(name)
    if len(stmts) != 1:
        raise ValueError(f"{name}.sql holds {len(stmts)} statements; query() needs one")
    stmt = stmts[0]
    used = {k: v for k, v in (params or {}).items() if re.search(r"\$" + k + r"\b", stmt)}
    return con.execute(stmt, used) if used else con.execute(stmt)


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
