"""Names the command modules use, imported only when a command runs (so `--version` / `--help` stay fast:
duckdb, rich, numpy and pyarrow load when a command first needs them)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import duckdb
    import rich.console
    import rich.table


def connect(*args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
    from stallscan.store.db import connect as _connect

    return _connect(*args, **kwargs)


def default_db_path() -> str:
    from stallscan.store.db import default_db_path as _default

    return _default()


def Console(*args: Any, **kwargs: Any) -> rich.console.Console:
    """A rich Console; on stdout (stderr with stderr=True) that is not a terminal, lines leave without
    the spaces rich pads them with (see Unpadded)."""
    from rich.console import Console as _Console

    if kwargs.get("file") is None:
        stream = sys.stderr if kwargs.get("stderr") else sys.stdout
        if not _isatty(stream):
            kwargs["file"] = Unpadded(stream)
    return _Console(*args, **kwargs)


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


def Table(*args: Any, **kwargs: Any) -> rich.table.Table:
    from rich.table import Table as _Table

    return _Table(*args, **kwargs)
