"""Running a benchmark's child script once per checkout (bench_scans.py, bench_stall_replay.py).

Each side is a process of its own running `child` (python -c) with its checkout's code and queries (PYTHONPATH
and cwd), so a baseline checkout runs its own code. A child gets a fresh copy of the database as its first
argument (made and removed here, so the child script only benchmarks) and prints its figures on lines starting
"RESULT ".
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator

from installed import ENV  # (bench/installed.py: children run as installed)


def checkouts(baseline: str | None) -> dict[str, str]:
    """The sides to run: the baseline checkout (when given) first, then this one (the checkout holding bench/)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return ({"baseline": os.path.abspath(baseline)} if baseline else {}) | {"this code": here}


@contextlib.contextmanager
def scratch_copy(src: str) -> Iterator[str]:
    """A copy of the database file `src` for one run, beside it (same disk), removed with its WAL afterwards."""
    fd, db = tempfile.mkstemp(prefix=os.path.basename(src) + ".", suffix=".duckdb", dir=os.path.dirname(src))
    os.close(fd)
    try:
        shutil.copyfile(src, db)
        yield db
    finally:
        for f in (db, db + ".wal"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(f)


def side_env(root: str) -> dict[str, str]:
    """The environment of a child run under checkout `root` (with cwd=root: its code and queries)."""
    return {**ENV, "PYTHONPATH": root}  # (as installed: bench/installed.py)


def interleaved(child: str, db: str, argv: list[str], sides: dict[str, str], pairs: int) -> None:
    """`pairs` runs of each side, one side at a time, the order flipped each pair (the first side of `sides`
    first in the first pair: each run sees the load of its own minutes), each on a fresh copy of `db`; prints
    every RESULT line of each run."""
    names = list(sides)
    for i in range(pairs):
        for name in names if i % 2 == 0 else names[::-1]:
            with scratch_copy(db) as copy:
                root = sides[name]
                p = subprocess.run(
                    [sys.executable, "-c", child, copy, *argv],
                    cwd=root,
                    env=side_env(root),
                    capture_output=True,
                    text=True,
                )
            sys.stderr.write(f"-- pair {i + 1}, {name} --\n{p.stderr}")
            lines = [x[len("RESULT ") :] for x in p.stdout.splitlines() if x.startswith("RESULT ")]
            for line in lines or [f"failed ({p.returncode})"]:
                print(f"pair {i + 1} {name:10} {line} load={os.getloadavg()[0]:.1f}", flush=True)
