"""`stallscan export`: parquet for notebooks."""

from __future__ import annotations

import json
import sys

import typer

from . import DbOpt, _guard, app
from ._lazy import Console, connect, default_db_path


@app.command()
@_guard
def export(
    out_dir: str = typer.Argument(..., help="Directory to write <table>/ parquet folders into."),
    db: str | None = DbOpt,
    tables: str = typer.Option(
        "events,user_labels,turn_boundaries,stalls,turns",
        "--tables",
        help="Comma-separated tables (events, files, skipped, rejects, user_labels, "
        "turn_boundaries, turn_boundary_variants, stalls, turns, rounds, sweep).",
    ),
    partition_by: str = typer.Option(
        "",
        "--partition-by",
        help="Comma-separated columns, e.g. session_bucket (keeps each session in one partition: the hand-off "
        "layout for `stallscan spark replay`), source_format, date.",
    ),
    buckets: int = typer.Option(64, "--buckets", help="Number of session buckets for --partition-by session_bucket."),
    redact: str = typer.Option(
        "none", "--redact", help="none, mask (secret shapes in text) or drop (text columns removed)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print what was written as JSON."),
) -> None:
    """Write tables as zstd parquet (hive-partitioned with --partition-by)."""
    from stallscan.export import export_tables

    con = connect(db or default_db_path())
    wanted = [t.strip() for t in tables.split(",") if t.strip()]
    parts = [p.strip() for p in partition_by.split(",") if p.strip()]
    results = export_tables(con, out_dir, wanted, parts, redact, buckets)
    con.close()
    for r in results:
        if r.sessions_split:
            from . import _err_console

            _err_console().print(
                f"warning: {r.sessions_split:,} session(s) of {r.table} span more than one partition "
                f"(by {', '.join(r.partitioned_by)}); add session_bucket first for a per-partition replay",
                highlight=False,
            )
    if as_json:
        sys.stdout.write(json.dumps([r.__dict__ for r in results], indent=2) + "\n")
    else:
        out = Console()
        for r in results:
            out.print(
                f"{r.table:16} {r.rows:>10,} rows  {r.path}"
                + (f"  (by {', '.join(r.partitioned_by)})" if r.partitioned_by else ""),
                highlight=False,
            )
