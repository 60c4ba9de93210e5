"""The benchmarks measure stallscan as installed: bench/installed.py sets, in the benchmark's own process, the
variables the console script sets before numpy and duckdb load (stallscan.entry.main), keeps a value the user set,
and hands them to every child; bench_replay.py, which times the replay in its own process, imports it first."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from stallscan import entry
from tests.helpers import ROOT

PROBE = (
    "import os, sys; sys.path.insert(0, 'bench'); import installed, sides; "
    "names = ('DUCKDB_JE_MALLOC_CONF', 'OPENBLAS_NUM_THREADS', 'PYTHONDONTWRITEBYTECODE'); "
    "print([os.environ.get(n) for n in names]); print([installed.ENV.get(n) for n in names]); "
    "print([sides.side_env('x').get(n) for n in names])"
)


def _probe(**given: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DUCKDB_JE_MALLOC_CONF", "OPENBLAS_NUM_THREADS")}
    env.update(given, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def test_the_console_scripts_variables_are_set_and_handed_to_children() -> None:
    alloc, blas = entry.ALLOCATOR_CONF[1], entry.BLAS_THREADS[1]
    here, env, side = _probe()
    assert here == repr([alloc, blas, "1"])
    assert env == side == repr([alloc, blas, None])  # (children also run without PYTHONDONTWRITEBYTECODE)


@pytest.mark.parametrize("name", ["DUCKDB_JE_MALLOC_CONF", "OPENBLAS_NUM_THREADS"])
def test_a_value_the_user_set_is_kept(name: str) -> None:
    here, env, _ = _probe(**{name: "7"})
    assert "'7'" in here and "'7'" in env


def test_bench_replay_imports_it_before_numpy_and_duckdb() -> None:
    tree = ast.parse((ROOT / "bench" / "bench_replay.py").read_text())
    order = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            order += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            order.append(node.module)
    later = [m for m in order if m.split(".")[0] in ("numpy", "duckdb", "stallscan", "polars", "pyarrow")]
    assert later, order
    assert order.index("installed") < min(order.index(m) for m in later)
