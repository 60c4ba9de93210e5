"""The `stallscan` console script and `python -m stallscan`: two answers before typer loads, then the typer
app (stallscan.cli:app) for everything else.

* `stallscan --version`, exactly that: the line the root command's --version option prints.
* `stallscan report [PATH]... [options]` when the report data is memoised in the database for these options
  (stallscan.report.memo) and every transcript the paths name has the size and modification time its
  `files` row records: the data is read on a read-only connection and printed or written as the command
  prints or writes it, with the same stderr lines (stallscan.report.output holds what both run).

Importing typer, click and the pydantic its parser loads costs more than the rest of a memo hit, hence this
module. It serves only what it fully understands and hands anything else to the typer command, which does
the whole work and says what is wrong: an option not in REPORT_OPTIONS (--help, --from-parquet, ...), a
value that is not plainly a count or a number, an option given twice, a missing or locked database, a new,
changed or unreadable file, a filter naming nothing, a memo miss, any error. Nothing is printed before the
answer is known, so a hand-off never repeats output. REPORT_OPTIONS is tied to the typer command's options
(flags, parameter names, kinds, defaults) by tests/functional/test_startup.py.
"""

from __future__ import annotations

import os
import sys

from stallscan.store.version import __version__

TYPE_CHECKING = False  # (typing is not imported: it costs a tenth of the start-up this module saves)
if TYPE_CHECKING:
    from typing import Any

    from stallscan.ingest.result import IngestResult

# `stallscan report`'s options this module serves: flag -> (parameter of stallscan.cli.report_cmd.report,
# kind). Kinds: "flag" (a switch, no value), "str", "int", "float", "list" (a repeatable str). Defaults:
# ReportOptions' field of that name, else False for a switch and None for the rest (DEFAULTS).
REPORT_OPTIONS = {
    "--db": ("db", "str"),
    "--format": ("out", "str"),
    "--json": ("as_json", "flag"),
    "--output": ("output", "str"),
    "-o": ("output", "str"),
    "--full": ("full", "flag"),
    "--section": ("section", "list"),
    "--bootstrap": ("bootstrap", "int"),
    "--threshold": ("threshold", "float"),
    "--retry-bound": ("retry_bound", "int"),
    "--since": ("since", "str"),
    "--until": ("until", "str"),
    "--harness": ("harness", "list"),
    "--model": ("model", "list"),
    "--limit": ("limit", "int"),
    "--config": ("config", "str"),
    "--strict": ("strict", "flag"),  # (parsed so that it is known; a --strict report is the CLI's)
}
# the command's options left to typer: help, and the parquet report (not memoised)
LEFT_TO_TYPER = ("--help", "-h", "--from-parquet", "--events")


def main() -> None:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        sys.stdout.write(f"stallscan {__version__}\n")
        return
    if argv[:1] == ["report"] and _report(argv[1:]):
        return
    from stallscan.cli import app

    app(prog_name="stallscan")


def defaults() -> dict[str, Any]:
    """Parameter -> default, for every parameter REPORT_OPTIONS names."""
    from stallscan.report.section import ReportOptions

    fields = ReportOptions.__dataclass_fields__
    return {
        name: fields[name].default if name in fields and kind != "list" else (False if kind == "flag" else None)
        for name, kind in REPORT_OPTIONS.values()
    }


def _value(kind: str, text: str) -> object:
    """The value of an int or float option when it is plainly one (digits; a float may have one dot between
    digits), else None."""
    if kind == "int":
        return int(text) if text.isascii() and text.isdigit() else None
    if kind == "float":
        whole, dot, frac = text.partition(".")
        plain = whole.isascii() and whole.isdigit() and (not dot or (frac.isascii() and frac.isdigit()))
        return float(text) if plain else None
    return text


def parse_report(args: list[str]) -> tuple[list[str], dict[str, Any]] | None:
    """(paths, parameter -> value) of `report ARGS`, or None when anything is not plainly understood."""
    values = defaults()
    paths: list[str] = []
    given: set[str] = set()
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("-"):
            paths.append(arg)
            continue
        flag, eq, text = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if flag not in REPORT_OPTIONS:
            return None
        name, kind = REPORT_OPTIONS[flag]
        if name in given and kind != "list":
            return None
        given.add(name)
        if kind == "flag":
            if eq:
                return None
            values[name] = True
            continue
        if not eq:
            if not rest:
                return None
            text = rest.pop(0)
        value = _value(kind, text)
        if value is None or not text or text.startswith("-"):
            return None
        values[name] = [*(values[name] or []), value] if kind == "list" else value
    return paths, values


