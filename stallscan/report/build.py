"""`stallscan report`: collect each section's data (plain dicts) and build renderables from it.

Sections register themselves in SECTIONS (stallscan.report.registry); each has `collect(con, opts) -> dict[str, Any]` (JSON-ready data,
stable keys) and `blocks(data, report, full)` (its neutral blocks, stallscan.report.blocks). Every section
reads `scoped_events`, a temp view of `events` narrowed by the shared filters (--since/--until/--harness/--model),
or the temp table `scope_sessions`; the built-in sections read per-session summary rows
(stallscan.report.summary_cells).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

import duckdb

from stallscan.report.registry import REPORT_VERSION, SECTIONS, ReportOptions, Section, register, sections
from stallscan.store import sql

if TYPE_CHECKING:
    from stallscan.report.lanes import Ready, Task

__all__ = [
    "REPORT_VERSION",
    "SECTIONS",
    "ReportOptions",
    "Section",
    "build_report",
    "public",
    "register",
    "render_report",
    "scope",
]


def scope(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> None:
    """(Re)create the temp table `scope_sessions` and view `scoped_events` for these filters (the sessions
    from their summary rows, stallscan.report.summary_cells, brought up to date first)."""
    from stallscan.report.summary_cells import refresh_sessions

    refresh_sessions(con)
    sql.run(
        con,
        "report/scoped_events",
        {
            "since": opts.since,
            "until": opts.until,
            "harness": opts.harness or None,
            "model": opts.model or None,
        },
    )
    if opts._replayed:  # given tables (report --from-parquet), read as they are: never the stored sums
        con.execute("SET VARIABLE scope_whole = false")


def build_report(
    con: duckdb.DuckDBPyConnection,
    opts: ReportOptions,
    progress: Callable[[str, int, int], object] | None = None,
    few: bool | None = None,
    ready: Ready | None = None,
) -> dict[str, Any]:
    """Every section's data, then the headline drawn from it (first key after the version).

    `progress(label, done, total)` is called before each step (the CLI draws it on stderr). few: what
    `few_changes(con, opts)` answered, when the caller asked it already (None: asked here when needed). ready:
    the lanes' second cursor made ahead (stallscan.report.lanes.Ready; the caller closes it), waited for before
    the scope here (it brought the session cells up to date)."""
    from stallscan.report.headline import headline
    from stallscan.report.timeline import session_refs, timeline_windows

    steps = sections()
    total = len(steps) + 1
    if ready is not None:
        ready.wait()
    scope(con, opts)
    out: dict[str, Any] = {"report_version": REPORT_VERSION, "headline": None, "options": _jsonable(asdict(opts))}
    early: dict[str, Any] = {}  # sections' data collected beside the replays (_beside) or the labels (ready)
    if ready is not None:
        early.update(ready.early)
    late: dict[str, Any] = {}  # the session refs and timelines, when the lanes' second one collected them (_tail)
    if not opts._replayed and {"boundaries", "stalls"} <= {s.name for s in steps}:
        from stallscan.replay.together import replay_together

        if progress:
            progress("Replaying", 0, total)
        big = _big(con)  # (once: the events do not change while the report builds)
        tail = lambda c, d: _tail(c, opts, d, late)
        after = lambda: _beside(con, opts, steps, early, big, tail)  # (asked only when both replays run)
        ran = replay_together(con, opts.threshold, opts.retry_bound, config=opts._config, after=after)
        if ran is None:  # (the replays have stamps: reused, or incremental after an ingest)
            _lanes(con, opts, steps, early, big, tail, few, ready)
        # a first report up to BESIDE_MAX_EVENTS events checkpoints beside its last reads (_checkpoint_beside); above,
        # its close does, as before (measured at 311 MB only; at 10M the pairs were 0.2-1.2 s slower with it)
        first = ran is not None and not big
    else:
        first = False
    for i, s in enumerate(steps):
        if progress:
            progress(s.title, i, total)
        out[s.name] = early[s.name] if s.name in early else s.collect(con, opts)
    if progress:
        progress("headline", len(steps), total)
    with _checkpoint_beside(con) if first else contextlib.nullcontext():
        listed = _listed(out)
        out["session_refs"] = late["session_refs"] if "session_refs" in late else session_refs(con, listed)
        out["headline"] = headline(out)
        if opts.timelines:
            out["timelines"] = late["timelines"] if "timelines" in late else timeline_windows(con, listed)
    if progress:
        progress("done", total, total)
    return out


CHECKPOINT = "CHECKPOINT"  # (_checkpoint_beside's statement: tests make it fail)


@contextlib.contextmanager
def _checkpoint_beside(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """A CHECKPOINT on a cursor of its own, in a thread, while the block reads (the listed sessions' refs and
    timelines, the headline: some 0.06 CPU s on one CPU after a first report's replays). The derives of a first
    report committed their tables to the WAL; the database's close wrote them into the file on the one CPU at
    the end of the command, after the memo's put (docs/benchmarks.md, "first23"). Joined before the block's
    caller goes on, so the memo's write is not beside it. A checkpoint refused because a write transaction is
    open (TransactionException: none should be, nothing in the block writes) is left to the close, as before;
    any other error is raised here, after the block."""
    import threading

    failed: list[BaseException] = []

    def work() -> None:
        try:
            with con.cursor() as cur:  # (made here: a CHECKPOINT needs none of a report cursor's set-up)
                cur.execute(CHECKPOINT)
        except duckdb.TransactionException:
            pass
        except BaseException as exc:  # re-raised in the caller's thread below
            failed.append(exc)

    # a result of con's not read to its end (a fetchone) keeps its statement's transaction open until con's next
    # statement, and the CHECKPOINT is refused beside it: run it to its end first (no statement of its own)
    con.complete()
    t = threading.Thread(target=work, name="stallscan-checkpoint")
    t.start()
    try:
        yield
    finally:
        t.join()
    if failed:
        raise failed[0]


def _listed(data: dict[str, Any]) -> list[str]:
    """The sessions the report lists (its silent endings, misread turns and examples), in that order, repeats kept."""
    listed = [r["session_id"] for r in (data.get("stalls") or {}).get("silent_endings", [])]
    listed += [r["session_id"] for r in (data.get("boundaries") or {}).get("misclassified", [])]
    listed += [r["session_id"] for r in (data.get("boundaries") or {}).get("examples", [])]
    return listed


def _tail(c: duckdb.DuckDBPyConnection, opts: ReportOptions, data: dict[str, Any], late: dict[str, Any]) -> None:
    """The listed sessions' refs and timelines (as build_report reads them after the sections) on whichever lane
    is free once the sections they are listed from (`data`: their data, or a section's first part's,
    stallscan.report.section.Parts) are in, beside the sections still running. They read the events and the
    replays' tables, which the threshold section and the stall section's rest do not write."""
    from stallscan.report.timeline import session_refs, timeline_windows

    listed = _listed(data)
    late["session_refs"] = session_refs(c, listed)
    if opts.timelines:
        late["timelines"] = timeline_windows(c, listed)


# a first report of at most this many events derives each replay's summaries, and the threshold section, on
# that replay's cursor beside the other replay (stallscan.replay.together: each on a CPU of its own); above it
# the threshold section alone (its sweep, sweep_bins, the boundary cells) runs so, right after the turn-boundary
# replay, which at 10M events ends about 2 s before the stall replay (docs/replay-scan.md, "stall22": the 10M
# report's peak RSS 1.73 -> 1.81 GB; pipeline15 had measured it over 2 GB when the replays' own peak was higher),
# and the stalls section after both replays (docs/benchmarks.md, "first16": the 311 MB tree's figures)
BESIDE_MAX_EVENTS = 1_000_000
# what runs on the lanes once the sections the report lists sessions from are in: (connection, their data)
Tail = Callable[[duckdb.DuckDBPyConnection, dict[str, Any]], None]


def _big(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the database holds more than BESIDE_MAX_EVENTS events (fetchall: no result left open)."""
    from stallscan.store import stamps

    return stamps.n_events(con) > BESIDE_MAX_EVENTS  # (in a report's block, the count its plans read)


def _beside(
    con: duckdb.DuckDBPyConnection,
    opts: ReportOptions,
    steps: list[Section],
    early: dict[str, Any],
    big: bool,
    tail: Tail | None = None,
) -> dict[str, Callable[[duckdb.DuckDBPyConnection], object]] | None:
    """What runs after each replay on its cursor (replay_together's `after`), the sections' data kept in `early`
    (the loop takes it as the section's). Up to BESIDE_MAX_EVENTS events: the two replays' cursors are the lanes
    of one work queue (stallscan.report.lanes, as _lanes after one new session: the turn boundary replay's lane
    holds the boundaries and threshold sections, the stall replay's the stall section's first part), and `tail`
    (the listed sessions' refs and timelines) runs there too once TAIL_NEEDS are in, on whichever lane is free;
    each lane makes the scope on its cursor first (the cursor has no temp tables). Above: the threshold section
    only (its sweep after the turn boundaries; the stall replay is the longer), the others after both replays.
    Each section brings its replay's summaries up to date first (stallscan.report.summary_cells) as it does on the
    caller's connection. big: _big(con), asked once by build_report."""
    from stallscan.report import lanes

    by_name = {s.name: s for s in steps}
    if big:  # (the threshold section only: the stall replay's tail outlasts the boundaries')

        def threshold(c: duckdb.DuckDBPyConnection) -> None:
            if "threshold" in by_name:
                scope(c, opts)
                early["threshold"] = by_name["threshold"].collect(c, opts)

        return {"boundaries": threshold}
    q = lanes.Queue(_laned_tasks(by_name, opts, early, tail))

    def lane(n: int) -> Callable[[duckdb.DuckDBPyConnection], object]:
        def run(c: duckdb.DuckDBPyConnection) -> None:
            try:
                scope(c, opts)
            except BaseException as exc:
                q.fail(exc)
                raise
            q.work(n, c)

        return run

    return {"boundaries": lane(lanes.HERE), "stalls": lane(lanes.BESIDE)}


def _laned_tasks(
    by_name: dict[str, Section], opts: ReportOptions, early: dict[str, Any], tail: Tail | None
) -> list[Task]:
    """The lanes' tasks (stallscan.report.lanes): the built-in sections' (their data kept in `early`), and
    `tail` on the TAIL_NEEDS sections' data (a section's first part's when it has parts) once they are in."""
    from stallscan.report import lanes

    firsts: dict[str, Any] = {}  # a section's first part's data (Section.parts), before its rest is joined
    laned = [s for n, s in by_name.items() if n in lanes.LANED and n not in early]  # (not those collected ahead)
    tasks = lanes.section_tasks(laned, opts, early, firsts)
    if tail is not None:

        def run(c: duckdb.DuckDBPyConnection) -> None:
            tail(c, {n: firsts[n] if n in firsts else early[n] for n in lanes.TAIL_NEEDS if n in by_name})

        tasks.append(lanes.Task("tail", run, lanes.TAIL_NEEDS))
    return tasks


def _lanes(
    con: duckdb.DuckDBPyConnection,
    opts: ReportOptions,
    steps: list[Section],
    early: dict[str, Any],
    big: bool,
    tail: Tail | None = None,
    few: bool | None = None,
    ready: Ready | None = None,
) -> None:
    """Collect the built-in sections in two lanes at once, kept in `early`, when the replays have stamps (the
    first report runs them in _beside): after one new session each lane's derives are incremental, and a report
    is about 390 short statements (bench/report_statements.py), each on one CPU. The second lane runs on a cursor
    of its own in a thread, with a scratch schema of its own for its incremental runs
    (stallscan.replay.derive.scratch_named); the change log is pruned once both are done
    (stallscan.store.stamps.pruned_after). Not on one CPU, and above BESIDE_MAX_EVENTS events only when the runs
    will be incremental over a few sessions (few_changes, or `few` when the caller asked it). Those runs are many
    short statements over a few sessions' rows, on two threads already (the lanes): DuckDB runs them on one worker
    thread (store.db.one_thread). `tail(c, data)` runs on whichever lane is free once the TAIL_NEEDS sections'
    data (or their first parts') are in (stallscan.report.lanes; not when a lane failed). big: _big(con), asked
    once by build_report."""
    from stallscan.store.db import one_thread, threads

    by_name = {s.name: s for s in steps}
    if threads() < 2 or not {"boundaries", "stalls"} <= by_name.keys():
        return
    few = few_changes(con, opts) if few is None else few
    if big and not few:
        return
    with one_thread(con, few):
        _two_lanes(con, opts, by_name, early, tail, ready)


def _two_lanes(
    con: duckdb.DuckDBPyConnection,
    opts: ReportOptions,
    by_name: dict[str, Section],
    early: dict[str, Any],
    tail: Tail | None,
    ready: Ready | None = None,
) -> None:
    """The sections, and `tail` once TAIL_NEEDS are in, on the lanes' work queue (stallscan.report.lanes); the
    change log pruned once both lanes are done."""
    from stallscan.report import lanes
    from stallscan.store import stamps

    with stamps.pruned_after(con):
        lanes.run_lanes(con, _laned_tasks(by_name, opts, early, tail), lambda c: _beside_cursor(c, opts, ready))


@contextlib.contextmanager
def _beside_cursor(
    con: duckdb.DuckDBPyConnection, opts: ReportOptions, ready: Ready | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The lanes' second connection: a cursor of con's, made on the lane's thread (its set-up, 5-7 CPU ms of
    macros, beside the caller's first task) or taken from `ready` (made and scoped beside the labels), with the
    report's scope and the second scratch schema for its incremental runs (stallscan.replay.derive.scratch_named);
    closed after."""
    from stallscan.replay.derive import scratch_named
    from stallscan.report.lanes import BESIDE_SCRATCH
    from stallscan.store import stamps
    from stallscan.store.db import cursor

    cur = cursor(con) if ready is None else ready.take()
    try:
        stamps.kept_for(cur, con)  # (the tables of main con's catalog look-ups found, in the report's block)
        with scratch_named(BESIDE_SCRATCH):
            if ready is None:
                scope(cur, opts)
            yield cur
    finally:
        cur.close()


def ready_lane(con: duckdb.DuckDBPyConnection, opts: ReportOptions, few: bool) -> Ready | None:
    """The lanes' second cursor started ahead (stallscan.report.lanes.Ready), when build_report will run the two
    lanes after replays with stamps over a few changed sessions (`few`: few_changes' answer), else None."""
    from stallscan.report.lanes import AHEAD, Ready
    from stallscan.store.db import threads

    if not few or opts._replayed or threads() < 2 or not {"boundaries", "stalls"} <= {s.name for s in sections()}:
        return None
    return Ready(con, opts, scope, [s for s in sections() if s.name in AHEAD])


# above BESIDE_MAX_EVENTS events, the lanes run only when the replays' runs will be incremental over at most
# this many changed sessions (what one run holds in memory is then those sessions' rows)
LANE_MAX_SESSIONS = 64


def few_changes(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> bool:
    """Whether the turn-boundary replay, the sweep's bins and the stall replay all have a stamp of the current
    rules, labels, threshold and retry bound (so their runs are incremental, or reused) and the change log holds
    at most LANE_MAX_SESSIONS sessions changed since the oldest of them. The stamps' inputs are those the replays
    record (stallscan.replay.boundaries, stalls, stallscan.sweep.bins): if one is renamed, this answers False and
    the sections run one after the other (slower, never other rows)."""
    from stallscan.store import stamps

    names = ("user_labels", "turn_boundaries", "sweep_bins", "stalls")
    st = stamps.get_many(con, names)
    if len(st) < len(names) or any(st[n]["inputs"].get("rules") != stamps.rules_hash() for n in names[1:]):
        return False
    labels, tb, bins, stalls = (st[n] for n in names)
    if (tb["inputs"].get("threshold"), tb["inputs"].get("labels"), bins["inputs"].get("boundaries")) != (
        float(opts.threshold),
        labels["key"],
        tb["key"],
    ):
        return False
    if (stalls["inputs"].get("retry_bound"), stalls["inputs"].get("labels")) != (int(opts.retry_bound), labels["key"]):
        return False
    n = stamps.sessions_changed(con, min(int(s["events_version"]) for s in st.values()))
    return n is not None and n <= LANE_MAX_SESSIONS


def public(data: dict[str, Any]) -> dict[str, Any]:
    """The report data without private (underscore) keys: what --format json prints."""
    if isinstance(data, dict):
        return {k: public(v) for k, v in data.items() if not str(k).startswith("_")}
    if isinstance(data, list):
        return [public(v) for v in data]
    return data


def render_report(data: dict[str, Any], full: bool = False, only: list[str] | None = None) -> list[Any]:
    """The terminal report: rich renderables of the report's blocks (stallscan.report.layout), the short
    form by default, every section in full (`full`), or only the named sections in full (`only`)."""
    from stallscan.report.layout import report_blocks
    from stallscan.report.terminal import to_terminal

    return to_terminal(report_blocks(data, full, only))


def _jsonable(d: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in d.items()}
