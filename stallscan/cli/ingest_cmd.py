"""`stallscan ingest` and `stallscan sql`."""

from __future__ import annotations

import json
import sys

import typer

from stallscan.ingest.detect import FORMATS
from stallscan.store.errors import EXIT_INPUT, EXIT_REJECTS, StallscanError

from . import DbOpt, _err_console, _guard, app
from ._lazy import Console, connect, default_db_path


@app.command()
@_guard
def ingest(
    paths: list[str] = typer.Argument(
        None,
        help="Files, directories (recursive) or globs. "
        "Default: the usual log folders of the supported tools (see README).",
    ),
    db: str | None = DbOpt,
    fmt: str = typer.Option(
        "auto", "--format", help="auto (detect per file by content) or one of: " + ", ".join(FORMATS) + "."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when any line is rejected."),
    naive_tz: str | None = typer.Option(
        None,
        "--naive-tz",
        help="Zone of timestamps logged without one (Hermes, OpenHands, aider), e.g. Europe/Berlin. Default UTC.",
    ),
    rebuild: bool = typer.Option(
        False,
        "--rebuild",
        help="Drop every table first and re-read all files (for a database an older stallscan wrote).",
    ),
) -> None:
    """Read transcripts into the canonical events table (incremental: unchanged files are skipped)."""
    from stallscan.ingest.run import ingest_paths
    from stallscan.report.render import ingest_summary

    con = connect(db or default_db_path(), rebuild=rebuild)
    err = _err_console()
    show_bar = err.is_terminal and not as_json
    if show_bar:
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=True,
        ) as bar:
            task = bar.add_task("ingest", total=None)
            res = ingest_paths(
                con, paths or [], fmt, progress=lambda d, t: bar.update(task, completed=d, total=t), naive_tz=naive_tz
            )
    else:
        res = ingest_paths(con, paths or [], fmt, naive_tz=naive_tz)
    con.close()
    if as_json:
        sys.stdout.write(json.dumps(res.as_dict(), indent=2) + "\n")
    else:
        if res.searched:
            err.print("no PATH given; found these usual log folders: " + ", ".join(res.searched), highlight=False)
        err.print(ingest_summary(res))
    if res.unreadable:
        raise typer.Exit(EXIT_INPUT)
    if strict and res.rejects:
        err.print(f"[red]{res.rejects} line(s) rejected[/] (--strict); see the rejects table", highlight=False)
        raise typer.Exit(EXIT_REJECTS)


@app.command("sql")
@_guard
def sql_cmd(
    query: str = typer.Argument(..., help="A SQL statement run against the database."),
    db: str | None = DbOpt,
    out: str = typer.Option("table", "--format", help="table, json or csv."),
) -> None:
    """Run a query against the database and print the result."""
    import duckdb

    from stallscan.report.render import table_from_rows

    con = connect(db or default_db_path(), read_only=True)
    try:
        cur = con.execute(query)
    except duckdb.Error as exc:
        raise StallscanError(
            f"query failed: {str(exc).strip().splitlines()[0]}",
            hint="tables: events, files, skipped, rejects; views: sessions",
        ) from None
    cols = [d[0] for d in cur.description] if cur.description else []
    rows = cur.fetchall() if cols else []
    if out == "json":
        sys.stdout.write(json.dumps([dict(zip(cols, r)) for r in rows], default=str, indent=2) + "\n")
    elif out == "csv":
        import csv

        w = csv.writer(sys.stdout)
        w.writerow(cols)
        w.writerows(rows)
    else:
        Console().print(table_from_rows(cols, rows))
