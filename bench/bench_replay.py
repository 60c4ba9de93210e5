#!/usr/bin/env python3
"""Replay + sweep benchmark on N generated events (default 10 million), all figures from one run.

    python bench/bench_replay.py --events 10M

Builds an `events` table directly in DuckDB (sessions of human prompts, tool rounds, tool results,
automatic nudges and stop-hook prompts at sub-second gaps, dropped tool calls, finals) in a database
file (--db, default a temporary file: as a user's database is; --db :memory: for an in-memory one),
then times:
the labels, then the turn boundaries and the stall replay at once on two connections as `report` runs them
on a first replay (stallscan.replay.together; one after the other on one CPU or with a checkout from before
it), with a 1,000-threshold sweep with 1,000 session-bootstrap resamples on the turn-boundary replay's
connection as soon as that replay ends, beside the stall replay, as `report` runs its threshold section's sweep
(stallscan.report.build._beside; --sweep-after: after both replays, the way before), then the same sweep
alone and at a single threshold (the ratio's two figures). Prints events/s and the sweep's cost ratio
1,000 thresholds : 1 threshold (target: about 1.5x or less).

The 1,000 x 1,000 sweep bins the rows itself (its grid is not the report's, so it does not read
`sweep_bins`); beside it, the report's own sweep (601 thresholds, 1,000 resamples, all policies, deriving
`sweep_bins` first as a first report does; the tool results it leaves out are counted from turn_boundaries
here, where the report counts them from its boundaries section's cells, which this script does not build), and
the report's path: labels + replays + that sweep. The grid is written out, not imported from the report's
section, because a --baseline checkout runs this script with its own code.
The generated database holds the events change counter, as an ingested one does (`report` reuses stamps
only then).
"""

from __future__ import annotations

import argparse
import inspect
import os
import resource
import subprocess
import sys
import tempfile
import time

import installed  # (bench/installed.py: first, before numpy and duckdb load; children run as installed)
import numpy as np

from stallscan.store.db import connect


def parse_n(s: str) -> int:
    s = s.strip().upper()
    mult = {"K": 10**3, "M": 10**6, "G": 10**9}.get(s[-1], 1)
    return int(float(s[:-1] if s[-1] in "KMG" else s) * mult)


GEN = """
CREATE OR REPLACE TABLE events AS
WITH s AS (SELECT i AS k, 'sess' || (i // $per) AS session_id, (i % $per) AS pos, hash(i) AS h FROM range($n) t(i))
SELECT md5(k::VARCHAR) AS event_id, 'openai_chat' AS source_format, '/bench/' || session_id AS file,
       pos + 1 AS line, pos + 1 AS last_line, 0 AS part, 1 AS n_records, session_id, pos + 1 AS seq,
       TIMESTAMPTZ '2026-01-01' + to_microseconds((k * 7 + (h % 5000000))::BIGINT) AS ts,
       TIMESTAMPTZ '2026-01-01' + to_microseconds((k * 7 + (h % 5000000))::BIGINT) AS ts_end,
       'per_message' AS ts_quality, role, kind, text,
       CASE WHEN role = 'assistant' AND kind2 = 'tool' THEN [{'id': 'c' || k, 'name': 'read', 'arguments': '{}'}]
            ELSE []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] END AS tool_calls,
       CASE WHEN role = 'assistant' AND kind2 = 'tool' THEN 1 ELSE 0 END AS n_tool_calls,
       CASE WHEN role = 'tool' THEN 'c' || (k - 1) END AS tool_call_id,
       finish AS finish_reason, finish AS finish_norm, NULL AS initiator, NULL AS message_id, NULL AS record_id,
       NULL AS parent_id, NULL AS turn_id, CASE WHEN role = 'assistant' THEN 'model-' || (h % 3) END AS model,
       false AS is_sidechain, NULL::BIGINT AS tokens_in, NULL::BIGINT AS tokens_out, '{}'::JSON AS meta
FROM (SELECT *,
             CASE WHEN pos % 10 = 0 THEN 'user' WHEN pos % 10 IN (2, 4, 6) THEN 'tool'
                  WHEN pos % 10 = 8 AND h % 4 = 0 THEN 'user' ELSE 'assistant' END AS role,
             CASE WHEN pos % 10 IN (1, 3, 5) THEN 'tool' ELSE 'text' END AS kind2,
             CASE WHEN pos % 10 IN (2, 4, 6) THEN 'tool_result' ELSE 'message' END AS kind,
             CASE WHEN pos % 10 = 0 THEN 'Please fix the failing test in module ' || (h % 100)
                  WHEN pos % 10 = 8 AND h % 4 = 0 THEN 'Please continue.'
                  WHEN pos % 10 IN (1, 3, 5) AND h % 50 = 0 THEN 'I will read the file now.'
                  WHEN pos % 10 IN (1, 3, 5) THEN 'Reading.'
                  WHEN pos % 10 IN (2, 4, 6) THEN 'file contents'
                  ELSE 'Done: the test passes now.' END AS text,
             CASE WHEN pos % 10 IN (1, 3, 5) THEN 'tool_calls' WHEN pos % 10 IN (7, 9) THEN 'stop' END AS finish
      FROM s) x
"""


