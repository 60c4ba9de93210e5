"""`stallscan ingest` when no file changed, answered before the CLI loads (typer, pydantic and rich cost
more than the check itself; see stallscan.run).

`unchanged_run(argv)` takes the arguments after `ingest`. When they are plain (paths, --db, --json,
--format table|json), the database exists and opens read-only, and every file found is unchanged since the
last ingest, it returns the run's result and the output format; otherwise None, and the CLI runs as usual
(so every error, lock, option and change is handled there, exactly as before).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from stallscan.ingest.run import IngestResult


def _parse(argv: list[str]) -> tuple[list[str], str | None, str] | None:
    paths: list[str] = []
    db: str | None = None
    out = "table"
    args = iter(argv)
    for a in args:
        if a == "--json":
            out = "json"
        elif a in ("--db", "--format"):
            value = next(args, None)
            if value is None or (a == "--format" and value not in ("table", "json")):
                return None
            if a == "--db":
                db = value
            elif out != "json":
                out = value
        elif a.startswith("--db="):
            db = a[len("--db=") :]
        elif a.startswith("-"):
            return None
        else:
            paths.append(a)
    return paths, db, out


def unchanged_run(argv: list[str]) -> tuple[IngestResult, str] | None:
    parsed = _parse(argv)
    if parsed is None:
        return None
    paths, db, out = parsed
    t0 = time.perf_counter()
    from stallscan.store.db import default_db_path

    target = db or default_db_path()
    if target == ":memory:" or not Path(target).is_file():
        return None
    try:
        import duckdb

        from stallscan import SCHEMA_VERSION
        from stallscan.ingest.discover import discover
        from stallscan.ingest.plan import all_unchanged

        found = discover(paths)
        if found.unreadable or not found.files:
            return None
        # opened as store.db.connect would, minus its column-by-column schema comparison (half the open's
        # time): a database of another schema version goes to the CLI, which upgrades it or says why not
        con = duckdb.connect(target, read_only=True)
        t0 = time.perf_counter()  # (as ingest_paths: the seconds of the run, not of opening the database)
        try:
            row = con.execute("SELECT value FROM stallscan_meta WHERE key = 'schema_version'").fetchone()
            n = all_unchanged(con, found.files, "auto") if row and row[0] == str(SCHEMA_VERSION) else None
        finally:
            con.close()
    except Exception:  # any doubt (lock, schema, missing path): the CLI decides and reports
        return None
    if n is None:
        return None
    res = IngestResult(files=n, unchanged=n, searched=found.searched, left_out=found.left_out)
    res.seconds = time.perf_counter() - t0
    if os.environ.get("STALLSCAN_PROFILE"):
        import sys

        sys.stderr.write(f"-- no-change ingest answered before the CLI loaded: {res.seconds:.3f} s\n")
    return res, out
