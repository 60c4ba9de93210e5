#!/usr/bin/env python3
"""How many DuckDB statements a `stallscan report` runs, and their CPU seconds, per phase: every
`execute` / `sql` / `query` of every connection the run opens is counted (a proxy around
`duckdb.connect`), and given to the phase whose function is on the stack (the innermost one listed
below; "connections and the rest" otherwise). Printed to stderr after the command's own output.

    python bench/report_statements.py report NEW --format json --db COPY_OF_DB > /dev/null
    python bench/report_statements.py --sites 15 report NEW --format json --db COPY_OF_DB > /dev/null

`--sites N` also prints the N costliest calling lines of the package; `--list` every statement in the order
run: its start (s after this script's start), thread (the second lane's cursor, the sweep's thread), CPU ms,
phase, calling line and text; `--thread` takes each statement's CPU as time.thread_time of its calling thread
(else time.process_time: DuckDB's worker threads and the other lane included). Cursors made by a counted
connection are counted too. It runs the stallscan the interpreter imports (another checkout's: PYTHONPATH=DIR,
or that checkout's interpreter). The proxy's own bookkeeping is outside the figures, not outside the wall.

    python bench/report_statements.py --thread --list report NEW --format json --db COPY_OF_DB > /dev/null
"""

from __future__ import annotations

import atexit
import collections
import runpy
import sys
import threading
import time
import traceback
from typing import Any

import duckdb

# (file suffix, function) -> phase; the innermost frame found on the stack names the phase
PHASES = [
    ("stallscan/entry.py", "_memo_hit", "entry: memo lookups (before typer, and for the mirror after it)"),
    ("stallscan/ingest/run.py", "ingest_paths", "ingest"),
    ("stallscan/replay/labels.py", "label_events", "labels"),
    ("stallscan/report/build.py", "scope", "scope (session_cells)"),
    ("stallscan/report/sections/corpus.py", "collect", "section corpus"),
    ("stallscan/report/sections/boundaries.py", "collect", "section boundaries"),
    ("stallscan/report/sections/stalls.py", "collect", "section stalls"),
    ("stallscan/report/sections/stalls.py", "first", "section stalls"),
    ("stallscan/report/sections/stalls.py", "rest", "section stalls (rest)"),
    ("stallscan/report/sections/threshold.py", "collect", "section threshold (sweep)"),
    ("stallscan/report/sections/guard.py", "collect", "section guard"),
    ("stallscan/report/timeline.py", "session_refs", "session refs"),
    ("stallscan/report/timeline.py", "timeline_windows", "timelines"),
    ("stallscan/report/memo.py", "key", "memo key"),
    ("stallscan/report/memo.py", "put", "memo put"),
]
# parts, counted inside their phase and again on their own line
PARTS = [
    ("stallscan/store/stamps.py", None, "  stamps (plan, get, put, counters)"),
    ("stallscan/replay/derive.py", "_incremental", "  derive: incremental runs (their compute included)"),
    ("stallscan/replay/stalls.py", "_compute", "  stall replay's statements"),
    ("stallscan/replay/boundaries.py", "compute", "  boundary replay's statements"),
    ("stallscan/store/db.py", None, "  connection set-up (session, schema check)"),
]
COUNTS: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
SITES: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
_CONNECT = duckdb.connect
CLOCK = time.process_time  # --thread: time.thread_time (the calling thread's CPU only)
LISTED: list[tuple[float, str, float, str, str, str]] | None = None  # --list: every statement in order
T0 = time.perf_counter()


def _match(frames: list[traceback.FrameSummary], table: list[tuple[str, str | None, str]]) -> list[str]:
    out = []
    for path, fn, label in table:
        if any(f.filename.endswith(path) and (fn is None or f.name == fn) for f in frames):
            out.append(label)
    return out


def _count(secs: float, text: str = "", start: float = 0.0) -> None:
    frames = traceback.extract_stack()[:-3]
    inner = None  # the innermost phase: the one whose frame is deepest
    for depth, f in enumerate(frames):
        for path, fn, label in PHASES:
            if f.filename.endswith(path) and f.name == fn:
                inner = (depth, label)
    labels = [inner[1] if inner else "connections and the rest", *_match(frames, PARTS)]
    for label in labels:
        COUNTS[label][0] += 1
        COUNTS[label][1] += secs
    own = [f for f in frames if "/stallscan/" in f.filename and "/store/sql.py" not in f.filename]
    if own:
        site = f"{own[-1].filename.split('/stallscan/')[-1]}:{own[-1].lineno} {own[-1].name}"
        SITES[site][0] += 1
        SITES[site][1] += secs
    if LISTED is not None:
        where = f"{own[-1].filename.split('/stallscan/')[-1]}:{own[-1].lineno}" if own else "?"
        LISTED.append(
            (start - T0, threading.current_thread().name, secs, labels[0], where, " ".join(text.split())[:110])
        )


class _Counted:
    """A DuckDB connection whose statements are counted."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        object.__setattr__(self, "_con", con)

    def __getattr__(self, name: str) -> Any:
        got = getattr(self._con, name)
        if name == "cursor":
            return lambda *a, **kw: _Counted(got(*a, **kw))
        if name not in ("execute", "sql", "query", "executemany"):
            return got

        def run(*args: Any, **kw: Any) -> Any:
            # DuckDB's replacement scan finds a Python object the SQL names in the calling frame (this one)
            # or its module: the caller's "_name" locals the statement names are put here (stall_data's)
            text = args[0] if args and isinstance(args[0], str) else ""
            for k, v in sys._getframe(1).f_locals.items():
                if k.startswith("_") and k in text:
                    globals()[k] = v
            t0, w0 = CLOCK(), time.perf_counter()
            try:
                return got(*args, **kw)
            finally:
                _count(CLOCK() - t0, text, w0)

        return run

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._con, name, value)

    def __enter__(self) -> _Counted:
        self._con.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._con.__exit__(*exc)


def _connect(*args: Any, **kw: Any) -> Any:
    return _Counted(_CONNECT(*args, **kw))


def _print(sites: int) -> None:
    n = sum(int(c) for k, (c, _) in COUNTS.items() if not k.startswith(" "))
    secs = sum(s for k, (_, s) in COUNTS.items() if not k.startswith(" "))
    sys.stderr.write(f"{n} DuckDB statements, {secs:.3f} CPU s inside them\n")
    for label, (c, s) in sorted(COUNTS.items(), key=lambda kv: (kv[0].startswith(" "), -kv[1][1])):
        sys.stderr.write(f"{int(c):5d} {s:7.3f}  {label}\n")
    for site, (c, s) in sorted(SITES.items(), key=lambda kv: -kv[1][1])[:sites]:
        sys.stderr.write(f"{int(c):5d} {s:7.3f}  {site}\n")
    for i, (at, thread, s, phase, where, text) in enumerate(LISTED or []):
        line = f"{i:4d} {at:6.3f} s {thread[-6:]:6s} {s * 1000:6.2f} ms  {phase[:24]:24s} {where:34s} {text}"
        sys.stderr.write(line + "\n")


def main() -> None:
    args = sys.argv[1:]
    sites = 0
    global CLOCK, LISTED
    while args[:1] in (["--sites"], ["--thread"], ["--list"]):
        if args[0] == "--thread":
            CLOCK, args = time.thread_time, args[1:]
        elif args[0] == "--list":
            LISTED, args = [], args[1:]
        else:
            sites, args = int(args[1]), args[2:]
    duckdb.connect = _connect
    atexit.register(_print, sites)
    sys.argv = ["stallscan", *args]
    runpy.run_module("stallscan", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
