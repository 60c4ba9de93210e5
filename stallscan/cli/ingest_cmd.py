"""`stallscan ingest` and `stallscan sql`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from stallscan.ingest.detect import FORMATS
from stallscan.store.errors import StallscanError, corrupt, from_db_error, no_space

if TYPE_CHECKING:
    import duckdb

    from stallscan.ingest.result import IngestResult

from ._lazy import Console, connect
from .accounting import account, nothing_error, nothing_read
from .common import _err_console, _guard, check_db, db_path, open_db, out_format, read_unchanged
from .options import Db, Json

app = typer.Typer()  # this module's commands (stallscan.cli.COMMANDS names it)


@app.command()
@_guard
def ingest(
    paths: list[str] = typer.Argument(
        None,
        metavar="[PATH]...",
        help="Files, directories (recursive) or globs. "
        "Default: the usual log folders of the supported tools (see docs/usage.md).",
    ),
    db: Db = None,
    out: str = typer.Option(
        "table",
        "--format",
        metavar="<table|json>",
        help="How to print the summary. (A transcript format here still works as --input-format, the older spelling.)",
    ),
    as_json: Json = False,
    fmt: str = typer.Option(
        "auto",
        "--input-format",
        metavar="<auto|" + "|".join(FORMATS) + ">",
        help="Transcript format: auto detects it per file by content.",
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Exit 1 when a line is rejected, a file is in no format stallscan reads, or a record of a known "
        "format has a shape its reader does not know (unknown_shape).",
    ),
    naive_tz: str | None = typer.Option(
        None,
        "--naive-tz",
        metavar="ZONE",
        help="Zone of timestamps logged without one (Hermes, OpenHands, aider), e.g. Europe/Berlin. Default UTC.",
    ),
    conversation_attr: str | None = typer.Option(
        None,
        "--conversation-attr",
        metavar="NAME",
        help="Traces (otlp, litellm) without gen_ai.conversation.id: group requests by this span/resource attribute "
        "(LiteLLM: metadata key), else by trace. Default: by trace.",
    ),
    rebuild: bool = typer.Option(
        False,
        "--rebuild",
        help="Drop every table first and re-read all files (for a database an older stallscan wrote).",
    ),
) -> None:
    """Read transcripts into the canonical events table (incremental: unchanged files are skipped)."""
    if out not in ("table", "json") and not as_json:
        if out == "auto" or out in FORMATS:  # the older spelling: --format named the transcript format
            fmt = out
            out = "table"
        else:
            raise StallscanError(
                f"unknown format {out!r}",
                hint="--format table or json (output); --input-format auto or one of: " + ", ".join(FORMATS),
            )
    as_json = as_json or out == "json"
    path = db_path(db)
    existed = path == ":memory:" or Path(path).exists()
    if existed and path != ":memory:":
        check_db(path)
    res = read_unchanged(path, paths or [], fmt) if existed and path != ":memory:" and not rebuild else None
    if res is not None:
        _print(res, as_json)
        account(res, strict, fmt)
        return
    con = connect(path, rebuild=rebuild)
    try:
        res = _run(con, paths, fmt, naive_tz, as_json, conversation_attr)
    except BaseException:
        con.close()
        if not existed:
            _drop(path)
        raise
    con.close()
    if not existed and not res.events and not res.rejects and not res.skipped:
        _drop(path)  # an ingest that found nothing leaves no database behind
    if nothing_read(res):
        raise nothing_error(res, paths or [])
    _print(res, as_json)
    account(res, strict, fmt)


def _print(res: IngestResult, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(res.as_dict(), indent=2) + "\n")
        return
    from stallscan.report.render import ingest_summary

    err = _err_console()
    if res.searched:
        err.print("no PATH given; found these usual log folders: " + ", ".join(res.searched), highlight=False)
    err.print(ingest_summary(res))


def _drop(path: str) -> None:
    for p in (Path(path), Path(path + ".wal")):
        if p.exists():
            p.unlink()
    tmp = Path(str(Path(path).resolve()) + ".tmp")
    if tmp.is_dir() and not any(tmp.iterdir()):
        tmp.rmdir()


def _run(
    con: duckdb.DuckDBPyConnection,
    paths: list[str] | None,
    fmt: str,
    naive_tz: str | None,
    as_json: bool,
    conversation_attr: str | None = None,
) -> IngestResult:
    from stallscan.ingest.run import ingest_paths

    err = _err_console()
    show_bar = err.is_terminal and not as_json
    if not show_bar:
        return ingest_paths(con, paths or [], fmt, naive_tz=naive_tz, conversation_attr=conversation_attr)
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
        return ingest_paths(
            con,
            paths or [],
            fmt,
            progress=lambda d, t: bar.update(task, completed=d, total=t),
            naive_tz=naive_tz,
            conversation_attr=conversation_attr,
        )


@app.command("sql")
@_guard
def sql_cmd(
    query: str = typer.Argument(..., metavar="QUERY", help="A SQL statement run against the database."),
    db: Db = None,
    out: str = typer.Option("table", "--format", metavar="<table|json|csv>", help="Output format."),
    as_json: Json = False,
) -> None:
    """Run a query against the database and print the result."""
    from stallscan.report.render import table_from_rows

    out = out_format(out, as_json, ("table", "json", "csv"))
    con = open_db(db, read_only=True)
    try:
        cur = con.execute(query)
    except sys.modules["duckdb"].Error as exc:  # (duckdb is loaded: a connection is open)
        if corrupt(str(exc)) or no_space(str(exc)):  # the database or the disk, not the query
            raise from_db_error(str(exc), db_path(db)) from None
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

        w = csv.writer(sys.stdout, lineterminator="\n")  # text lines, as every other output
        w.writerow(cols)
        w.writerows(rows)
    else:
        Console().print(table_from_rows(cols, rows))
