#!/usr/bin/env python3
"""Ingest benchmark: stallscan vs. DuckDB's bare `read_json` (explicit columns) on the same files.

    python bench/bench_ingest.py --bytes 1G            # Claude-Code-shaped and OpenAI-chat-shaped corpora
    python bench/bench_ingest.py --bytes 200M --format openai --files 500
    python bench/bench_ingest.py --bytes 1G --repeat 3  # each contender's fastest of 3 interleaved runs

Every figure comes from this one run: each command runs as its own process (start-up included),
the bare read first, then `stallscan ingest` into a fresh database, then the same ingest again with
nothing changed. Peak RSS is the child's own max RSS (os.wait4). Printed as ratios, with the targets:
ingest within 2x of the bare read into a file, peak RSS under 2 GB, no-change re-ingest under 5% of the first.

Two bare reads are timed: into an in-memory table (the issue's baseline: parse only, nothing
written) and the same read into a table of a fresh database file (what keeping the columns costs:
DuckDB compresses and writes them). stallscan's ratio is printed against both. With --repeat N every
contender runs N times (interleaved) and its fastest run is reported: on a machine whose speed
drifts, minima compare better than single runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from installed import ENV  # (bench/installed.py: children run as installed)

HERE = Path(__file__).resolve().parent
BARE = {
    "claude": "{sessionId:'VARCHAR', uuid:'VARCHAR', parentUuid:'VARCHAR', type:'VARCHAR', timestamp:'TIMESTAMPTZ', "
    "isMeta:'BOOLEAN', message:'STRUCT(id VARCHAR, role VARCHAR, stop_reason VARCHAR, content JSON)'}",
    "openai": "{session_id:'VARCHAR', role:'VARCHAR', content:'JSON', tool_calls:'JSON', tool_call_id:'VARCHAR', "
    "finish_reason:'VARCHAR', timestamp:'VARCHAR'}",
}


CPU: dict[str, float] = {}  # the child's user + system CPU seconds of the last run() (all its threads)


def run(cmd: list[str], cwd: Path | None = None) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MiB) and stdout of one child process (`python -m` imports from its cwd first:
    each stallscan runs from its own checkout); its CPU seconds go to CPU["last"]."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=ENV)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    CPU["last"] = usage.ru_utime + usage.ru_stime
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"command failed: {' '.join(cmd)}\n{err.decode(errors='replace')}")
    return wall, usage.ru_maxrss / 1024, out.decode()


def bare_cmd(fmt: str, pattern: str, db: str = "") -> list[str]:
    code = (
        f"import duckdb,sys; c=duckdb.connect({db!r}); "
        f"c.execute(\"CREATE TABLE t AS SELECT * FROM read_json('{pattern}', format='newline_delimited', "
        f"columns={BARE[fmt]})\"); print(c.execute('select count(*) from t').fetchone()[0])"
    )
    return [sys.executable, "-c", code]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytes", default="1G")
    ap.add_argument("--format", choices=["claude", "openai", "both"], default="both")
    ap.add_argument("--files", type=int, default=1, help="spread the corpus over this many files")
    ap.add_argument("--workdir", default=None, help="where corpora and databases go (default: a temp dir)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="run every contender N times, report each one's fastest")
    ap.add_argument(
        "--baseline",
        metavar="DIR",
        help="another checkout of stallscan with its own venv (DIR/.venv, e.g. a git worktree of main): its ingest "
        "and no-change re-ingest are timed in the same interleaved runs, and this checkout's speed-up is printed",
    )
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="stallscan-bench-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for fmt in ["claude", "openai"] if args.format == "both" else [args.format]:
        target = work / f"{fmt}_{args.bytes}_{args.files}"
        out = target if args.files > 1 else target.with_suffix(".jsonl")
        if not out.exists():
            gen = [sys.executable, str(HERE / "gen.py"), "--format", fmt, "--bytes", args.bytes, "--out", str(out)]
            if args.files > 1:
                gen += ["--files", str(args.files)]
            subprocess.run(gen, check=True, stdout=subprocess.DEVNULL)
        pattern = str(out / "*.jsonl") if args.files > 1 else str(out)
        nbytes = sum(p.stat().st_size for p in (out.glob("*.jsonl") if args.files > 1 else [out]))
        subprocess.run(
            ["cat"] + ([str(p) for p in out.glob("*.jsonl")] if args.files > 1 else [str(out)]),
            stdout=subprocess.DEVNULL,
            check=True,
        )  # warm the page cache for both contenders
        db = work / f"{fmt}.duckdb"
        bare_db = work / f"{fmt}_bare.duckdb"
        ingest = [sys.executable, "-m", "stallscan", "ingest", str(out), "--db", str(db), "--json"]
        times: dict[str, list[float]] = {"bare": [], "bare_file": [], "ingest": [], "re": [], "base": [], "base_re": []}
        # CPU seconds (user + system, every thread): on a shared, loaded machine the wall clock measures the
        # other users as much as the command; CPU time measures the work
        cpu: dict[str, list[float]] = {"bare_file": [], "ingest": [], "base": []}
        base_py = str(Path(args.baseline).resolve() / ".venv" / "bin" / "python") if args.baseline else None
        base_db = work / f"{fmt}_base.duckdb"
        base_rss = 0.0
        bare_rss = ing_rss = 0.0
        for _ in range(args.repeat):  # the contenders interleaved, so a slow spell of the machine hits all
            t, rss, _ = run(bare_cmd(fmt, pattern))
            times["bare"].append(t)
            bare_rss = max(bare_rss, rss)
            for p in (db, db.with_suffix(".duckdb.wal"), bare_db, bare_db.with_suffix(".duckdb.wal")):
                p.unlink(missing_ok=True)
            times["bare_file"].append(run(bare_cmd(fmt, pattern, str(bare_db)))[0])
            cpu["bare_file"].append(CPU["last"])
            bare_db.unlink(missing_ok=True)
            t, rss, ing_out = run(ingest, HERE.parent)
            times["ingest"].append(t)
            cpu["ingest"].append(CPU["last"])
            ing_rss = max(ing_rss, rss)
            t, _, re_out = run(ingest, HERE.parent)
            times["re"].append(t)
            if base_py:
                for p in (base_db, base_db.with_suffix(".duckdb.wal")):
                    p.unlink(missing_ok=True)
                base_cmd = [base_py, *ingest[1:-2], str(base_db), "--json"]
                t, rss, _ = run(base_cmd, Path(args.baseline).resolve())
                times["base"].append(t)
                cpu["base"].append(CPU["last"])
                base_rss = max(base_rss, rss)
                times["base_re"].append(run(base_cmd, Path(args.baseline).resolve())[0])
                base_db.unlink(missing_ok=True)
        bare_s, bare_file_s, ing_s, re_s = (min(times[k]) for k in ("bare", "bare_file", "ingest", "re"))
        summary, again = json.loads(ing_out), json.loads(re_out)
        assert again["ingested"] == 0 and again["events"] == 0, "re-ingest read files again"
        rows.append(
            {
                "format": fmt,
                "MB": nbytes / 1e6,
                "lines": summary["lines"],
                "events": summary["events"],
                "bare_s": bare_s,
                "bare_MBps": nbytes / 1e6 / bare_s,
                "bare_rss_MiB": bare_rss,
                "bare_file_s": bare_file_s,
                "bare_file_MBps": nbytes / 1e6 / bare_file_s,
                "ingest_s": ing_s,
                "ingest_MBps": nbytes / 1e6 / ing_s,
                "ratio": ing_s / bare_s,
                "ratio_file": ing_s / bare_file_s,
                "bare_file_cpu_s": min(cpu["bare_file"]),
                "ingest_cpu_s": min(cpu["ingest"]),
                "cpu_ratio_file": min(cpu["ingest"]) / min(cpu["bare_file"]),
                "peak_rss_MiB": ing_rss,
                "reingest_s": re_s,
                "reingest_pct": 100 * re_s / ing_s,
                "startup_s": min(run([sys.executable, "-c", "pass"])[0] for _ in range(3)),
            }
        )
        if base_py:
            base_s, base_re_s = min(times["base"]), min(times["base_re"])
            rows[-1].update(
                baseline_s=base_s,
                baseline_MBps=nbytes / 1e6 / base_s,
                baseline_ratio_file=base_s / bare_file_s,
                baseline_cpu_ratio_file=min(cpu["base"]) / min(cpu["bare_file"]),
                baseline_rss_MiB=base_rss,
                baseline_reingest_s=base_re_s,
                baseline_reingest_pct=100 * base_re_s / base_s,
                speedup=base_s / ing_s,
            )
    print(
        f"{'format':8} {'MB':>8} {'bare MB/s':>10} {'bare->file':>11} {'stallscan MB/s':>15} {'ratio':>6} "
        f"{'vs file':>8} {'peak RSS MiB':>13} {'re-ingest':>10} {'re %':>6}"
    )
    for r in rows:
        print(
            f"{r['format']:8} {r['MB']:8.0f} {r['bare_MBps']:10.0f} {r['bare_file_MBps']:11.0f} "
            f"{r['ingest_MBps']:15.0f} {r['ratio']:6.2f} {r['ratio_file']:8.2f} "
            f"{r['peak_rss_MiB']:13.0f} {r['reingest_s']:9.2f}s {r['reingest_pct']:5.1f}%"
        )
        if "baseline_s" in r:
            print(
                f"{'  baseline':10} {'':8} {'':10} {'':11} {r['baseline_MBps']:15.0f} {'':6} "
                f"{r['baseline_ratio_file']:8.2f} {r['baseline_rss_MiB']:13.0f} {r['baseline_reingest_s']:9.2f}s "
                f"{r['baseline_reingest_pct']:5.1f}%   (this checkout {r['speedup']:.2f}x faster; baseline CPU "
                f"{r['baseline_cpu_ratio_file']:.2f}x the bare read's)"
            )
    for r in rows:  # issue 21's targets, each with its figure
        print(
            f"target {r['format']}: first ingest <= 2x the bare read into a file: {r['ratio_file']:.2f}x wall "
            f"({r['cpu_ratio_file']:.2f}x in CPU seconds: {r['ingest_cpu_s']:.1f} s vs {r['bare_file_cpu_s']:.1f} s) "
            f"{met(r['ratio_file'] <= 2)}"
        )
        print(
            f"target {r['format']}: peak RSS < 2048 MiB: {r['peak_rss_MiB']:,.0f} MiB {met(r['peak_rss_MiB'] < 2048)}"
        )
        print(
            f"target {r['format']}: no-change re-ingest (whole process, start-up included) < 5% of the first: "
            f"{r['reingest_pct']:.1f}% {met(r['reingest_pct'] < 5)}"
        )
    print(f"python start-up (python -c pass): {min(r['startup_s'] for r in rows):.3f} s; load: {os.getloadavg()}")
    print(json.dumps(rows, indent=1))
    if not args.keep and args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


if __name__ == "__main__":
    main()
