"""Consoles that write what a reader of a pipe wants: on a stdout (stderr) that is not a terminal, lines
leave without the spaces rich pads table cells and centred titles with. Typer-free: the console-script
entry (stallscan.entry) and the commands (stallscan.cli) both print through it."""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import rich.console


def console(*args: Any, **kwargs: Any) -> rich.console.Console:
    """A rich Console; on stdout (stderr with stderr=True) that is not a terminal, lines leave without
    the spaces rich pads them with (see Unpadded)."""
    if kwargs.get("file") is None:
        stream = sys.stderr if kwargs.get("stderr") else sys.stdout
        if not _isatty(stream):
            kwargs["file"] = Unpadded(stream)
    return _console_class()(*args, **kwargs)


@functools.cache
def _console_class() -> type[rich.console.Console]:
    """rich's Console, but a reader that closed the pipe early raises BrokenPipeError to the caller: rich's own
    handling exits with status 1 and nothing said (`stallscan report | head -1` exited 1), where the commands'
    handlers (stallscan.cli.common, stallscan.report.emit) stop quietly with exit 0, as for every other output."""
    from rich.console import Console as _Console

    class PipeConsole(_Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True  # (nothing more to this stream)
            raise BrokenPipeError

    return PipeConsole


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class Unpadded:
    """A text stream that drops the spaces ending each line: rich pads table cells and centred titles to
    the console width, which a pipe, a file or `diff` should not see. Spaces still open at a flush (a
    line printed in parts) are held back until the rest of the line shows whether they end it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._held = ""  # the spaces at the end of what was written, not yet known to end a line

    def write(self, text: str) -> int:
        lines = (self._held + text).split("\n")
        last = lines.pop()
        body = last.rstrip(" ")
        out = "".join(line.rstrip(" ") + "\n" for line in lines) + body
        self._held = last[len(body) :]
        if out:
            self._stream.write(out)
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ... of the stream
        return getattr(self._stream, name)
