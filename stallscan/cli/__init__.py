"""Command-line interface (the only package that imports typer; everything else is core).

Each command group lives in its own module and registers on `app` when imported at the bottom."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, ParamSpec, TypeVar

import typer

from stallscan import __version__
from stallscan.store.errors import EXIT_DB, StallscanError

if TYPE_CHECKING:
    from rich.console import Console

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Replay AI-agent transcripts through stall and turn-boundary logic.",
)

DbOpt = typer.Option(None, "--db", help="Database file (default: $STALLSCAN_DB or ./stallscan.duckdb).")


def _err_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, width=int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else None)


def _fail(exc: StallscanError) -> NoReturn:
    err = _err_console()
    err.print(f"[bold red]error:[/] {exc.message}", highlight=False, soft_wrap=True)
    if exc.hint:
        err.print(f"hint: {exc.hint}", highlight=False, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


P = ParamSpec("P")
R = TypeVar("R")


def _guard(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn user-caused errors into one stderr line and a documented exit code."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except StallscanError as exc:
            _fail(exc)
        except KeyboardInterrupt:
            _err_console().print("interrupted")
            raise typer.Exit(130)
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
            _fail(
                StallscanError(
                    f"database error: {str(exc).strip().splitlines()[0]}",
                    hint="re-run with a fresh --db if the file is damaged",
                    exit_code=EXIT_DB,
                )
            )

    return wrapper


@app.callback(invoke_without_command=True)
def main(version: bool = typer.Option(False, "--version", help="Print the version and exit.")) -> None:
    if version:
        typer.echo(f"stallscan {__version__}")
        raise typer.Exit(0)


def run() -> None:
    if sys.argv[1:] == ["--version"]:  # answered before typer builds every command (it loads pydantic for that)
        sys.stdout.write(f"stallscan {__version__}\n")
        return
    app()


# command modules register themselves on `app`, in the order `--help` lists them
# isort: off
from . import ingest_cmd  # noqa: E402, F401
from . import report_cmd  # noqa: E402, F401
from . import export_cmd  # noqa: E402, F401
from . import boundaries_cmd  # noqa: E402, F401
from . import sweep_cmd  # noqa: E402, F401
from . import stalls_cmd  # noqa: E402, F401
from . import show_cmd  # noqa: E402, F401
from . import guard_cmd  # noqa: E402, F401
from . import spark_cmd  # noqa: E402, F401
# isort: on
