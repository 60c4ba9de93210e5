"""`stallscan check`: read every block of the database and say what to do (stallscan.store.check)."""

from __future__ import annotations

import json
import sys

import typer

from ._lazy import Console, Table
from .common import _guard, check_db, db_path, out_format
from .options import Db, Json

app = typer.Typer()  # this module's commands (stallscan.cli.COMMANDS names it)


@app.command()
@_guard
def check(
    db: Db = None,
    out: str = typer.Option("table", "--format", metavar="<table|json>", help="Output format."),
    as_json: Json = False,
) -> None:
    """Read every stored value of every table (DuckDB verifies each block's checksum): exit 0 when all read,
    6 with what to do when the database is damaged."""
    from stallscan.store.check import check_file, raise_if_damaged

    out = out_format(out, as_json, ("table", "json"))
    path = db_path(db)
    check_db(path)
    res = check_file(path)
    if out == "json":
        sys.stdout.write(json.dumps(res.as_dict(), indent=1) + "\n")
    elif res.tables:
        table = Table("table", "rows", "columns", "status", title=f"check {path}", title_justify="left")
        for t in res.tables:
            table.add_row(t.name, "" if t.rows is None else str(t.rows), str(t.columns), t.error or "ok")
        Console().print(table)
    if res.ok and out != "json":
        n = sum(t.rows or 0 for t in res.tables)
        Console(stderr=True).print(f"ok: {len(res.tables)} tables, {n} rows, every block read", highlight=False)
    raise_if_damaged(res)
