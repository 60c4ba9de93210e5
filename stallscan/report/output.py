"""What `stallscan report` does around the report data, written once for its two callers: the typer command
(stallscan.cli.report_cmd) and the console script's memo-hit path before typer loads (stallscan.entry).

The output format, the report options built from the command's values, the filters check, the stderr line of
a no-change ingest, and the text each format writes. Nothing heavy loads with this module (no typer, rich,
duckdb): each function imports what it needs."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # (typing is not imported: a mirror hit, stallscan.report.mirror, picks its format here)
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    import duckdb
    from rich.console import Console

    from stallscan.ingest.result import IngestResult
    from stallscan.report.section import ReportOptions
    from stallscan.store.errors import StallscanError

REPORT_FORMATS = ("table", "json", "markdown", "html")
EXTENSIONS = {
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".json": "json",
    ".txt": "table",
}


def pick_format(out: str | None, as_json: bool, output: str | None) -> str:
    """--format, else --json, else the -o file's extension, else the terminal table."""
    if out is None and not as_json and output:
        return EXTENSIONS.get(os.path.splitext(output)[1].lower(), "table")
    fmt = "json" if as_json else out or "table"
    if fmt not in REPORT_FORMATS:
        from stallscan.store.errors import StallscanError

        raise StallscanError(f"unknown --format {fmt!r}", hint="one of: " + ", ".join(REPORT_FORMATS))
    return fmt


def report_options(
    *,
    db: str | None,
    threshold: float,
    retry_bound: int,
    since: str | None,
    until: str | None,
    harness: list[str] | None,
    model: list[str] | None,
    limit: int,
    bootstrap: int,
    config: str | None = None,
) -> ReportOptions:
    """The ReportOptions of a `report` run on a database (the memo keys on every field). Raises
    StallscanError for a negative count or a time that is not ISO 8601."""
    import shlex

    from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
    from stallscan.report.section import ReportOptions
    from stallscan.store.errors import StallscanError

    if bootstrap < 0 or limit < 0 or retry_bound < 0 or threshold < 0:
        raise StallscanError(
            "--bootstrap, --limit, --retry-bound and --threshold must be >= 0", hint="e.g. --threshold 2 --limit 20"
        )

    opts = ReportOptions(
        threshold=threshold,
        retry_bound=retry_bound,
        since=parse_time("--since", since),
        until=parse_time("--until", until),
        harness=list(harness or []),
        model=list(model or []),
        limit=limit or None,  # --limit 0: every row, as on every command
        bootstrap=bootstrap,
        timelines=True,  # collected for every format (the memo serves them all); only HTML shows them
    )
    opts._config = config
    opts.show_args = (f" --db {shlex.quote(db)}" if db else "") + (
        f" --threshold {threshold:g}" if threshold != GAP_THRESHOLD_S else ""
    )
    return opts