# --layout ingest: the rows in the order an ingest writes them (bench/layout_stats.py measures it; figures in
# docs/benchmarks.md, layout18). An ingest's batch (64 MB of files) goes through its reader's SQL, whose branches
# append their rows one after the other: Claude Code's user lines (prompts and tool results), queued input, system
# lines, then the assistant replies (merged per API message by an aggregate), in two runs a session. So a
# session's rows lie in a few runs spread over its batch, each run with seq rising, and seq steps back between
# runs. Here: batches of --batch-events events' sessions, in each the user and tool rows first, then the assistant
# rows in two halves (by a hash of the event), the sessions in a hashed order within each part.
INGEST_ORDER = """
ORDER BY CAST(substr(session_id, 5) AS BIGINT) // $sessions_per_batch,
         CASE WHEN role = 'assistant' THEN 1 + hash(event_id) % 2 ELSE 0 END, hash(session_id), seq
"""
LAYOUTS = ("walk", "ingest")


# --grow K: K sessions, spread evenly over the sessions, each gain one event at the table's end (a copy of its last
# event, one later, with an id of its own), as a grown transcript's new line lands after every row already stored:
# such a session comes back after its walk (stallscan.replay.scan_batches.Interleaved).
GROW = """
INSERT INTO events BY NAME
SELECT * REPLACE (md5('grown-' || session_id) AS event_id, line + 1 AS line, last_line + 1 AS last_line,
                  seq + 1 AS seq, ts_end + INTERVAL 1 SECOND AS ts, ts_end + INTERVAL 1 SECOND AS ts_end)
FROM events
WHERE session_id IN (SELECT 'sess' || (i * $sessions // $grow) FROM range($grow) t(i))
QUALIFY seq = max(seq) OVER (PARTITION BY session_id)
ORDER BY session_id
"""


