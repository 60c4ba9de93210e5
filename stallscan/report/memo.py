"""The report data, memoised in the database (table `report_memo`).

The report data (what `--format json` prints, plus the private keys the terminal renderer reads, all plain
JSON) is a pure function of the ingested tables, the report options, the labels configuration and the
code. `key(con, opts)` hashes exactly those:

  * the database's data state: the events change counter and count (stallscan.store.stamps: every ingest
    batch bumps the counter; the derive stamps are keyed on it), and the `files` table's row count and
    newest `ingested_at` (an ingest that records only an unrecognized file writes no batch);
  * the report options (every field of ReportOptions: filters, --threshold, --retry-bound, --limit,
    --bootstrap, timelines, the `show` arguments printed) and REPORT_VERSION;
  * the labels inputs the `user_labels` stamp is keyed on (stallscan.toml and the override file's bytes);
  * the code: the rule libraries and replay SQL (stamps.rules_hash), every file of the package and of
    queries/ by path, size and mtime (what Python's bytecode cache trusts), and duckdb's, numpy's and
    pyarrow's installed files.

`get(con, key)` reads only (a read-only connection serves it); `put` stores the data after a computed
report, keeping the newest KEEP entries of the current events version. A database whose events were not
written by ingest (no change counter) has no key: nothing is memoised there.

A repeat by the console script is first looked up in the memo's mirror beside the database
(stallscan.report.mirror), which serves this table's data without importing duckdb while the file is
exactly as it was when the mirror was written.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Any

import duckdb

from stallscan.replay.labels import label_inputs
from stallscan.report.registry import REPORT_VERSION, ReportOptions
from stallscan.store import sql, stamps
from stallscan.store.version import __version__

TABLE = "report_memo"
KEEP = 16  # entries kept per events version (one per option set asked for)
PACKAGE = Path(__file__).resolve().parents[1]


def _stat(p: str) -> str:
    try:
        st = os.stat(p)
    except OSError:
        return "-"
    return f"{st.st_size}:{st.st_mtime_ns}"


@cache
def code_stamp() -> str:
    """The package's files and queries/ by path, size and mtime_ns; duckdb's, numpy's and pyarrow's files."""
    import importlib.util

    h = hashlib.sha256(__version__.encode())
    for base in (PACKAGE, sql.queries_dir()):
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                p = os.path.join(dirpath, name)
                h.update(f"{p}|{_stat(p)}\0".encode())
    for mod in ("duckdb", "numpy", "pyarrow"):  # their installed files, found without importing them
        spec = importlib.util.find_spec(mod)
        origin = spec.origin if spec else None
        h.update(f"{mod}={origin}:{_stat(origin) if origin else '-'}\0".encode())
    return h.hexdigest()


def _data_state(con: duckdb.DuckDBPyConnection) -> list[Any] | None:
    _, ev, n = stamps.with_state(con)
    if ev is None:
        return None
    files = con.execute("SELECT count(*), max(ingested_at)::VARCHAR FROM main.files").fetchall()[0]
    return [ev, n, *(files or ())]


def key(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> str | None:
    """The memo key of the report these options ask for on this database (None: not memoised)."""
    state = _data_state(con)
    if state is None or opts._replayed:
        return None
    options = {k: v for k, v in asdict(opts).items() if not k.startswith("_")}
    inputs = {
        "report": REPORT_VERSION,
        "data": state,
        "options": options,
        "labels": label_inputs(opts._config),
        "rules": stamps.rules_hash(),
        "code": code_stamp(),
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()


def get(con: duckdb.DuckDBPyConnection, memo_key: str | None) -> dict[str, Any] | None:
    """The memoised report data for this key, or None. Writes nothing."""
    if memo_key is None or not sql.has_table(con, TABLE, temporary=None):
        return None
    row = sql.first(sql.query(con, "report/memo_get", {"key": memo_key}))
    return None if row is None else dict(json.loads(row[0]))


def dumps(data: dict[str, Any]) -> str:
    """The report data as the JSON text the memo stores (what get() returns, after json.loads)."""
    return json.dumps(data, default=str)


def put(con: duckdb.DuckDBPyConnection, memo_key: str | None, text: str) -> None:
    """Store the report data (dumps(data)) under its key."""
    if memo_key is None:
        return
    sql.run(
        con,
        "report/memo_put",
        {"key": memo_key, "data": text, "events_version": stamps.events_version(con), "keep": KEEP},
    )
