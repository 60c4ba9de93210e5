"""Checks shared by several test modules: the SQL replay against the plain-Python references, table
fingerprints, and the real files written in random appends (import them from here, not from a test module)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from stallscan.ingest.run import ingest_paths
from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.boundaries_ref import replay_session
from stallscan.replay.boundary_variants import VARIANTS, rule_entries
from stallscan.replay.boundary_variants_ref import variants_session
from stallscan.replay.labels import label_events
from stallscan.replay.stalls import replay_stalls
from tests.helpers import real_root

# turn_boundaries columns compared with boundaries_ref
BOUNDARY_COLUMNS = (
    "gap_s",
    "prev_reply_status",
    "decided_by",
    "decision",
    "origin",
    "is_human_turn",
    "error",
    "gap_only_decision",
    "gap_only_error",
    "header_only_decision",
    "header_only_error",
)
# turn_boundary_variants columns compared with boundary_variants_ref
VARIANT_COLUMNS = ("marker_seen", "marker_id", "known_automatic") + tuple(
    f"{p}_{c}" for p in VARIANTS.values() for c in ("decided_by", "decision", "error")
)


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def reference_mismatches(con: duckdb.DuckDBPyConnection, threshold: float) -> list[str]:
    """Run the reference over every session of `events` and list where it differs from turn_boundaries."""
    events = rows(
        con,
        "SELECT event_id, session_id, seq, role, ts, ts_end, ts_quality, text, finish_norm, "
        "n_tool_calls, model, initiator FROM events ORDER BY session_id, seq",
    )
    labels = {r["event_id"]: r for r in rows(con, "SELECT * FROM user_labels")}
    sql_rows = {r["event_id"]: r for r in rows(con, "SELECT * FROM turn_boundaries")}
    by_session: dict[str, list] = {}
    for e in events:
        by_session.setdefault(e["session_id"], []).append(e)
    problems, seen = [], set()
    for sid, evs in by_session.items():
        for ref in replay_session(evs, labels, threshold):
            seen.add(ref["event_id"])
            got = sql_rows.get(ref["event_id"])
            if got is None:
                problems.append(f"{sid} seq {ref['seq']}: missing from turn_boundaries")
                continue
            for k in BOUNDARY_COLUMNS:
                a, b = got[k], ref[k]
                same = (a is None and b is None) or (
                    a is not None and b is not None and (abs(a - b) < 1e-9 if isinstance(b, float) else a == b)
                )
                if not same:
                    problems.append(f"{sid} seq {ref['seq']}: {k} sql={a!r} ref={b!r}")
    extra = set(sql_rows) - seen
    if extra:
        problems.append(f"{len(extra)} turn_boundaries rows the reference did not produce")
    return problems


def variant_mismatches(con: duckdb.DuckDBPyConnection, threshold: float) -> list[str]:
    """Run both references over every session of `events`; list where they differ from turn_boundary_variants."""
    events = rows(
        con,
        "SELECT event_id, session_id, seq, role, kind, source_format, ts, ts_end, ts_quality, text, finish_norm, "
        "n_tool_calls, model, initiator FROM events ORDER BY session_id, seq",
    )
    labels = {r["event_id"]: r for r in rows(con, "SELECT * FROM user_labels")}
    got = {r["event_id"]: r for r in rows(con, "SELECT * FROM turn_boundary_variants")}
    rules = list(rule_entries())
    by_session: dict[str, list] = {}
    for e in events:
        by_session.setdefault(e["session_id"], []).append(e)
    problems, seen = [], set()
    for sid, evs in by_session.items():
        router = replay_session(evs, labels, threshold)
        for ref in variants_session(evs, labels, router, rules):
            seen.add(ref["event_id"])
            row = got.get(ref["event_id"])
            if row is None:
                problems.append(f"{sid} seq {ref['seq']}: missing from turn_boundary_variants")
                continue
            problems += [
                f"{sid} seq {ref['seq']}: {k} sql={row[k]!r} ref={ref[k]!r}"
                for k in VARIANT_COLUMNS
                if row[k] != ref[k]
            ]
    if set(got) - seen:
        problems.append(f"{len(set(got) - seen)} turn_boundary_variants rows the reference did not produce")
    return problems


def fingerprint(con: duckdb.DuckDBPyConnection, table: str) -> tuple[int, int]:
    """Order-independent content of a table: row count and the sum of the rows' hashes."""
    n, h = con.execute(f"SELECT count(*), coalesce(sum(hash(t::VARCHAR)::HUGEINT), 0) FROM {table} t").fetchone()
    return n, int(h)


