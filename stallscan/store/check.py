"""`stallscan check`: read every stored value of every table, so that DuckDB verifies the checksum of every
data block on the way (it checks a block each time it loads one from the file), and say what to do.

A query reads only the blocks of the columns and row groups it needs: a damaged block of `events.text`
goes unnoticed by a report that counts sessions. `check_tables(con)` scans each table once, hashing every
column of every row (`bit_xor(hash(COLUMNS(*)))`), so each of its data blocks is loaded and verified.
`check_file(path)` opens the file read-only on a connection of its own (no block is served from another
connection's cache) and runs it. Not covered: the blocks of the `files` primary-key index (rebuilt from
the table by any re-ingest) and free blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from stallscan.store.errors import DatabaseError, no_space


@dataclass
class TableCheck:
    name: str
    rows: int | None  # None when the scan failed
    columns: int
    error: str | None = None


@dataclass
class CheckResult:
    path: str
    tables: list[TableCheck] = field(default_factory=list)
    error: str | None = None  # the database could not be opened at all

    @property
    def ok(self) -> bool:
        return self.error is None and all(t.error is None for t in self.tables)

    @property
    def damaged(self) -> list[str]:
        return [t.name for t in self.tables if t.error is not None]

    def as_dict(self) -> dict[str, Any]:
        return {
            "database": self.path,
            "ok": self.ok,
            "error": self.error,
            "tables": [{"table": t.name, "rows": t.rows, "columns": t.columns, "error": t.error} for t in self.tables],
        }


def check_tables(con: duckdb.DuckDBPyConnection) -> list[TableCheck]:
    """Scan every stored table of the `main` schema, every column of every row; one entry a table."""
    tables = con.execute(
        "SELECT table_name, column_count FROM duckdb_tables() WHERE NOT temporary AND schema_name = 'main' "
        "ORDER BY table_name"
    ).fetchall()
    out = []
    for name, ncols in tables:
        try:
            rows = con.execute(f'SELECT count(*), bit_xor(hash(COLUMNS(*))) FROM main."{name}"').fetchall()[0][0]
            out.append(TableCheck(name, int(rows), int(ncols)))
        except duckdb.Error as exc:
            if no_space(str(exc)):
                raise
            out.append(TableCheck(name, None, int(ncols), _first_line(exc)))
    return out


def check_file(path: str) -> CheckResult:
    """Open `path` read-only and check every table; a file DuckDB cannot open is reported, not raised
    (a lock held by another process is: the file may be fine)."""
    res = CheckResult(path)
    try:
        con = duckdb.connect(path, read_only=True)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            from stallscan.store.db import _io_error

            raise _io_error(path, exc) from None
        res.error = _first_line(exc)
        return res
    except duckdb.Error as exc:
        res.error = _first_line(exc)
        return res
    try:
        res.tables = check_tables(con)
    except duckdb.Error as exc:  # the catalog itself could not be read
        res.error = _first_line(exc)
    finally:
        con.close()
    return res


def raise_if_damaged(res: CheckResult) -> None:
    if res.ok:
        return
    what = res.error or "damaged blocks in " + ", ".join(res.damaged)
    raise DatabaseError(
        f"database {res.path} is damaged: {what}",
        hint=f"the database holds only what ingest derived from the transcripts: move it aside and ingest them "
        f"again (mv {res.path} {res.path}.damaged && stallscan ingest PATH --db {res.path})",
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
