"""`stallscan report`: one command from logs (or a database) to the answer."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from stallscan.store.errors import StallscanError

if TYPE_CHECKING:
    import duckdb
    from rich.console import Console as RichConsole

    from stallscan.ingest.commit_beside import CommitBeside
    from stallscan.ingest.result import IngestResult
    from stallscan.report.registry import ReportOptions

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.stall_rules import RETRY_BOUND
from stallscan.report.emit import plain_stderr
from stallscan.report.output import (
    add_unreadable,
    check_filters,
    document,
    ingested_line,
    pick_format,
    print_terminal,
    report_options,
    terminal_console,
)

from ._lazy import connect, default_db_path
from .accounting import account, check_scope, in_scope, nothing_error, nothing_read
from .common import _err_console, _guard, db_path, missing_db_hint, open_db, write_output
from .options import Bootstrap, Config, Db, Harnesses, Json, Limit, Models, RetryBound, Since, Threshold, Until

app = typer.Typer()  # this module's commands (stallscan.cli.COMMANDS names it)

T = TypeVar("T")


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
    strict: bool = typer.Option(
        False,
        "--strict",
        help="As ingest --strict: exit 1 when the transcripts read had rejected lines, records of unknown shape "
        "or files in no format stallscan reads.",
    ),
) -> None:
    """The answer first (silent endings, misread turns, the threshold to use), then the details."""
    from stallscan.report import memo
    from stallscan.report.registry import names as section_names

    STORED.clear()  # (set again only by a report this command builds and stores)
    DRAWN.clear()
    fmt = pick_format(out, as_json, output)
    names = section_names()
    for name in section or []:
        if name not in names:
            raise StallscanError(f"unknown --section {name!r}", hint="one of: " + ", ".join(names))
    opts = report_options(
        db=db,
        threshold=threshold,
        retry_bound=retry_bound,
        since=since,
        until=until,
        harness=harness,
        model=model,
        limit=limit,
        bootstrap=bootstrap,
        config=config,
    )
    path = db_path(db)
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
        check_filters(con, opts)
        check_scope(con, opts, str(from_parquet))
        data = _with_steps(err, lambda cb: build_report(con, opts, progress=cb))
        con.close()
        data = json.loads(memo.dumps(data))
        res = None
    else:
        data, res = _memoised(path, list(paths or []), db, opts, err)
    add_unreadable(data, res.unreadable if res else [])
    text = document(data, fmt)
    if STORED and text is not None and not (res is not None and res.unreadable):
        DRAWN[fmt] = text  # (the document a lookup of what was stored draws: the mirror's, entry.py)
    if text is None:
        console = terminal_console(to_file=bool(output))
        print_terminal(console, data, full, section)
        text = console.export_text() if output else None
    if output and text is not None:
        write_output(text, output)
    elif text is not None:
        sys.stdout.write(text)
    if res is not None:  # what could not be read, left out, or (--strict) rejected: as ingest says it
        account(res, strict)


# what the last report built here stored in the memo: (database path, the data's JSON text, the `files`
# rows' recorded stats), read before the connection closed, for the console script's mirror of it
# (stallscan.entry._mirror_after_command), which then need not open the database again to read them
STORED: list[tuple[str, str, list[tuple[Any, ...]]]] = []

# the document this command printed or wrote when it was drawn from exactly the data it STORED (every input
# read): format -> text, the one the console script's mirror of that data would draw again (json.dumps of the
# whole report, some 3-4 CPU ms)
DRAWN: dict[str, str] = {}

# (database path, paths) whose files the console script found changed by their recorded stats
# (stallscan.entry: its read-only lookup ran just before the command): _memoised does not look again
_STATS_CHANGED: list[tuple[str, list[str]]] = []


def run_parsed(paths: list[str], values: dict[str, Any], stats_changed: str | None = None) -> None:
    """The command on arguments the console script parsed (stallscan.entry.parse_report: the values typer
    passes, tests/functional/test_startup.py), without typer's parser, which builds a pydantic adapter per
    option (0.1 CPU s). It ends as the typer app does: typer.Exit as SystemExit, another error with typer's
    traceback (the report's own code raises no click error: those are usage errors of the parser).
    stats_changed: the database path whose `files` rows the console script's lookup found out of date
    for these paths (their ingest has work to do), so the command does not open it read-only again."""
    if stats_changed is not None:
        _STATS_CHANGED.append((stats_changed, paths))
    try:
        report(paths=paths, **values, from_parquet=None, events=None)
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except Exception as exc:
        from typer.main import _typer_developer_exception_attr_name, except_hook
        from typer.models import DeveloperExceptionConfig

        from stallscan.cli import app as root

        sys.excepthook = except_hook
        config = DeveloperExceptionConfig(
            pretty_exceptions_enable=root.pretty_exceptions_enable,
            pretty_exceptions_show_locals=root.pretty_exceptions_show_locals,
            pretty_exceptions_short=root.pretty_exceptions_short,
        )
        setattr(exc, _typer_developer_exception_attr_name, config)
        raise
    finally:
        _STATS_CHANGED.clear()


def _memoised(
    path: str, paths: list[str], db: str | None, opts: ReportOptions, err: Callable[[], RichConsole]
) -> tuple[dict[str, Any], IngestResult | None]:
    """The report data, memoised in the database (stallscan.report.memo), and what this run ingested (None:
    no PATH). Looked up on a read-only connection after the no-change ingest check, so a report that only
    reuses writes nothing; else the transcripts are ingested and the data built on a write connection, then
    stored. A report with no event in scope is an error (exit 2; exit 3 when an input could not be read) and
    leaves no database behind that was not there before."""
    from stallscan.report import memo
    from stallscan.store.db import peek

    existed = path == ":memory:" or Path(path).exists()
    ingested = None
    # (the console script's lookup found a file whose recorded stats differ: this one would find it too)
    ro = peek(path) if path != ":memory:" and (path, paths) not in _STATS_CHANGED else None
    if ro is not None:
        try:
            if paths:
                from stallscan.ingest.run import unchanged

                ingested = unchanged(ro, paths)
            if ingested is not None or not paths:
                check_filters(ro, opts)
                data = memo.get(ro, memo.key(ro, opts))
                if data is not None:  # (an empty report is never stored)
                    if ingested is not None:
                        _say_ingested(ingested)  # (else _build says it, once its checks pass)
                    return data, ingested
                check_scope(ro, opts, path)  # nothing to ingest: an empty scope is said before any write
        finally:
            ro.close()
    held = None  # the ingest's connection, open until the build's opens (one database, its schema checked)
    beside = None  # its last COMMIT's checkpoint, on a thread until the labels are written (ingest/commit_beside.py)
    if not paths and not existed:
        ingested = _discover_and_ingest(path, err())
    elif paths and ingested is None:
        from stallscan.ingest.commit_beside import CommitBeside
        from stallscan.ingest.run import ingest_paths

        con = connect(path, macros=False)  # (it only ingests: the build's connection has the report's macros)
        beside = CommitBeside() if path != ":memory:" else None
        try:
            ingested = _with_bar(err, "ingest", lambda cb: ingest_paths(con, paths, progress=cb, beside=beside))
        except BaseException:
            if beside is not None:
                beside.wait()
            con.close()
            if not existed:
                _drop_empty(path)
            raise
        if path == ":memory:":
            con.close()
        else:
            held = con
    try:
        return _build(db, opts, err, ingested if paths else None, paths, held, beside), ingested
    except (StallscanError, typer.Exit):
        if beside is not None:
            beside.wait()
        if not existed:
            _drop_empty(path)  # an empty report, or nothing readable: it creates nothing
        raise
    finally:
        if beside is not None:
            beside.wait()
        if held is not None:
            held.close()


def _say_ingested(res: IngestResult) -> None:
    sys.stderr.write(ingested_line(res))


def _build(
    db: str | None,
    opts: ReportOptions,
    err: Callable[[], RichConsole],
    res: IngestResult | None = None,
    paths: list[str] | None = None,
    held: duckdb.DuckDBPyConnection | None = None,
    beside: CommitBeside | None = None,
) -> dict[str, Any]:
    """Build the report data on a write connection (derived tables brought up to date) and memoise it.
    held: the ingest's write connection to the same database, still open: the build's connection shares
    its database (no second open of the file, no second schema check); closed once that one is open.
    beside: held's last COMMIT, checkpointing on a thread: the labels read beside it (their writes wait for it in
    DuckDB), joined after them, its error raised here; held is closed by the caller then."""
    from stallscan.replay.labels import label_events
    from stallscan.report import memo
    from stallscan.report.build import build_report, few_changes, ready_lane
    from stallscan.report.lanes import CHECKPOINT_WRITERS
    from stallscan.store import checkpoint, stamps
    from stallscan.store.db import one_thread

    try:
        con = open_db(db, checked=held is not None)
    finally:
        if held is not None and beside is None:
            held.close()
    try:
        if res is not None and nothing_read(res):
            raise nothing_error(res, paths or [])
        check_filters(con, opts)
        if res is not None and res.unreadable and not in_scope(con, opts):
            account(res, strict=False)  # exit 3, naming what could not be read
        check_scope(con, opts, db_path(db))
    except BaseException:
        con.close()  # (before the caller removes a database this run created)
        raise
    if res is not None:
        _say_ingested(res)  # (an empty report says only why it is empty)
    # after a few new sessions every derive is incremental over their rows: many short statements, on one DuckDB
    # worker thread (the report's lanes are the second thread; store.db.one_thread)
    # (the tables of main each connection's first catalog look-up found kept for the plans after it, and the
    # change log pruned once after the labels and the build, not after each stamp: store.stamps)
    # (with the lanes, the report's writes checkpointed beside the sweep's numpy work once its bins are written, so
    # that the close checkpoints only the memo's put: store/checkpoint.py)
    with stamps.kept_tables(), stamps.pruned_after(con):
        few = few_changes(con, opts)
        with one_thread(con, few):
            ready = ready_lane(con, opts, few)  # (the second lane's cursor and the session cells, beside the labels)
            with checkpoint.early(con, CHECKPOINT_WRITERS) if ready is not None else contextlib.nullcontext() as early:
                try:
                    label_events(con, opts._config)  # the labels of this config (reused when they are already)
                    if beside is not None:
                        beside.join()
                    key = memo.key(con, opts)
                    report = lambda cb: build_report(con, opts, progress=cb, few=few, ready=ready)
                    text = memo.dumps(_with_steps(err, report))
                finally:
                    if ready is not None:
                        ready.close()
                if early is not None:
                    early.join()  # (before the memo's put: a write)
            memo.put(con, key, text)
    STORED.clear()
    if key is not None and memo.key(con, opts) == key:  # (what a lookup on the closed file would find)
        from stallscan.ingest.plan import STATS_COLUMNS

        rows = con.execute(f"SELECT {STATS_COLUMNS} FROM files").fetchall()
        STORED.append((db or default_db_path(), text, rows))
    con.close()
    return dict(json.loads(text))  # rendered as a repeat renders it: from the same JSON


def _discover_and_ingest(path: str, err: RichConsole) -> IngestResult:
    """`report` with no PATH and no database: read the usual log folders, as `ingest` does, and say so."""
    from stallscan.ingest.discover import default_roots
    from stallscan.ingest.run import ingest_paths
    from stallscan.store.errors import InputError

    roots = [str(r) for r in default_roots() if r.exists()]
    if not roots:
        raise InputError(f"no database at {path} and no PATH given", hint=missing_db_hint(path))
    err.print(f"no database at {path}; reading the usual log folders found here: " + ", ".join(roots), highlight=False)
    con = connect(path, macros=False)
    try:
        res = _with_bar(lambda: err, "ingest", lambda cb: ingest_paths(con, [], progress=cb))
    finally:
        con.close()
    if not res.events:  # nothing to report: exit 2 (3 when something could not be read), no database left
        _drop_empty(path)
        if res.unreadable:
            account(res, strict=False)
        raise StallscanError(
            "the usual log folders hold no transcript stallscan can read", hint="pass a PATH: stallscan report PATH"
        )
    err.print(f"ingested {res.ingested} file(s), {res.events:,} events into {path}", highlight=False)
    return res


def _drop_empty(path: str) -> None:
    for p in (Path(path), Path(path + ".wal")):
        if p.exists():
            p.unlink()


def _with_bar(make_err: Callable[[], RichConsole], label: str, run: Callable[[Any], T]) -> T:
    if plain_stderr() or not (err := make_err()).is_terminal:
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


def _with_steps(make_err: Callable[[], RichConsole], run: Callable[[Any], T]) -> T:
    """The report's sections as progress steps on stderr (only when stderr is a terminal)."""
    if plain_stderr() or not (err := make_err()).is_terminal:
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