def replay_all(con: duckdb.DuckDBPyConnection, threshold: float = 2.0, retry_bound: int = 3) -> None:
    label_events(con, config={})
    replay_boundaries(con, threshold)
    replay_stalls(con, retry_bound=retry_bound)


SMALL_FILE = 1_000_000  # bytes: real_append_files' cut


def real_line_files() -> list[Path]:
    root = real_root()
    files = sorted((root / "claude-code").rglob("*.jsonl")) + sorted((root / "codex").rglob("*.jsonl"))
    return [f for f in files if f.stat().st_size > 0]


def real_append_files(everything: bool) -> list[Path]:
    """The real files the random-append checks grow: all of them, or (the default run's share) those under
    1 MB, still both harnesses and most of their projects, about a seventh of the bytes."""
    return [f for f in real_line_files() if everything or f.stat().st_size < SMALL_FILE]


def shrink_corpus(tmp_path: Path, files: list[Path], con: duckdb.DuckDBPyConnection) -> Path:
    """The three largest real files copied to tmp_path/c, ingested and replayed into `con`; then the first
    one cut to its first third and ingested again (its events fewer: a delete), the replay left to the caller.
    Returns the corpus folder."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    big = sorted(files, key=lambda f: f.stat().st_size)[-3:]
    for i, f in enumerate(big):
        (corpus / f"f{i}.jsonl").write_bytes(f.read_bytes())
    ingest_paths(con, [str(corpus)])
    replay_all(con)
    lines = big[0].read_bytes().splitlines(keepends=True)
    (corpus / "f0.jsonl").write_bytes(b"".join(lines[: len(lines) // 3]))
    ingest_paths(con, [str(corpus)])
    return corpus


def split_plan(files: list[Path], rng: random.Random, steps: int) -> tuple[list[dict[Path, int]], dict]:
    """For each step, how many lines of each file exist by then (files appear and grow at random)."""
    lines = {f: f.read_bytes().splitlines(keepends=True) for f in files}
    cuts = {}
    for f, ls in lines.items():  # each file grows at about a third of the steps (and is whole at the end)
        grow = sorted(rng.sample(range(steps - 1), k=rng.choice([0, 0, 1])))
        pts, n = [], 0
        for i in range(steps - 1):
            if i in grow:
                n = rng.randint(n, len(ls))
            pts.append(n)
        cuts[f] = pts + [len(ls)]
    return [{f: cuts[f][i] for f in files} for i in range(steps)], lines


def grow(
    con: duckdb.DuckDBPyConnection, files: list[Path], rng: random.Random, corpus: Path, steps: int = 4
) -> Iterator[int]:
    """Write the real files into `corpus` in `steps` random appends (split_plan); after each, ingest the
    corpus into `con` and replay everything; yields the step number (1-based)."""
    plan, lines = split_plan(files, rng, steps=steps)
    root = real_root()
    for i, step in enumerate(plan, 1):
        for f, n in step.items():
            dst = corpus / f.relative_to(root)
            dst.parent.mkdir(parents=True, exist_ok=True)
            if n:
                dst.write_bytes(b"".join(lines[f][:n]))
        ingest_paths(con, [str(corpus)])
        replay_all(con)
        yield i
