"""Every input accounted for, said alike by `ingest` and `report`: what a run found nothing in, or a report
with no event in its scope (exit 2), could not read (exit 3), left out (a note) or read in a forced format
that matched nothing (a warning; exit 1 under --strict, as rejects, unknown shapes and unrecognised files).
One stderr line each, with a hint."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import typer

from stallscan.report.output import HOW_TO_INCLUDE, left_out_line
from stallscan.store.errors import EXIT_INPUT, EXIT_REJECTS, EXIT_USAGE, StallscanError

from .common import _err_console

if TYPE_CHECKING:
    import duckdb

    from stallscan.ingest.result import IngestResult
    from stallscan.report.registry import ReportOptions


def nothing_read(res: IngestResult) -> bool:
    """True when the run found no input at all, or found files and took nothing from them (each empty or in no
    format stallscan reads), and nothing is unreadable or known from before."""
    return not (
        res.events or res.rejects or res.skipped or res.unchanged or res.emptied or res.unreadable or res.pending
    )


def nothing_error(res: IngestResult, paths: list[str]) -> StallscanError:
    where = " ".join(paths) if paths else "the usual log folders"
    left = left_out_line(res)
    if not res.files:
        return StallscanError(
            f"no transcript found in {where}" + (f" ({left.split(';')[0]})" if left else ""),
            hint=HOW_TO_INCLUDE + "; detection is by content (docs/formats.md)",
            exit_code=EXIT_USAGE,
        )
    if res.unrecognized:
        what, hint = (
            f"{len(res.unrecognized):,} in no format stallscan reads",
            "force a format with --input-format FORMAT",
        )
    else:
        what, hint = "all empty", "pass files that hold transcripts"
    return StallscanError(
        f"nothing read from {where}: {res.files:,} file(s) found, {what}", hint=hint, exit_code=EXIT_USAGE
    )


def account(res: IngestResult, strict: bool, fmt: str = "auto") -> None:
    """Notes and warnings on stderr; exit 3 when an input could not be read, 1 under --strict (after the
    output was printed: what could be read was)."""
    err = functools.cache(_err_console)  # made (rich imported) only when there is something to print
    left = left_out_line(res)
    if left:
        err().print(f"note: {left}", highlight=False, style="dim")
    if res.forced_no_events:
        first = res.forced_no_events[0]
        more = f" and {len(res.forced_no_events) - 1:,} more" if len(res.forced_no_events) > 1 else ""
        err().print(
            f"[yellow]warning:[/] --input-format {fmt} matched nothing in {len(res.forced_no_events):,} file(s), "
            f"every line skipped or rejected: {first}{more}; drop --input-format to detect the format by content",
            highlight=False,
        )
    if res.unreadable:
        path, why = res.unreadable[0]
        more = f" and {len(res.unreadable) - 1:,} more" if len(res.unreadable) > 1 else ""
        err().print(f"[bold red]error:[/] cannot read {path} ({why}){more}", highlight=False)
        err().print(
            "hint: everything else was read; fix the file's permissions or name and run again "
            "(all of them: `unreadable` in --json)",
            highlight=False,
        )
        raise typer.Exit(EXIT_INPUT)
    if not strict:
        return
    if res.rejects:
        err().print(f"[red]{res.rejects} line(s) rejected[/] (--strict); see the rejects table", highlight=False)
        raise typer.Exit(EXIT_REJECTS)
    if res.unknown_shapes:
        n = sum(int(r["records"]) for r in res.unknown_shapes)
        err().print(
            f"[red]{n} record(s) of unknown shape[/] (--strict): the format moved on; "
            "see the skipped table (kind unknown_shape:...)",
            highlight=False,
        )
        raise typer.Exit(EXIT_REJECTS)
    if res.unrecognized:
        err().print(
            f"[red]{len(res.unrecognized)} file(s) in no format stallscan reads[/] (--strict); "
            "force one with --input-format",
            highlight=False,
        )
        raise typer.Exit(EXIT_REJECTS)
    if res.forced_no_events:
        err().print(
            f"[red]--input-format {fmt} matched nothing in {len(res.forced_no_events)} file(s)[/] (--strict)",
            highlight=False,
        )
        raise typer.Exit(EXIT_REJECTS)


def in_scope(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> int:
    """Events in the report's scope (by the shared filters; writes nothing, so a read-only connection will do)."""
    from stallscan.store import sql

    params = {"since": opts.since, "until": opts.until, "harness": opts.harness or None, "model": opts.model or None}
    if all(v is None for v in params.values()):  # no filter: every event
        row = sql.query(con, "report/scope_count_all").fetchall()[0]
    else:
        row = sql.query(con, "report/scope_count", params).fetchall()[0]
    return int(row[0]) if row else 0


def check_scope(con: duckdb.DuckDBPyConnection, opts: ReportOptions, where: str) -> None:
    """No event in scope is no report (exit 2): an empty database, or filters that leave nothing."""
    if in_scope(con, opts):
        return
    row = con.execute("SELECT count(*), min(ts), max(ts_end) FROM events").fetchall()[0]
    n, first, last = row if row else (0, None, None)
    if not n:
        raise StallscanError(
            f"no events to report in {where}",
            hint="read transcripts first: stallscan report PATH (or stallscan ingest PATH)",
        )
    given = " ".join(
        f"{flag} {v}"
        for flag, v in (
            ("--since", opts.since and opts.since.isoformat()),
            ("--until", opts.until and opts.until.isoformat()),
            ("--harness", ",".join(opts.harness)),
            ("--model", ",".join(opts.model)),
        )
        if v
    )
    span = f"from {first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} UTC" if first and last else "without timestamps"
    raise StallscanError(
        f"no events to report: no session matches {given}",
        hint=f"the database holds {n:,} events {span}; widen the filters",
    )