def check_filters(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> None:
    """--harness / --model must name something in the database (the error names the closest, lists what is there)."""
    check_names(con, "--harness", opts.harness, "source_format")
    check_names(con, "--model", opts.model, "model")


def parse_time(flag: str, value: str | None) -> datetime | None:
    """--since / --until: ISO 8601; a time without a zone is UTC."""
    from datetime import UTC, datetime

    from stallscan.store.errors import StallscanError

    if value is None:
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise StallscanError(
            f"{flag}: not a date/time: {value!r}", hint="use ISO 8601, e.g. 2026-04-01 or 2026-04-01T12:00Z"
        ) from None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def closest(value: str, names: list[str], n: int = 3) -> list[str]:
    """Names that start with `value`, then the nearest by spelling (difflib), at most n."""
    import difflib

    starts = [x for x in names if x.startswith(value) or value.startswith(x)] if value else []
    near = difflib.get_close_matches(value, names, n=n, cutoff=0.6)
    return list(dict.fromkeys(starts + near))[:n]


def check_names(con: duckdb.DuckDBPyConnection, flag: str, values: list[str] | None, column: str) -> None:
    """--harness / --model must name something in the database: else the error says the closest names
    (`--harness claude`: did you mean claude_code?) and lists what is there."""
    if not values:
        return
    known = [
        r[0]
        for r in con.execute(f"SELECT DISTINCT {column} FROM events WHERE {column} IS NOT NULL ORDER BY 1").fetchall()
    ]
    from stallscan.store.errors import StallscanError

    for value in values:
        if value in known:
            continue
        near = closest(value, known)
        shown = ", ".join(known[:20]) + (f" ... ({len(known)} in all)" if len(known) > 20 else "")
        raise StallscanError(
            f"unknown {flag} {value!r}",
            hint=(f"did you mean {' or '.join(near)}? " if near else "")
            + ("in this database: " + shown if known else "the database holds no events"),
        )


HOW_TO_INCLUDE = "to read one, name it with its format: stallscan ingest FILE --input-format FORMAT"


def left_out_line(res: IngestResult) -> str | None:
    """'left out 3 file(s) in the folders walked ...: .md 2, .py 1; to read one, ...' (None: none left out):
    the note `ingest` and `report` print (stallscan.cli.accounting), and the entry on a memo hit."""
    from stallscan.ingest.suffixes import SNIFF_BYTES, SNIFF_MAX_FILES

    if not res.left_out:
        return None
    n = sum(res.left_out.values())
    by = ", ".join(f"{k} {v:,}" for k, v in sorted(res.left_out.items(), key=lambda kv: (-kv[1], kv[0])))
    unopened = (
        f", {res.left_out_unopened:,} of them not opened (over {SNIFF_MAX_FILES:,} files sniffed)"
        if res.left_out_unopened
        else ""
    )
    return (
        f"left out {n:,} file(s) in the folders walked, no record of a known format in their first "
        f"{SNIFF_BYTES // 1024} KB{unopened}: {by}; {HOW_TO_INCLUDE}"
    )


def ingested_line(res: IngestResult) -> str:
    """The stderr line after the ingest a report starts with (plain text, as the console would print it)."""
    return (
        f"ingested {res.ingested} file(s), {res.events:,} events "
        f"({res.unchanged} unchanged, {res.rejects} rejected lines)\n"
    )


def add_unreadable(data: dict[str, Any], unreadable: list[tuple[str, str]]) -> None:
    """The inputs this run could not read, into the corpus section's data (`unreadable`): a fact of the run,
    not of the database, so never memoised; [] when every input was read (a memo hit read them all)."""
    if "corpus" in data:
        data["corpus"]["unreadable"] = [{"path": p, "why": why} for p, why in unreadable]


def document(data: dict[str, Any], fmt: str) -> str | None:
    """The text a json, markdown or html report writes; None for the terminal report (print_terminal).
    The timelines stay in the data for HTML only, and its options say whether they were asked for."""
    import json

    from stallscan.report.build import public

    data["options"]["timelines"] = fmt == "html"  # (as the options were given: only HTML asked for them)
    if fmt != "html":
        data.pop("timelines", None)
    if fmt == "json":
        return json.dumps(public(data), indent=2, default=str) + "\n"
    if fmt == "markdown":
        from stallscan.report.markdown import to_markdown

        return to_markdown(public(data))
    if fmt == "html":
        from stallscan.report.html import to_html

        return to_html(public(data))
    return None


def terminal_console(to_file: bool) -> Console:
    """The console the terminal report prints on: stdout, or a recording one when it goes to a file."""
    import io

    from stallscan.report.fit import width as fit_width
    from stallscan.report.streams import console

    return console(record=to_file, file=io.StringIO() if to_file else None, width=fit_width())


def print_terminal(console: Console, data: dict[str, Any], full: bool, only: list[str] | None) -> None:
    """The terminal report: the headline and each section (summary, --full, or only --section NAME)."""
    from stallscan.report.build import render_report

    for part in render_report(data, full=full, only=only or None):
        console.print(part)
        console.print()


def write_output(text: str, path: str) -> None:
    """Write a report file; `wrote FILE (N KB)` on stderr. Clean errors, never a traceback."""
    import errno
    from pathlib import Path

    from stallscan.store.errors import InputError, disk_full

    p = Path(path)
    if not p.parent.exists():
        raise InputError(f"cannot write {path}: folder {p.parent} does not exist", hint="create it first")
    if p.is_dir():
        raise InputError(f"cannot write {path}: it is a directory", hint="name a file, e.g. -o report.html")
    try:
        p.write_text(text, encoding="utf-8")
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            raise disk_full(exc.strerror or str(exc), path) from None
        raise InputError(f"cannot write {path}: {exc.strerror or exc}", hint="check the path and permissions") from None
    err_console().print(f"wrote {path} ({max(1, round(p.stat().st_size / 1024))} KB)", highlight=False)


def err_console() -> Console:
    from stallscan.report.streams import console

    # every command's stderr console (stallscan.cli.common uses it); soft_wrap: messages are never broken
    # inside a path or a command the user may copy; a pipe gets lines without their padding (streams.Unpadded)
    return console(
        stderr=True,
        soft_wrap=True,
        width=int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else None,
    )


def print_error(exc: StallscanError) -> None:
    """A user-caused error as every command prints it: one `error:` line and its hint, on stderr."""
    err = err_console()
    err.print(f"[bold red]error:[/] {exc.message}", highlight=False, soft_wrap=True)
    if exc.hint:
        err.print(f"hint: {exc.hint}", highlight=False, soft_wrap=True)
