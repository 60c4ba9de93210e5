"""Running a benchmark's child script once per checkout, one side at a time (bench_scans.py,
bench_stall_replay.py --pairs).

Each side is a process of its own running `child` (python -c) with its checkout's code and queries (PYTHONPATH
and cwd), so a baseline checkout runs its own code. The child prints its figures on lines starting "RESULT ".
"""

from __future__ import annotations

import os
import subprocess
import sys


def interleaved(child: str, argv: list[str], sides: dict[str, str], pairs: int) -> None:
    """`pairs` runs of each side, one side at a time, the order flipped each pair (the first side of `sides`
    first in the first pair: each run sees the load of its own minutes); prints every RESULT line of each run."""
    names = list(sides)
    for i in range(pairs):
        for name in names if i % 2 == 0 else names[::-1]:
            root = sides[name]
            p = subprocess.run(
                [sys.executable, "-c", child, *argv],
                cwd=root,
                env={**os.environ, "PYTHONPATH": root},
                capture_output=True,
                text=True,
            )
            sys.stderr.write(f"-- pair {i + 1}, {name} --\n{p.stderr}")
            lines = [x[len("RESULT ") :] for x in p.stdout.splitlines() if x.startswith("RESULT ")]
            for line in lines or [f"failed ({p.returncode})"]:
                print(f"pair {i + 1} {name:10} {line} load={os.getloadavg()[0]:.1f}", flush=True)
