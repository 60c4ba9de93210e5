"""Writing a column scan's output (stallscan/replay/scan.py) into DuckDB temp tables, part by part."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pyarrow as pa

from stallscan.store import sql

# A scan's output parts are held (Arrow, no copy) until they reach this many rows, then written by one INSERT:
# a small INSERT into a temp table costs more a row (1.15M rows in 15 parts 0.10 CPU s, in 2 parts 0.033), and
# the stall replay's sides are a fraction of a batch (at 10M events `stall_turn_span` 0.47-0.50 -> 0.16-0.23 CPU s).
WRITE_ROWS = 1 << 19


def write_all(con: duckdb.DuckDBPyConnection, outs: tuple[str, ...], parts: Iterator[tuple[pa.Table, ...]]) -> bool:
    """Write each part's tables into the temp tables `outs` (one table each, created by the first write, its
    parts held up to WRITE_ROWS rows); False when there was no part."""
    made = [False] * len(outs)
    held: list[list[pa.Table]] = [[] for _ in outs]

    def flush(i: int) -> None:
        with sql.timed(f"scan write {outs[i]}"):
            con.register("_scan_part", held[i][0] if len(held[i]) == 1 else pa.concat_tables(held[i]))
            head = f"INSERT INTO {outs[i]}" if made[i] else f"CREATE OR REPLACE TEMP TABLE {outs[i]} AS"
            con.execute(f"{head} SELECT * FROM _scan_part")
            con.unregister("_scan_part")
        made[i], held[i] = True, []

    seen = False
    for tables in parts:
        seen = True
        for i, (_, table) in enumerate(zip(outs, tables, strict=True)):
            if held[i] and table.schema != held[i][0].schema:  # (a part typed otherwise, e.g. an empty one)
                flush(i)
            held[i].append(table)
            if sum(t.num_rows for t in held[i]) >= WRITE_ROWS:
                flush(i)
    for i in (i for i in range(len(outs)) if held[i]):
        flush(i)
    return seen
