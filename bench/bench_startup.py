#!/usr/bin/env python3
"""Start-up of the `stallscan` console script beside `python -c pass`, whole-process, interleaved.

    python bench/bench_startup.py [--runs 30]

Each round runs, one after the other: `python -c pass`, `stallscan --version` and `stallscan --help` (the
console script beside this interpreter, else `python -m stallscan`). Prints min and median of every
command over all rounds, side by side, and the targets with their figures: `--version` within 5x of
`python -c pass` (min and median each), `--version` and `--help` within 0.25 s (median).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from installed import ENV  # (bench/installed.py: children run as installed)


def entry() -> list[str]:
    script = Path(sys.executable).parent / "stallscan"
    return [str(script)] if script.exists() else [sys.executable, "-m", "stallscan"]


def once(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.decode()[-300:]}")
    return dt


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30, help="rounds (each command once per round; >= 20)")
    args = ap.parse_args()
    cmds = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "stallscan --version": [*entry(), "--version"],
        "stallscan --help": [*entry(), "--help"],
    }
    times: dict[str, list[float]] = {k: [] for k in cmds}
    print(f"console script: {' '.join(entry())}; load average {os.getloadavg()[0]:.1f} (2 CPUs, shared)")
    for _ in range(max(args.runs, 20)):
        for name, cmd in cmds.items():
            times[name].append(once(cmd))
    base = times["python -c pass"]
    print("| command | min s | median s | min x pass | median x pass |")
    print("|---|---|---|---|---|")
    for name, xs in times.items():
        lo, mid = min(xs), statistics.median(xs)
        print(f"| `{name}` | {lo:.3f} | {mid:.3f} | {lo / min(base):.1f} | {mid / statistics.median(base):.1f} |")
    v = times["stallscan --version"]
    r_min, r_med = min(v) / min(base), statistics.median(v) / statistics.median(base)
    print(f"--version <= 5x python -c pass: min {r_min:.1f}x, median {r_med:.1f}x ({verdict(max(r_min, r_med) <= 5)})")
    for name in ("stallscan --version", "stallscan --help"):
        m = statistics.median(times[name])
        print(f"{name} <= 0.25 s: median {m:.3f} s ({verdict(m <= 0.25)})")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
