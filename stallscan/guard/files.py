"""Opening the guard's files (its log, the harness's transcript) so that nothing can hold the hook: opened
without blocking and used only when they are regular files. Imports nothing of stallscan."""

from __future__ import annotations

import os
import stat


class NotRegular(OSError):
    """The log path names a FIFO, a device, a socket or a directory: never read or written (a FIFO with no
    reader blocks the open, /dev/zero reads forever)."""


def open_regular(path: str | os.PathLike[str], flags: int, mode: int = 0o600) -> int:
    """A descriptor of `path` opened without blocking (O_NONBLOCK: a FIFO never holds the hook), checked to
    be a regular file; raises OSError (NotRegular) otherwise."""
    fd = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0), mode)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(f"{os.fspath(path)!s} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd
