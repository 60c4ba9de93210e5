"""`stallscan report`: one command from logs (or a database) to the answer."""

from __future__ import annotations

import functools
import io
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from stallscan.store.errors import StallscanError

if TYPE_CHECKING:
    import duckdb
    from rich.console import Console as RichConsole

    from stallscan.ingest.result import IngestResult
    from stallscan.report.registry import ReportOptions

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.stall_rules import RETRY_BOUND

from ._lazy import Console, connect
from .common import (
    _err_console,
    _guard,
    check_names,
    db_path,
    missing_db_hint,
    open_db,
    out_format,
    parse_time,
    write_output,
)
from .options import Bootstrap, Config, Db, Harnesses, Json, Limit, Models, RetryBound, Since, Threshold, Until

app = typer.Typer()  # this module's commands (stallscan.cli.COMMANDS names it)

T = TypeVar("T")


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

    return ReportOptions(
        threshold=threshold,
        retry_bound=retry_bound,
        since=parse_time("--since", since),
        until=parse_time("--until", until),
        harness=list(harness or []),
        model=list(model or []),
        limit=limit or None,  # --limit 0: every row, as on every command
    )


REPORT_FORMATS = ("table", "json", "markdown", "html")
EXTENSIONS = {
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".json": "json",
    ".txt": "table",
}


@app.command()
@_guard
def report(
    paths: list[str] = typer.Argument(None, metavar="[PATH]...", help="Transcripts to ingest first (optional)."),
    db: Db = None,
    out: str | None = typer.Option(
        None,
        "--format",
        metavar="<table|json|markdown|html>",
        help="Output format (default: from the -o extension, else table).",
    ),
    as_json: Json = False,
    output: str | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Write to this file, not stdout."),
    full: bool = typer.Option(False, "--full", help="Terminal: every section in full after the headline."),
    section: list[str] | None = typer.Option(
        None, "--section", metavar="NAME", help="Terminal: only this section in full (repeatable)."
    ),
    bootstrap: Bootstrap = 1000,
    threshold: Threshold = GAP_THRESHOLD_S,
    retry_bound: RetryBound = RETRY_BOUND,
    since: Since = None,
    until: Until = None,
    harness: Harnesses = None,
    model: Models = None,
    limit: Limit = 20,
    config: Config = None,
    from_parquet: str | None = typer.Option(
        None,
        "--from-parquet",
        metavar="DIR",
        help="Report from parquet outputs (a `stallscan spark replay` OUTPUT or an export folder), no database file.",
    ),
    events: str | None = typer.Option(
        None,
        "--events",
        metavar="PATH",
        help="With --from-parquet: the events parquet (default: DIR/events, else the replay's INPUT).",
    ),
) -> None:
    """The answer first (silent endings, misread turns, the threshold to use), then the details."""
    from stallscan.report import memo
    from stallscan.report.build import public
    from stallscan.report.registry import names as section_names

    fmt = _pick_format(out, as_json, output)
    names = section_names()
    for name in section or []:
        if name not in names:
            raise StallscanError(f"unknown --section {name!r}", hint="one of: " + ", ".join(names))
    if bootstrap < 0 or limit < 0 or retry_bound < 0 or threshold < 0:
        raise StallscanError(
            "--bootstrap, --limit, --retry-bound and --threshold must be >= 0", hint="e.g. --threshold 2 --limit 20"
        )
    opts = _opts(threshold, retry_bound, since, until, harness, model, limit)
    opts.bootstrap = bootstrap
    opts._config = config
    opts.timelines = True  # collected for every format (the memo serves them all); only HTML shows them
    path = db_path(db)
    extra = (f" --db {shlex.quote(path)}" if db else "") + (
        f" --threshold {threshold:g}" if threshold != GAP_THRESHOLD_S else ""
    )
    opts.show_args = extra
    err = functools.cache(_err_console)  # the stderr console, made (rich imported) when first used
    if from_parquet:
        if paths:
            raise StallscanError("--from-parquet takes no transcripts", hint="ingest them, then export or replay")
        from stallscan.export import connect_parquet

        # an in-memory database holding the parquet as tables; the report reads the replayed tables as
        # given (their threshold and retry bound are the run's, not --threshold / --retry-bound)
        from stallscan.report.build import build_report

        con, manifest = connect_parquet(from_parquet, events)
        opts._replayed = True
        opts.threshold = float(manifest.get("threshold") or threshold)
        opts.retry_bound = int(manifest.get("retry_bound") or retry_bound)
        opts.show_args = ""  # `show` needs a database; the examples name sessions only
        _check_filters(con, opts)
        data = _with_steps(err(), lambda cb: build_report(con, opts, progress=cb))
        con.close()
        data = json.loads(memo.dumps(data))
    else:
        data = _memoised(path, list(paths or []), db, opts, err)
    data["options"]["timelines"] = fmt == "html"  # (as the options were given: only HTML asked for them)
    if fmt != "html":
        data.pop("timelines", None)
    text = None
    if fmt == "json":
        text = json.dumps(public(data), indent=2, default=str) + "\n"
    elif fmt == "markdown":
        from stallscan.report.markdown import to_markdown

        text = to_markdown(public(data))
    elif fmt == "html":
        from stallscan.report.html import to_html

        text = to_html(public(data))
    if text is None:
        from stallscan.report.fit import width as fit_width

        console = Console(record=bool(output), file=io.StringIO() if output else None, width=fit_width())
        from stallscan.report.build import render_report

        for part in render_report(data, full=full, only=section or None):
            console.print(part)
            console.print()
        if not output:
            return
        text = console.export_text()
    if output:
        write_output(text, output)
    else:
        sys.stdout.write(text)


