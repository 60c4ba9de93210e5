"""Printing a repeat report as `stallscan report` prints it (stallscan.cli.report_cmd), for the console script
(stallscan.entry): the no-change ingest's stderr line, the document on stdout or in the -o file (`wrote FILE`),
the walk's `note: left out ...`, a broken pipe, a failed write, ^C.

A mirror hit (stallscan.report.mirror) has its document as text: printing it loads nothing but this module.
The commands' stderr console is rich's (stallscan.report.output.err_console); a line it would write as it is
(a pipe, no env var forcing a terminal, no markup in the text) is written here without it.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # (typing is not imported: see stallscan.report.mirror)
if TYPE_CHECKING:
    from typing import Any

    from stallscan.ingest.result import IngestResult


def guarded(emit: Any) -> Any:
    """Run an emit as the command ends: a failed -o write says its error, ^C exits 130."""
    try:
        return emit()
    except Exception as exc:  # writing -o failed (a full disk): said as the command says it
        errors = sys.modules.get("stallscan.store.errors")  # (not loaded: no StallscanError was raised)
        if errors is None or not isinstance(exc, errors.StallscanError):
            raise
        from stallscan.report.output import print_error

        print_error(exc)
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None


def emit(
    data: dict[str, Any] | None,
    fmt: str,
    stderr: tuple[str, str | None, str | None],
    v: dict[str, Any],
    text: str | None = None,
) -> str | None:
    """Print or write the report as stallscan.cli.report_cmd does: the stderr line of the no-change ingest,
    the document (`text`, else drawn from `data`), the walk's note. Returns the json / markdown / html text."""
    line, note, plain_note = stderr
    if line:
        sys.stderr.write(line)
    doc = text
    try:
        if text is None and data is not None:
            from stallscan.report.output import add_unreadable, document

            add_unreadable(data, [])  # (a memo hit: every input was read)
            text = doc = document(data, fmt)
            if text is None:
                from stallscan.report.output import print_terminal, terminal_console

                console = terminal_console(to_file=bool(v["output"]))
                print_terminal(console, data, v["full"], v["section"])
                text = console.export_text() if v["output"] else None
        if v["output"] and text is not None:
            _write(text, v["output"])
        elif text is not None:
            sys.stdout.write(text)
            sys.stdout.flush()
        if note:  # what the walk left out, as the command's accounting says it after the report
            _say(f"note: {note}", plain_note, style="dim")
    except BrokenPipeError:  # the reader closed the pipe early (`| head`): quiet, exit 0, as the command
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return doc


def _write(text: str, output: str) -> None:
    """stallscan.report.output.write_output, which says why when the file cannot be written."""
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
        size = os.stat(output).st_size
    except OSError:
        from stallscan.report.output import write_output

        write_output(text, output)  # (again: it raises the command's error)
        return
    _say(f"wrote {output} ({max(1, round(size / 1024))} KB)")


# what makes rich's stderr console write to a pipe as to a terminal (then it is asked to print)
RICH_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


def _say(message: str, plain: str | None = None, style: str | None = None) -> None:
    """A line on stderr as the commands' console (stallscan.report.output.err_console) prints it: on a pipe,
    the text `plain` (rendered beforehand), or the message itself when rich has nothing to do on it (no
    markup, emoji code, tab or control character); else rich is imported and prints it."""
    if plain is None and message.isprintable() and "[" not in message and ":" not in message:
        plain = message + "\n"
    if plain is not None and plain_stderr():
        sys.stderr.write(plain)
        return
    from stallscan.report.output import err_console

    err_console().print(message, highlight=False, style=style)


def plain_stderr() -> bool:
    """True when the stderr console would write as to a pipe (not a tty, no RICH_ENV variable set): then its
    `is_terminal` is False, and a caller that only asks that (the report's progress bars) needs no console."""
    return not _isatty(sys.stderr) and not any(k in os.environ for k in RICH_ENV)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def plain(message: str, style: str) -> str:
    """What the commands' stderr console writes for `message` on a pipe, with no env var forcing a terminal."""
    import io

    from rich.console import Console

    from stallscan.report.streams import Unpadded

    buf = io.StringIO()
    opts: dict[str, Any] = {"file": Unpadded(buf), "force_terminal": False, "force_jupyter": False}
    console = Console(soft_wrap=True, color_system=None, **opts)
    console.print(message, highlight=False, style=style)
    return buf.getvalue()


def stderr_of(ingested: IngestResult | None) -> tuple[str, str | None, str | None]:
    """(the no-change ingest's line, the walk's left-out note, None) of a memo hit."""
    if ingested is None:
        return "", None, None
    from stallscan.report.output import ingested_line, left_out_line

    return ingested_line(ingested), left_out_line(ingested), None
