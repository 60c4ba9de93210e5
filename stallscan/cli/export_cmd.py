"""`stallscan export`: parquet for notebooks."""

from __future__ import annotations

import json
import sys

import typer

from stallscan.store.errors import StallscanError

from ._lazy import Console
from .common import _err_console, _guard, open_db, out_format, scope_sessions
from .options import Db, Harnesses, Json, Models, Since, Until

app = typer.Typer()  # this module's commands (stallscan.cli.COMMANDS names it)


@app.command()
@_guard
def export(
    out_dir: str = typer.Argument(..., metavar="DIR", help="Directory to write <table>/ parquet folders into."),
    db: Db = None,
    tables: str = typer.Option(
        "events,user_labels,turn_boundaries,rounds,stalls,turns",
        "--tables",
        metavar="LIST",
        help="Comma-separated tables (events, files, skipped, rejects, user_labels, "
        "turn_boundaries, turn_boundary_variants, stalls, turns, rounds, sweep).",
    ),
    partition_by: str = typer.Option(
        "",
        "--partition-by",
        metavar="LIST",
        help="Comma-separated columns, e.g. session_bucket (keeps each session in one partition: the hand-off "
        "layout for `stallscan spark replay`), source_format, date.",
    ),
    buckets: int = typer.Option(
        64, "--buckets", metavar="N", help="Number of session buckets for --partition-by session_bucket."
    ),
    redact: str = typer.Option(
        "none", "--redact", metavar="<none|mask|drop>", help="mask: secret shapes in text; drop: text columns removed."
    ),
    harness: Harnesses = None,
    model: Models = None,
    since: Since = None,
    until: Until = None,
    out: str = typer.Option("table", "--format", metavar="<table|json>", help="How to print what was written."),
    as_json: Json = False,
) -> None:
    """Write tables as zstd parquet (hive-partitioned with --partition-by); with --harness / --model / --since /
    --until only those sessions' rows (files, rejects and sweep are written whole)."""
    from stallscan.export import export_tables

    out = out_format(out, as_json, ("table", "json"))
    if redact not in ("none", "mask", "drop"):
        raise StallscanError(f"unknown --redact {redact!r}", hint="none, mask or drop")
    con = open_db(db)
    wanted = [t.strip() for t in tables.split(",") if t.strip()]
    parts = [p.strip() for p in partition_by.split(",") if p.strip()]
    if buckets < 1:
        raise StallscanError(f"--buckets must be at least 1, not {buckets}", hint="e.g. --buckets 64")
    scoped = scope_sessions(con, since, until, harness, model)
    results = export_tables(con, out_dir, wanted, parts, redact, buckets, scoped=scoped)
    con.close()
    for r in results:
        if r.sessions_split:
            _err_console().print(
                f"warning: {r.sessions_split:,} session(s) of {r.table} span more than one partition "
                f"(by {', '.join(r.partitioned_by)}); add session_bucket first for a per-partition replay",
                highlight=False,
            )
    if out == "json":
        sys.stdout.write(json.dumps([r.__dict__ for r in results], indent=2) + "\n")
    else:
        console = Console()
        for r in results:
            console.print(
                f"{r.table:16} {r.rows:>10,} rows  {r.path}"
                + (f"  (by {', '.join(r.partitioned_by)})" if r.partitioned_by else ""),
                highlight=False,
            )
