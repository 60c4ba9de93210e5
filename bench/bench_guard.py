"""Whole-process latency of one guard hook call, beside `python -c pass`, on a small and a 500 MB transcript.

    python bench/bench_guard.py [--runs 21] [--big-mb 500] [--dir DIR]

Each run starts a fresh process with the hook JSON on stdin, exactly as Claude Code does; the contenders run
interleaved (this machine's speed drifts), and the median of each is printed with its ratio to
`python -c pass` measured in the same run. Target: median <= 150 ms per hook call, and the 500 MB transcript
no slower than the small one (the guard reads only the tail).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from installed import ENV  # (bench/installed.py: children run as installed)

TARGET_MS = 150.0


def _rec(n: int, typ: str, message: dict, **extra) -> str:
    r = {
        "type": typ,
        "uuid": f"u{n}",
        "sessionId": "bench",
        "isSidechain": False,
        "timestamp": f"2026-03-01T10:{n // 3600 % 60:02d}:{n % 60:02d}.000Z",
        "message": message,
        **extra,
    }
    return json.dumps(r) + "\n"


def _final_turn(n0: int) -> str:
    """A turn that ends on a narration after a tool round (the guard's usual block case)."""
    out = _rec(n0, "user", {"role": "user", "content": "fix the failing test"})
    out += _rec(
        n0 + 1,
        "assistant",
        {
            "id": f"m{n0}",
            "role": "assistant",
            "model": "claude-opus-4-6",
            "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}}],
        },
    )
    out += _rec(
        n0 + 2,
        "user",
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1 failed"}]},
    )
    out += _rec(
        n0 + 3,
        "assistant",
        {
            "id": f"m{n0 + 3}",
            "role": "assistant",
            "model": "claude-opus-4-6",
            "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "Found it. Now I'll fix the import and re-run the tests."}],
        },
    )
    return out


def make_transcripts(d: Path, big_mb: int) -> tuple[Path, Path]:
    small = d / "small.jsonl"
    body = "".join(
        _rec(i, "user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"x{i}", "content": "ok"}]})
        for i in range(40)
    )
    small.write_text(body + _final_turn(100), encoding="utf-8")
    big = d / "big.jsonl"
    filler = "y" * (256 * 1024)
    line = _rec(
        0, "user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": filler}]}
    )
    with open(big, "w", encoding="utf-8") as fh:
        written, i = 0, 0
        while written < big_mb * 1024 * 1024:
            fh.write(line.replace('"u0"', f'"b{i}"'))
            written += len(line)
            i += 1
        fh.write(_final_turn(10_000_000))
    return small, big


def _payload(path: Path) -> str:
    return json.dumps(
        {
            "session_id": "bench",
            "transcript_path": str(path),
            "cwd": str(path.parent),
            "permission_mode": "default",
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "last_assistant_message": "Found it. Now I'll fix the import and re-run the tests.",
        }
    )


def _time(cmd: list[str], stdin: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=ENV)
    return (time.perf_counter() - t0) * 1000, p.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--big-mb", type=int, default=500)
    ap.add_argument("--dir", default=None, help="where to write the transcripts (default: a temp dir)")
    args = ap.parse_args()
    d = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench_guard_"))
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    small, big = make_transcripts(d, args.big_mb)
    print(
        f"transcripts: small {small.stat().st_size / 1e3:.1f} kB, big {big.stat().st_size / 1e6:.0f} MB "
        f"(written in {time.perf_counter() - t0:.1f} s) in {d}"
    )
    logs = {k: d / f"guard-{k}.jsonl" for k in ("small", "big", "script")}
    py = sys.executable
    script = shutil.which("stallscan", path=str(Path(py).parent)) or shutil.which("stallscan")
    contenders = {
        "python -c pass": ([py, "-c", "pass"], ""),
        "python -m stallscan.guard (small)": (
            [py, "-m", "stallscan.guard", "--mode", "enforce", "--log", str(logs["small"])],
            _payload(small),
        ),
        f"python -m stallscan.guard ({args.big_mb} MB)": (
            [py, "-m", "stallscan.guard", "--mode", "enforce", "--log", str(logs["big"])],
            _payload(big),
        ),
    }
    if script:
        contenders["stallscan guard (small)"] = (
            [script, "guard", "--mode", "enforce", "--log", str(logs["script"])],
            _payload(small),
        )
        contenders["stallscan --version (typer CLI, for scale)"] = ([script, "--version"], "")
    times: dict[str, list[float]] = {k: [] for k in contenders}
    for name, (cmd, stdin) in contenders.items():  # warm the page cache / pyc files once
        _, out = _time(cmd, stdin)
        if "guard" in name and "block" not in out:
            raise SystemExit(f"{name}: expected a block decision, got {out!r}")
    for _ in range(args.runs):
        for name, (cmd, stdin) in contenders.items():
            times[name].append(_time(cmd, stdin)[0])
    base = statistics.median(times["python -c pass"])
    print(f"{'contender':48s} {'median ms':>10s} {'x python -c pass':>17s} {'min ms':>8s}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:48s} {med:10.1f} {med / base:17.2f} {min(ts):8.1f}")
    for k, lp in logs.items():
        if lp.exists():
            lat = [json.loads(ln)["latency_ms"] for ln in lp.read_text().splitlines()]
            print(f"in-process latency_ms logged by the guard ({k}): median {statistics.median(lat):.1f}")
    worst = max(statistics.median(ts) for n, ts in times.items() if "stallscan.guard" in n or "stallscan guard" in n)
    print(
        f"target: median <= {TARGET_MS:.0f} ms per hook call: {'met' if worst <= TARGET_MS else 'NOT met'} "
        f"(worst guard median {worst:.1f} ms)"
    )
    if not args.dir:
        shutil.rmtree(d)
    else:
        os.remove(big)


if __name__ == "__main__":
    main()