def generate(
    db: str, n: int, per_session: int, layout: str = "walk", batch_events: int = 12_000, grow: int = 0
) -> None:
    """N generated events into the database file `db` (the schema's own table and column types), laid out in
    walk order (each session one run, seq rising) or as an ingest lays them out (INGEST_ORDER): the same rows;
    then `grow` sessions one event longer at the table's end (GROW)."""
    con = connect(db)
    gen = GEN.replace("$per", str(per_session)).replace("$n", str(n))
    con.execute(gen.replace("CREATE OR REPLACE TABLE events AS", "CREATE OR REPLACE TEMP TABLE events_gen AS"))
    con.execute("DELETE FROM events")
    order = ""
    if layout == "ingest":  # (preserve_insertion_order, DuckDB's default, keeps the ORDER BY's order on disk)
        order = INGEST_ORDER.replace("$sessions_per_batch", str(max(1, batch_events // per_session)))
    con.execute("INSERT INTO events BY NAME SELECT * FROM events_gen" + order)
    con.execute("DROP TABLE events_gen")
    if grow:
        sessions = -(-n // per_session)
        con.execute(GROW.replace("$sessions", str(sessions)).replace("$grow", str(min(grow, sessions))))
    from stallscan.store import stamps

    stamps.record_changes(con, "SELECT session_id FROM events")  # as an ingest does: the events change counter
    con.execute("CHECKPOINT")
    con.close()


def timed(label: str, fn, n_events: int) -> float:
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    print(f"{label:42} {dt:8.2f} s  {n_events / dt / 1e6:8.2f} M events/s")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="10M")
    ap.add_argument("--per-session", type=int, default=60)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--thresholds", type=int, default=1000)
    ap.add_argument("--db", help="database file to build (default: a temporary file; ':memory:' for none)")
    ap.add_argument("--memory-limit", help="DuckDB memory_limit for the run (default: stallscan's, from the machine)")
    ap.add_argument(
        "--baseline",
        help="an older checkout: time it too, through this script, on a copy of the same events (side by side)",
    )
    ap.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="walk",
        help="the rows' storage order: walk (each session one run) or ingest (as an ingest writes them)",
    )
    ap.add_argument("--batch-events", type=int, default=12_000, help="--layout ingest: events per ingest batch")
    ap.add_argument(
        "--grow",
        type=int,
        default=0,
        help="K sessions one event longer at the table's end, as a grown transcript's new lines land (default 0)",
    )
    ap.add_argument(
        "--sweep-after",
        dest="sweep_beside",
        action="store_false",
        help="time the sweep after both replays, not on the turn-boundary replay's cursor beside the stall replay "
        "(the report's way since stall22)",
    )
    ap.add_argument("--reuse-db", action="store_true", help=argparse.SUPPRESS)  # (baseline child) --db is built
    ap.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    n = parse_n(args.events)
    if args.generate_only:  # (child process) build the events and exit: the parent's peak RSS is the replay's
        generate(args.db, n, args.per_session, args.layout, args.batch_events, args.grow)
        return
    tmp = None
    if args.db is None:
        tmp = tempfile.TemporaryDirectory(prefix="stallscan-bench-replay-")
        args.db = os.path.join(tmp.name, "bench.duckdb")
    t0 = time.perf_counter()
    if not args.reuse_db:
        subprocess.run(
            [sys.executable, __file__, "--generate-only", "--db", args.db, "--events", str(n), "--per-session",
             str(args.per_session), "--layout", args.layout, "--batch-events", str(args.batch_events),
             "--grow", str(args.grow)],
            check=True,
        )  # fmt: skip
        print(f"generated {n:,} events in {time.perf_counter() - t0:.1f} s into {args.db} (a separate process)")
    base = None
    # (the dirty pages of a database just copied or generated are written back first: a run that starts while
    # the kernel writes a 1 GB copy out reads and writes beside it; the baseline, which ran first, paid for it)
    os.sync()
    if args.baseline:
        base = run_baseline(args, n)
    t_open = time.perf_counter()
    con = connect(args.db)
    if args.memory_limit:
        con.execute(f"SET memory_limit = '{args.memory_limit}'")
    t_open = time.perf_counter() - t_open
    from stallscan.store import stamps

    if stamps.events_version(con) is None:  # (a --db generated before generate() recorded it)
        stamps.record_changes(con, "SELECT session_id FROM events")  # as an ingest does: the change counter

    from stallscan.replay.boundaries import replay_boundaries
    from stallscan.replay.labels import label_events
    from stallscan.replay.stalls import replay_stalls
    from stallscan.sweep.core import run_sweep, thresholds_grid

    tl = timed("labels (user_labels)", lambda: label_events(con), n)
    try:  # the report's way: both replays at once on two connections (a --baseline checkout may predate it)
        from stallscan.replay.together import replay_together
    except ImportError:
        replay_together = None
    grid = np.linspace(0, 30, args.thresholds)
    beside: dict[str, float] = {}

    def after():  # the report's way (stallscan.report.build._beside): the sweep on the turn-boundary replay's
        # cursor as soon as that replay ends, beside the stall replay's tail
        def sweep(c) -> None:
            beside["boundaries"] = time.perf_counter() - t0
            run_sweep(c, grid, bootstrap=args.bootstrap, policies=("router",))
            beside["sweep"] = time.perf_counter() - t0 - beside["boundaries"]

        return {"boundaries": sweep} if args.sweep_beside else None

    t0 = time.perf_counter()
    secs = replay_together(con, 2.0, 3, after=after) if replay_together else None
    if secs is not None:
        both = time.perf_counter() - t0
        tb, ts = beside.get("boundaries", secs["boundaries"]), secs["stalls"]
        what = " + the sweep beside" if beside else ""
        print(f"{'turn boundaries + stall replay, at once' + what:44} {both:7.2f} s {n / both / 1e6:8.2f} M events/s")
        print(f"{'  turn boundaries at 2.0 s (with variants)':44} {tb:7.2f} s (its own wall, beside the other)")
        print(f"{'  stall replay (rounds, stalls, turns)':44} {ts:7.2f} s (its own wall, beside the other)")
        if beside:
            print(
                f"{f'  sweep {args.thresholds} x {args.bootstrap}, after the turn boundaries':44} {beside['sweep']:7.2f} s"
                " (its own wall, beside the stall replay)"
            )
    else:
        tb = timed("turn boundaries at 2.0 s (with rule variants)", lambda: replay_boundaries(con, 2.0), n)
        ts = timed("stall replay (rounds, stalls, turns)", lambda: replay_stalls(con), n)
        both = tb + ts
    from stallscan.sweep.core import ALL_POLICIES

    report_grid = thresholds_grid(0.0, 30.0, 0.05)  # the report's (stallscan.report.sections.threshold)
    rs = timed(
        f"report's sweep {len(report_grid)} x {args.bootstrap}, all policies",
        lambda: run_sweep(con, report_grid, bootstrap=args.bootstrap, policies=ALL_POLICIES, current=2.0),
        n,
    )
    from stallscan.replay.boundary_variants import replay_variants

    # (the replay's own call reads the stored table; a baseline checkout from before one22 has no such argument)
    own = {"stored": True} if "stored" in inspect.signature(replay_variants).parameters else {}
    tv = timed("  of which the rule variants (again)", lambda: replay_variants(con, **own), n)
    print(f"  rule variants / whole boundary replay: {tv / tb:.2f}x (no session holds a marker)")

    def every_session_marked():  # a marker on every human prompt (as Codex task_started is)
        from stallscan.store import sql

        con.execute("INSERT INTO router_variant_rules VALUES ('marker', 'bench', 'rule', 'default_human', NULL)")
        if (sql.queries_dir() / "replay" / "turn_boundaries_variants_prev.sql").exists():  # (since one22)
            sql.run(con, "replay/turn_boundaries_variants_prev")  # (the marks' input, dropped after each run)
        sql.run(con, "replay/turn_boundaries_variants")

    tw = timed("  rule variants, a marker on every prompt", every_session_marked, n)
    print(f"  rule variants (marker on every prompt) / whole boundary replay: {tw / tb:.2f}x")
    replay_variants(con)
    con.execute("CREATE OR REPLACE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events")
    many = timed(
        f"sweep {args.thresholds} thresholds x {args.bootstrap} resamples",
        lambda: run_sweep(con, grid, bootstrap=args.bootstrap, policies=("router",)),
        n,
    )
    one = timed(
        f"sweep 1 threshold x {args.bootstrap} resamples",
        lambda: run_sweep(con, np.array([2.0]), bootstrap=args.bootstrap, policies=("router",)),
        n,
    )
    ratio = many / one
    # the report's path: labels, the replays, the report's sweep; since stall22 the report runs its sweep after the
    # turn-boundary replay, beside the stall replay (stallscan.report.build._beside): here estimated from the
    # walls timed apart when this run's sweep ran beside too
    path = tl + (max(ts, tb + rs) if "sweep" in beside else both + rs)
    print(f"ratio {args.thresholds} thresholds / 1 threshold: {ratio:.2f}x (target <= 1.5x: {met(ratio <= 1.5)})")
    # (the sweep beside the stall replay is inside `both`; the one timed alone above is the ratio's)
    total = tl + both + (0.0 if "sweep" in beside else many)
    whole = startup() + t_open + total
    how = " (the sweep beside the stall replay)" if "sweep" in beside else ""
    print(f"labels + boundaries + stalls + {args.thresholds}-threshold sweep: {total:.2f} s in-process{how}")
    print(f"labels + boundaries + stalls + the report's sweep (the report's path): {path:.2f} s in-process")
    print(
        f"  + python start-up with the replay's imports and the database open: {whole:.2f} s whole-process"
        f" (issue 21 target <= 10 s: {met(whole <= 10)}; stretch 5 s)"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS so far {peak:,.0f} MiB (issue 21 target <= 2,048 MiB with default settings: {met(peak <= 2048)})")
    print(
        f"FIGURES labels={tl:.2f} boundaries={tb:.2f} stalls={ts:.2f} replays={both:.2f} "
        f"sweep={beside.get('sweep', many):.2f} sweep_alone={many:.2f} "
        f"report_sweep={rs:.2f} report_path={path:.2f} whole={whole:.2f} rss={peak:.0f}"
    )
    if base:
        new = {
            "labels": tl,
            "boundaries": tb,
            "stalls": ts,
            "replays": both,
            "sweep": beside.get("sweep", many),
            "report_sweep": rs,
            "report_path": path,
            "whole": whole,
            "rss": peak,
        }
        side_by_side(base, new)
    timed(
        "repeat, nothing changed (stamps reused)",
        lambda: (label_events(con), replay_boundaries(con, 2.0), replay_stalls(con)),
        n,
    )
    from stallscan.replay.boundary_variants import VARIANTS

    allp = timed(
        f"sweep {args.thresholds} thresholds, router + {len(VARIANTS)} variants",
        lambda: run_sweep(con, grid, bootstrap=args.bootstrap, policies=("router", *VARIANTS)),
        n,
    )
    print(f"ratio router + {len(VARIANTS)} variants / router alone: {allp / many:.2f}x (four sweeps + the comparison)")


def run_baseline(args: argparse.Namespace, n: int) -> dict[str, float] | None:
    """Time the --baseline checkout through this script (its own code and queries: PYTHONPATH and cwd) on a
    copy of the generated database, before this code runs; returns its FIGURES line."""
    import shutil

    copy = args.db + ".baseline.duckdb"
    shutil.copyfile(args.db, copy)
    os.sync()  # (the copy written back before its run, as the caller's database was: main)
    cmd = [sys.executable, os.path.abspath(__file__), "--db", copy, "--reuse-db", "--events", str(n),
           "--bootstrap", str(args.bootstrap), "--thresholds", str(args.thresholds)]  # fmt: skip
    if args.memory_limit:
        cmd += ["--memory-limit", args.memory_limit]
    env = {**installed.ENV, "PYTHONPATH": os.path.abspath(args.baseline)}
    print(f"-- baseline {args.baseline} (same script, same events) --", flush=True)
    out = subprocess.run(cmd, cwd=args.baseline, env=env, capture_output=True, text=True)
    for f in (copy, copy + ".wal"):
        if os.path.exists(f):
            os.remove(f)
    sys.stdout.write("".join("  | " + line + "\n" for line in out.stdout.splitlines()))
    if out.returncode:
        sys.stdout.write(out.stderr[-2000:])
        return None
    for line in out.stdout.splitlines():
        if line.startswith("FIGURES "):
            return {k: float(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
    return None


def side_by_side(old: dict[str, float], new: dict[str, float]) -> None:
    print("-- issue 21 replay targets, baseline and this code in the same run --")
    print(f"{'figure':28} {'baseline':>10} {'now':>10}  target")
    old.setdefault("replays", old["boundaries"] + old["stalls"])  # (a baseline from before: one after the other)
    for key, label in (("labels", "labels"), ("boundaries", "boundaries"), ("stalls", "stalls"),
                       ("replays", "boundaries + stalls (wall)"), ("sweep", "sweep"),
                       ("report_sweep", "report's sweep"), ("report_path", "labels+replays+report's sweep")):  # fmt: skip
        if key in old:  # (an older script's FIGURES lack the report's sweep)
            print(f"{label:28} {old[key]:9.2f}s {new[key]:9.2f}s")
    w = new["whole"]
    print(f"{'whole process':28} {old['whole']:9.2f}s {w:9.2f}s  <= 10 s: {met(w <= 10)}")
    r = new["rss"]
    print(f"{'peak RSS (MiB)':28} {old['rss']:10,.0f} {r:10,.0f}  <= 2,048 MiB: {met(r <= 2048)}")


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def startup() -> float:
    """Python start-up with the replay's imports, whole-process (what a command pays before its work), as installed:
    byte-compiled modules written by a first, untimed run and reused (PYTHONDONTWRITEBYTECODE, which some shells
    set, removed: with a --no-compile venv every run would compile the modules again, as no installed one does)."""
    cmd = [sys.executable, "-c", "import stallscan.replay.stalls, stallscan.replay.boundaries, stallscan.sweep.core"]
    subprocess.run(cmd, check=True, env=installed.ENV)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=installed.ENV)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
