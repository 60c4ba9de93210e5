"""`stallscan report`: one command from logs (or a database) to the answer."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import TYPE_CHECKING

import typer

from stallscan.store.errors import StallscanError

from . import DbOpt, _err_console, _guard, app
from ._lazy import Console, connect, default_db_path

if TYPE_CHECKING:
    from stallscan.report.build import ReportOptions


def _opts(
    threshold: float,
    retry_bound: int,
    since: str | None,
    until: str | None,
    harness: list[str] | None,
    model: list[str] | None,
    limit: int,
) -> ReportOptions:
    from stallscan.report.build import ReportOptions

    def when(v: str | None) -> datetime | None:
        if v is None:
            return None
        try:
            dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
        except ValueError:
            raise StallscanError(f"not a date/time: {v!r}", hint="use ISO 8601, e.g. 2026-04-01 or 2026-04-01T12:00Z")
        return dt if dt.tzinfo else dt.replace(tzinfo=__import__("datetime").timezone.utc)

    return ReportOptions(
        threshold=threshold,
        retry_bound=retry_bound,
        since=when(since),
        until=when(until),
        harness=list(harness or []),
        model=list(model or []),
        limit=limit,
    )


@app.command()
@_guard
def report(
    paths: list[str] = typer.Argument(None, help="Transcripts to ingest first (optional)."),
    db: str | None = DbOpt,
    out: str = typer.Option("table", "--format", help="table, json, markdown or html."),
    output: str | None = typer.Option(None, "--output", "-o", help="Write to this file instead of stdout."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Session resamples for the threshold interval."),
    threshold: float = typer.Option(2.0, "--threshold", help="Gap rule threshold in seconds."),
    retry_bound: int = typer.Option(3, "--retry-bound", help="Consecutive stalls re-prompted before delivering."),
    since: str | None = typer.Option(None, "--since", help="Only sessions active at or after this time."),
    until: str | None = typer.Option(None, "--until", help="Only sessions active before this time."),
    harness: list[str] | None = typer.Option(None, "--harness", help="Only this source format (repeatable)."),
    model: list[str] | None = typer.Option(None, "--model", help="Only sessions using this model (repeatable)."),
    limit: int = typer.Option(20, "--limit", help="Rows in the worst-first lists."),
    from_parquet: str | None = typer.Option(
        None,
        "--from-parquet",
        help="Report from parquet outputs (a `stallscan spark replay` OUTPUT or an export folder), no database file.",
    ),
    events: str | None = typer.Option(
        None, "--events", help="With --from-parquet: the events parquet (default: DIR/events, else the replay's INPUT)."
    ),
) -> None:
    """How bad is it here: corpus, stalls, turn boundaries, threshold."""
    from stallscan.report.build import build_report, public, render_report
    from stallscan.report.formats import to_html, to_markdown

    if out not in ("table", "json", "markdown", "html"):
        raise StallscanError(f"unknown --format {out!r}", hint="table, json, markdown or html")
    opts = _opts(threshold, retry_bound, since, until, harness, model, limit)
    opts.bootstrap = bootstrap
    if from_parquet:
        if paths:
            raise StallscanError("--from-parquet takes no transcripts", hint="ingest them, then export or replay")
        from stallscan.export import connect_parquet

        # an in-memory database holding the parquet as tables; the report reads the replayed tables as
        # given (their threshold and retry bound are the run's, not --threshold / --retry-bound)
        con, manifest = connect_parquet(from_parquet, events)
        opts._replayed = True
        opts.threshold = float(manifest.get("threshold") or threshold)
        opts.retry_bound = int(manifest.get("retry_bound") or retry_bound)
    else:
        con = connect(db or default_db_path())
    if paths:
        from stallscan.ingest.run import ingest_paths

        res = ingest_paths(con, paths)
        _err_console().print(
            f"ingested {res.ingested} file(s), {res.events:,} events "
            f"({res.unchanged} unchanged, {res.rejects} rejected lines)",
            highlight=False,
        )
    data = build_report(con, opts)
    con.close()
    text = None
    if out == "json":
        text = json.dumps(public(data), indent=2, default=str) + "\n"
    elif out == "markdown":
        text = to_markdown(public(data))
    elif out == "html":
        text = to_html(public(data))
    if text is not None:
        if output:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        else:
            sys.stdout.write(text)
        return
    console = Console(record=bool(output))
    for part in render_report(data):
        console.print(part)
        console.print()
    if output:
        console.save_text(output)
