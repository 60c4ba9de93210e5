"""Names the command modules use, imported only when a command runs (so `--version` / `--help` stay fast:
duckdb, rich, numpy and pyarrow load when a command first needs them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
    """A rich Console that leaves a pipe's lines unpadded (stallscan.report.streams)."""
    from stallscan.report.streams import console

    return console(*args, **kwargs)


def Table(*args: Any, **kwargs: Any) -> rich.table.Table:
    from rich.table import Table as _Table

    return _Table(*args, **kwargs)
