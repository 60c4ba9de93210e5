#!/usr/bin/env python3
"""Where a `stallscan report` spends its CPU and wall: seconds (time.process_time: every thread of the process, so
DuckDB's workers count) per phase of one run, printed to stderr after the command's own output. Beside them the
CPU seconds of the thread that ran the phase (time.thread_time): what that thread carried itself (its Python and
the share of each statement DuckDB runs on the calling thread; a statement on one thread only, such as a
checkpoint, all of it). Unlike CPUs busy it does not depend on the machine's load: work that other threads do not
share bounds the phase's wall on any number of CPUs.

    python bench/report_phases.py report NEW --format json --db COPY_OF_DB > /dev/null

It runs the stallscan the interpreter imports (another checkout's: PYTHONPATH=DIR). The
phases are the entry's mirror / memo lookups, the ingest, the labels, the scope, each section (with the
derives it brings up to date; the sweep's, stall replay's and boundary replay's parts shown indented,
inside their section's figure) and the document; "the rest" is typer, the connections and the imports
made on the way. Modules are imported before the clock starts, so imports mostly fall outside the phases.
"""

from __future__ import annotations

import atexit
import collections
import importlib
import runpy
import sys
import time
from collections.abc import Callable
from typing import Any

# (module, function, label); an indented label is a part of an outer phase, counted on its own line
PHASES = [
    ("stallscan.entry", "_report", "entry: mirror / memo lookup before typer"),
    ("stallscan.entry", "_mirror_after_command", "entry: mirror written after the command"),
    ("stallscan.cli.accounting", "check_scope", "check_scope (events in scope)"),
    ("stallscan.ingest.run", "ingest_paths", "ingest"),
    ("stallscan.replay.labels", "label_events", "labels"),
    ("stallscan.report.build", "scope", "scope (session_cells)"),
    ("stallscan.report.sections.corpus", "collect", "section corpus"),
    ("stallscan.report.sections.boundaries", "collect", "section boundaries"),
    ("stallscan.report.sections.stalls", "collect", "section stalls"),
    ("stallscan.report.sections.stalls", "first", "section stalls: first part"),
    ("stallscan.report.sections.stalls", "rest", "section stalls: rest"),
    ("stallscan.report.sections.threshold", "collect", "section threshold (sweep)"),
    ("stallscan.report.sections.guard", "collect", "section guard"),
    ("stallscan.report.timeline", "session_refs", "session refs"),
    ("stallscan.report.timeline", "timeline_windows", "timelines"),
    ("stallscan.report.memo", "put", "memo put"),
    ("stallscan.report.output", "document", "document"),
    ("stallscan.replay.boundaries", "replay_boundaries", "  boundaries: the replay (derive)"),
    ("stallscan.replay.stalls", "replay_stalls", "  stalls: the replay (derive)"),
    ("stallscan.sweep.bins", "load_cells", "  sweep: the cells (sweep_bins derive + read)"),
    ("stallscan.sweep.bins", "refresh", "  sweep: sweep_bins derive (also inside the cells' line above)"),
    ("stallscan.sweep.bins", "load_totals", "  sweep: the cells summed over sessions (read)"),
    ("stallscan.sweep.boot", "load", "  sweep: the stored bootstrap sums read"),
    ("stallscan.sweep.core", "sweep_from_cells", "  sweep: sweep_from_cells"),
    ("stallscan.sweep.core", "tool_results_left_out", "  sweep: tool results left out"),
]
SECONDS: dict[str, float] = collections.defaultdict(float)
WALL: dict[str, float] = collections.defaultdict(float)  # wall s of the same calls (CPU / wall: CPUs busy)
OWN: dict[str, float] = collections.defaultdict(float)  # CPU s of the thread that made the calls
DEPTH = [0]  # nesting of the outer phases (a phase inside another is counted in the outer one only)


def _timed(fn: Callable[..., Any], label: str) -> Callable[..., Any]:
    part = label.startswith(" ")

    def run(*args: Any, **kw: Any) -> Any:
        counted = part or DEPTH[0] == 0
        DEPTH[0] += 0 if part else 1
        t0, w0, o0 = time.process_time(), time.perf_counter(), time.thread_time()
        try:
            return fn(*args, **kw)
        finally:
            DEPTH[0] -= 0 if part else 1
            if counted:
                SECONDS[label] += time.process_time() - t0
                WALL[label] += time.perf_counter() - w0
                OWN[label] += time.thread_time() - o0

    return run


def _install() -> None:
    for module, name, label in PHASES:
        m = importlib.import_module(module)
        if not hasattr(m, name):  # (a phase another checkout's code does not have)
            continue
        if name == "collect":  # the registered section holds its collect function
            object.__setattr__(m.SECTION, "collect", _timed(m.SECTION.collect, label))
        else:
            setattr(m, name, _timed(getattr(m, name), label))
    # functions the sections imported by name: their own references too
    for module, name, _ in PHASES:
        for section in ("boundaries", "stalls", "threshold"):
            m = importlib.import_module(f"stallscan.report.sections.{section}")
            if getattr(m, name, None) is not None and name != "collect":
                setattr(m, name, getattr(importlib.import_module(module), name))


def _print(t0: float, w0: float) -> None:
    total, wall = time.process_time() - t0, time.perf_counter() - w0
    outer = sum(v for k, v in SECONDS.items() if not k.startswith(" "))
    outer_wall = sum(v for k, v in WALL.items() if not k.startswith(" "))
    sys.stderr.write(
        f"CPU s / wall s per phase, CPUs busy, CPU s of the phase's own thread ({total:.3f} / {wall:.3f} s in all, "
        "after the imports made here)\n"
    )
    for label, secs in sorted(SECONDS.items(), key=lambda kv: (kv[0].startswith(" "), -kv[1])):
        busy = secs / WALL[label] if WALL[label] else 0.0
        sys.stderr.write(f"{secs:7.3f} {WALL[label]:7.3f} {busy:5.2f} {OWN[label]:7.3f}  {label}\n")
    sys.stderr.write(
        f"{total - outer:7.3f} {wall - outer_wall:7.3f}                the rest (typer, connections, imports on the way)\n"
    )


def main() -> None:
    _install()
    atexit.register(_print, time.process_time(), time.perf_counter())
    sys.argv = ["stallscan", *sys.argv[1:]]
    runpy.run_module("stallscan", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
