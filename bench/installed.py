"""The environment the benchmarks run stallscan processes in: as installed.

A pip install byte-compiles the package and reuses the compiled modules in every later process. With
PYTHONDONTWRITEBYTECODE set (some shells and CI images set it) and a venv installed with --no-compile (as .ci/run
installs), every stallscan process compiles its ~350 modules again: about 0.3 s of a first report, 0.2 s of a
one-session report, which no installed stallscan pays. The bench scripts run their children in ENV, without it
(the first run of each command writes the compiled modules; the scripts warm up before they time).
"""

from __future__ import annotations

import os

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