def _memoised(
    path: str, paths: list[str], db: str | None, opts: ReportOptions, err: Callable[[], RichConsole]
) -> dict[str, Any]:
    """The report data, memoised in the database (stallscan.report.memo). Looked up on a read-only
    connection after the no-change ingest check, so a report that only reuses writes nothing; else the
    transcripts are ingested and the data built on a write connection, then stored."""
    from stallscan.report import memo
    from stallscan.store.db import peek

    ingested = None
    ro = peek(path) if path != ":memory:" else None
    if ro is not None:
        try:
            if paths:
                from stallscan.ingest.run import unchanged

                ingested = unchanged(ro, paths)
                if ingested is not None:
                    _say_ingested(ingested)
            if ingested is not None or not paths:
                _check_filters(ro, opts)
                data = memo.get(ro, memo.key(ro, opts))
                if data is not None:
                    return data
        finally:
            ro.close()
    if not paths and not Path(path).exists() and path != ":memory:":
        _discover_and_ingest(path, err())
    elif paths and ingested is None:
        from stallscan.ingest.run import ingest_paths

        con = connect(path)
        res = _with_bar(err(), "ingest", lambda cb: ingest_paths(con, paths, progress=cb))
        con.close()
        _say_ingested(res)
    return _build(db, opts, err)


def _say_ingested(res: IngestResult) -> None:
    # plain text, no markup: written as the console would print it (soft wrap, no highlighting)
    sys.stderr.write(
        f"ingested {res.ingested} file(s), {res.events:,} events "
        f"({res.unchanged} unchanged, {res.rejects} rejected lines)\n"
    )


def _build(db: str | None, opts: ReportOptions, err: Callable[[], RichConsole]) -> dict[str, Any]:
    """Build the report data on a write connection (derived tables brought up to date) and memoise it."""
    from stallscan.replay.labels import label_events
    from stallscan.report import memo
    from stallscan.report.build import build_report

    con = open_db(db)
    _check_filters(con, opts)
    label_events(con, opts._config)  # the labels of this config (reused when they are already)
    key = memo.key(con, opts)
    text = memo.dumps(_with_steps(err(), lambda cb: build_report(con, opts, progress=cb)))
    memo.put(con, key, text)
    con.close()
    return dict(json.loads(text))  # rendered as a repeat renders it: from the same JSON


def _pick_format(out: str | None, as_json: bool, output: str | None) -> str:
    if out is None and not as_json and output:
        return EXTENSIONS.get(Path(output).suffix.lower(), "table")
    return out_format(out or "table", as_json, REPORT_FORMATS)


def _check_filters(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> None:
    """--harness / --model must name something in the database (the error names the closest, lists what is there)."""
    check_names(con, "--harness", opts.harness, "source_format")
    check_names(con, "--model", opts.model, "model")


def _discover_and_ingest(path: str, err: RichConsole) -> None:
    """`report` with no PATH and no database: read the usual log folders, as `ingest` does, and say so."""
    from stallscan.ingest.discover import default_roots
    from stallscan.ingest.run import ingest_paths
    from stallscan.store.errors import InputError

    roots = [str(r) for r in default_roots() if r.exists()]
    if not roots:
        raise InputError(f"no database at {path} and no PATH given", hint=missing_db_hint(path))
    err.print(f"no database at {path}; reading the usual log folders found here: " + ", ".join(roots), highlight=False)
    con = connect(path)
    try:
        res = _with_bar(err, "ingest", lambda cb: ingest_paths(con, [], progress=cb))
    finally:
        con.close()
    err.print(f"ingested {res.ingested} file(s), {res.events:,} events into {path}", highlight=False)
    if not res.events:
        _drop_empty(path)
        raise InputError("the usual log folders hold no transcript stallscan can read", hint="pass a PATH")


def _drop_empty(path: str) -> None:
    for p in (Path(path), Path(path + ".wal")):
        if p.exists():
            p.unlink()


def _with_bar(err: RichConsole, label: str, run: Callable[[Any], T]) -> T:
    if not err.is_terminal:
        return run(None)
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)
        return run(lambda d, t: bar.update(task, completed=d, total=t))


def _with_steps(err: RichConsole, run: Callable[[Any], T]) -> T:
    """The report's sections as progress steps on stderr (only when stderr is a terminal)."""
    if not err.is_terminal:
        return run(None)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "report: [progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task("start", total=None)
        return run(lambda label, done, total: bar.update(task, description=label, completed=done, total=total))
