"""The environment the benchmarks run stallscan processes in: as installed.

A pip install byte-compiles the package and reuses the compiled modules in every later process. With
PYTHONDONTWRITEBYTECODE set (some shells and CI images set it) and a venv installed with --no-compile (as .ci/run
installs), every stallscan process compiles its ~350 modules again: about 0.3 s of a first report, 0.2 s of a
one-session report, which no installed stallscan pays. The bench scripts run their children in ENV, without it
(the first run of each command writes the compiled modules; the scripts warm up before they time).

The console script (stallscan.entry.main) also sets two variables before numpy and duckdb load: DuckDB's allocator
keeps freed pages 10 s, numpy's OpenBLAS starts no spinning worker threads. A benchmark that runs stallscan's
functions in its own process, or in a `python -c` child, would otherwise measure a process no user runs (a 10M
replay without them spent 6.4 % of the stall replay's `perf` samples clearing pages the allocator had handed
back). Importing this module sets them in this process, as the entry does (a value already set is kept), so it
must be imported before numpy or duckdb; ENV carries them to the children (a --baseline checkout's too).
"""

from __future__ import annotations

import os

from stallscan import entry

for _name in ("ALLOCATOR_CONF", "BLAS_THREADS"):  # (a checkout from before a variable has no constant for it)
    if hasattr(entry, _name):
        os.environ.setdefault(*getattr(entry, _name))

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
