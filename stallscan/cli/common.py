"""What every command shares: output format, the database path and connection, errors as one stderr line
and an exit code (`_guard`), writing an output file. Imports no command and not the root app."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, ParamSpec, TypeVar

import typer

from stallscan.report.output import check_names as check_names
from stallscan.report.output import closest as closest
from stallscan.report.output import err_console, print_error
from stallscan.report.output import parse_time as parse_time
from stallscan.report.output import write_output as write_output
from stallscan.store.errors import EXIT_DB, EXIT_INPUT, StallscanError, disk_full, from_db_error, no_space

if TYPE_CHECKING:
    import duckdb

    from stallscan.ingest.result import IngestResult


def out_format(fmt: str, as_json: bool, choices: tuple[str, ...]) -> str:
    """The output format: --json is an alias of --format json; anything else must be one of `choices`."""
    fmt = "json" if as_json else fmt
    if fmt not in choices:
        raise StallscanError(f"unknown --format {fmt!r}", hint="one of: " + ", ".join(choices))
    return fmt


# every command's stderr console (in stallscan.report.output beside write_output: typer-free, for stallscan.entry)
_err_console = err_console


def scope_sessions(
    con: duckdb.DuckDBPyConnection,
    since: str | None = None,
    until: str | None = None,
    harness: list[str] | None = None,
    model: list[str] | None = None,
) -> bool:
    """The shared session filters, as `report` applies them: the temp table `scope_sessions` holds the
    sessions active at or after --since and before --until, of a --harness / --model given (whole sessions).
    True when a filter narrowed anything (the command then reads through scope_sessions)."""
    from stallscan.report.summary_cells import refresh_sessions
    from stallscan.store import sql

    start, end = parse_time("--since", since), parse_time("--until", until)
    check_names(con, "--harness", harness, "source_format")
    check_names(con, "--model", model, "model")
    params = {"since": start, "until": end, "harness": harness or None, "model": model or None}
    refresh_sessions(con)  # (report/scoped_events reads the per-session summary rows)
    sql.run(con, "report/scoped_events", params)
    return any(v is not None for v in params.values())


_DB: list[str] = []  # the database the command opened (its errors name it)


def db_path(db: str | None) -> str:
    from stallscan.store.db import default_db_path

    path = db or default_db_path()
    _DB.append(path)
    return path


def open_db(db: str | None, read_only: bool = False, checked: bool = False) -> duckdb.DuckDBPyConnection:
    """Connect to an existing stallscan database. A missing file is exit 3 and is never created; a file
    that is not a DuckDB database (a transcript given as --db, say) is exit 5. checked: as for
    stallscan.store.db.connect (a write connection of this process to the same file is open)."""
    from stallscan.store.db import connect, connect_copy, not_writable

    path = db_path(db)
    check_db(path)
    if not read_only and path != ":memory:" and not_writable(path):
        con = connect_copy(path)  # the derived tables are made in memory: nothing to write back
        _err_console().print(
            f"note: {path} is read-only here ({not_writable(path)}): derived tables are computed in memory, not saved",
            highlight=False,
        )
    else:
        con = connect(path, read_only=read_only, checked=checked)
    _OPEN.append(con)
    return con


def read_unchanged(path: str, paths: list[str], fmt: str = "auto") -> IngestResult | None:
    """The ingest result when every file the paths name is unchanged, found on a read-only connection (no
    write lock, nothing written); None: ingest as usual (which also reports a lock or a stale schema)."""
    from stallscan.ingest.run import unchanged
    from stallscan.store.db import peek

    con = peek(path) if path != ":memory:" else None
    if con is None:
        return None
    try:
        return unchanged(con, paths, fmt)
    finally:
        con.close()


_OPEN: list[duckdb.DuckDBPyConnection] = []  # connections a command opened; _guard closes them however the command ends


def check_db(path: str) -> None:
    from pathlib import Path

    from stallscan.store.errors import InputError, SchemaError

    if path == ":memory:":
        return
    p = Path(path)
    if not p.exists():
        raise InputError(f"no database at {path}", hint=missing_db_hint(path))
    if p.is_dir():
        raise InputError(f"--db {path} is a directory", hint="pass the database file, e.g. --db stallscan.duckdb")
    if not p.is_file():  # opening a FIFO waits for a writer forever; a device reads forever
        raise InputError(
            f"--db {path} is not a regular file (a FIFO, socket or device)",
            hint="pass the database file, e.g. --db stallscan.duckdb",
        )
    with open(p, "rb") as fh:
        head = fh.read(4096)
    if len(head) >= 12 and head[8:12] != b"DUCK":
        if not head.strip(b"\x00"):  # a zeroed header: a damaged database, not a transcript
            from stallscan.store.errors import damaged_db

            raise damaged_db("its first block (the file header) is all zero bytes", path)
        if head.lstrip()[:1] in (b"{", b"["):
            raise SchemaError(
                f"{path} is not a stallscan database (a transcript)",
                hint=f"ingest it into a database: stallscan ingest {path} --db stallscan.duckdb",
            )
        raise SchemaError(
            f"{path} is not a stallscan database (not a DuckDB file, or one whose header is damaged)",
            hint="pass the database file with --db; if this was one, it is damaged: move it aside and ingest the "
            "transcripts again into a new one",
        )


def missing_db_hint(path: str) -> str:
    from stallscan.ingest.discover import DEFAULT_FOLDERS, default_roots

    found = [str(r) for r in default_roots() if r.exists()]
    if found:
        return "run stallscan ingest first; it would read the usual log folders found here: " + ", ".join(found)
    return (
        "run stallscan ingest PATH first (none of the usual log folders exist here: "
        + ", ".join(list(DEFAULT_FOLDERS.values())[:3])
        + ", ...)"
    )


def _fail(exc: StallscanError) -> NoReturn:
    print_error(exc)
    raise typer.Exit(exc.exit_code)


P = ParamSpec("P")
R = TypeVar("R")


def _closing(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    try:
        return fn(*args, **kwargs)
    finally:
        while _OPEN:  # a connection exists only once duckdb was imported
            with contextlib.suppress(sys.modules["duckdb"].Error):
                _OPEN.pop().close()


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush of what was buffered for a closed pipe
    raises nothing more."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _guard(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn user-caused errors into one stderr line and a documented exit code."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return _closing(fn, *args, **kwargs)
        except StallscanError as exc:
            _fail(exc)
        except KeyboardInterrupt:
            _err_console().print("interrupted")
            raise typer.Exit(130)
        except BrokenPipeError:  # the reader closed the pipe early (`| head`): nothing more to say, no error
            _quiet_stdout()
            raise typer.Exit(0) from None
        except OSError as exc:  # a path the user gave: missing folder, permissions, disk full
            if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT) or no_space(str(exc)):
                _fail(disk_full(str(exc), exc.filename if isinstance(exc.filename, str) else None))
            _fail(
                StallscanError(
                    f"{exc.strerror or type(exc).__name__}: {exc.filename or exc}",
                    hint="check the path and its permissions",
                    exit_code=EXIT_INPUT,
                )
            )
        except Exception as exc:
            duckdb = sys.modules.get("duckdb")  # imported lazily: no duckdb, no duckdb error
            if duckdb is None or not isinstance(exc, duckdb.Error):
                raise
            if isinstance(exc, duckdb.OutOfMemoryException):
                _fail(
                    StallscanError(
                        f"out of memory: {str(exc).strip().splitlines()[0]}",
                        hint="raise the limit, e.g. STALLSCAN_MEMORY_LIMIT=4GB",
                        exit_code=EXIT_DB,
                    )
                )
            _fail(from_db_error(str(exc), _DB[-1] if _DB else None))

    return wrapper