def _report(args: list[str]) -> bool:
    """Serve `report ARGS` from the memo; False: nothing was printed, the typer command runs instead."""
    parsed = parse_report(args)
    if parsed is None:
        return False
    try:
        found = _memo_hit(*parsed)
    except Exception:  # any doubt: the typer command does the whole work and says what went wrong
        return False
    except KeyboardInterrupt:  # nothing printed yet: as the command ends on ^C
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
    if found is None:
        return False
    from stallscan.store.errors import StallscanError

    try:
        _emit(*found, parsed[1])
    except StallscanError as exc:  # writing -o failed (a full disk): said as the command says it
        from stallscan.report.output import print_error

        print_error(exc)
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
    return True


def _memo_hit(paths: list[str], v: dict[str, Any]) -> tuple[dict[str, Any], str, IngestResult | None] | None:
    """(report data, format, the no-change ingest's result when paths were given), or None."""
    from stallscan.report import memo
    from stallscan.report.output import check_filters, pick_format, report_options
    from stallscan.report.registry import names
    from stallscan.store.db import default_db_path, peek

    fmt = pick_format(v["out"], v["as_json"], v["output"])
    if v["strict"]:  # its checks and notes are the CLI's (stallscan.cli.accounting)
        return None
    if not set(v["section"] or []) <= set(names()) or (v["output"] and not _writable(v["output"])):
        return None
    opts = report_options(
        db=v["db"],
        **{
            k: v[k]
            for k in ("threshold", "retry_bound", "since", "until", "harness", "model", "limit", "bootstrap", "config")
        },
    )
    path = v["db"] or default_db_path()
    con = peek(path) if path != ":memory:" else None
    if con is None:
        return None
    try:
        ingested = _unchanged(con, paths) if paths else None
        if paths and ingested is None:
            return None
        check_filters(con, opts)
        data = memo.get(con, memo.key(con, opts))
    finally:
        con.close()
    return None if data is None else (data, fmt, ingested)


def _unchanged(con: Any, paths: list[str]) -> IngestResult | None:
    """The no-change ingest's result when every file the paths name has its recorded size and mtime."""
    from stallscan.ingest.discover import discover
    from stallscan.ingest.plan import same_stats
    from stallscan.ingest.result import IngestResult

    found = discover(paths)
    if found.unreadable or not found.files:
        return None  # (the CLI names what it could not read)
    n = same_stats(con, found.files)
    if n is None:
        return None
    return IngestResult(
        files=n, unchanged=n, searched=found.searched, left_out=found.left_out, left_out_unopened=found.unopened
    )


def _writable(output: str) -> bool:
    """Whether -o names a file that can be written (else the typer command says why not)."""
    folder = os.path.dirname(os.path.abspath(output))
    if os.path.isdir(output) or not os.path.isdir(folder):
        return False
    return os.access(output if os.path.exists(output) else folder, os.W_OK)


def _emit(data: dict[str, Any], fmt: str, ingested: IngestResult | None, v: dict[str, Any]) -> None:
    """Print or write the report as stallscan.cli.report_cmd does."""
    from stallscan.report.output import (
        add_unreadable,
        document,
        err_console,
        ingested_line,
        left_out_line,
        print_terminal,
        terminal_console,
        write_output,
    )

    if ingested is not None:
        sys.stderr.write(ingested_line(ingested))
    try:
        add_unreadable(data, [])  # (a memo hit: every input was read)
        text = document(data, fmt)
        if text is None:
            console = terminal_console(to_file=bool(v["output"]))
            print_terminal(console, data, v["full"], v["section"])
            text = console.export_text() if v["output"] else None
        if v["output"] and text is not None:
            write_output(text, v["output"])
        elif text is not None:
            sys.stdout.write(text)
            sys.stdout.flush()
        left = left_out_line(ingested) if ingested is not None else None
        if left:  # what the walk left out, as the command's accounting says it after the report
            err_console().print(f"note: {left}", highlight=False, style="dim")
    except BrokenPipeError:  # the reader closed the pipe early (`| head`): quiet, exit 0, as the command
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
