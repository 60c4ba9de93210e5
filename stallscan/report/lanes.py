"""The report's two lanes when its replays have stamps (stallscan.report.build._lanes): a small work queue over
the caller's connection and a cursor beside it, each task taken by whichever lane is free first once what it
needs is done. A task may be held to one lane: the turn boundaries' and the threshold sections on the caller's
(the sweep's incremental run names its scratch schema, stallscan_inc), the stall replay on the cursor (its
incremental runs in the cursor's scratch schema, stallscan.replay.derive.scratch_named). A section with
`parts` (stallscan.report.section.Parts) is two tasks: its first part on its lane, the rest on either, joined.
A failure in a task interrupts the other lane, which takes nothing more, and the first failure is raised once
both lanes have stopped."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import duckdb

from stallscan.report.section import ReportOptions, Section
from stallscan.store.db import SCRATCH_NAMES

HERE, BESIDE = 0, 1  # the caller's connection, the cursor
BESIDE_SCRATCH = SCRATCH_NAMES[1]  # the scratch schema of the cursor's incremental runs
# the sections held to a lane: those reading the turn-boundary replay's tables on the caller's connection, the
# stall replay on the cursor beside it (the others, and a held section's rest, on either)
LANED = ("boundaries", "threshold", "stalls", "corpus", "guard")  # (the built-in ones; others after the lanes)
HELD = {"boundaries": HERE, "threshold": HERE, "stalls": BESIDE}
AFTER = {"threshold": ("boundaries",)}  # (the sweep's bins are derived from the turn boundaries)
# the order each lane looks for a task it may take: its held sections first, then the timelines (the longest of
# what is left once a replay's section is in), then the stall section's rest, the cheap sections last
ORDER = (
    ("boundaries", "threshold", "stalls.rest", "tail", "corpus", "guard"),
    ("stalls", "tail", "stalls.rest", "corpus", "guard"),
)
# the sections the listed sessions come from (build._listed): the tail (their refs and timelines) waits for them
TAIL_NEEDS = ("boundaries", "stalls")


@dataclass(frozen=True)
class Task:
    name: str
    run: Callable[[duckdb.DuckDBPyConnection], None]
    needs: tuple[str, ...] = ()
    lane: int | None = None  # HERE / BESIDE: only there; None: either


def section_tasks(
    steps: Sequence[Section], opts: ReportOptions, early: dict[str, Any], firsts: dict[str, Any]
) -> list[Task]:
    """The sections' tasks: each section's data kept in `early` (a section with parts: its first part's data in
    `firsts` as soon as it is in, the joined data in `early` after its rest)."""
    tasks = []
    names = {s.name for s in steps}
    for s in steps:
        lane = HELD.get(s.name)
        needs = tuple(n for n in AFTER.get(s.name, ()) if n in names)
        if s.parts is None:
            tasks.append(Task(s.name, _keep(s.name, s.collect, opts, early), needs, lane))
            continue
        tasks.append(Task(s.name, _keep(s.name, s.parts.first, opts, firsts), needs, lane))
        tasks.append(Task(f"{s.name}.rest", _rest(s, opts, early, firsts), (s.name,)))
    return tasks


def _keep(
    name: str, collect: Callable[..., dict[str, Any]], opts: ReportOptions, into: dict[str, Any]
) -> Callable[[duckdb.DuckDBPyConnection], None]:
    def run(c: duckdb.DuckDBPyConnection) -> None:
        into[name] = collect(c, opts)

    return run


def _rest(
    s: Section, opts: ReportOptions, early: dict[str, Any], firsts: dict[str, Any]
) -> Callable[[duckdb.DuckDBPyConnection], None]:
    assert s.parts is not None

    def run(c: duckdb.DuckDBPyConnection) -> None:
        assert s.parts is not None
        early[s.name] = s.parts.join(firsts[s.name], s.parts.rest(c, opts))

    return run


def run_lanes(
    con: duckdb.DuckDBPyConnection,
    tasks: list[Task],
    beside: Callable[[duckdb.DuckDBPyConnection], AbstractContextManager[duckdb.DuckDBPyConnection]],
    order: Sequence[Sequence[str]] = ORDER,
) -> None:
    """Run `tasks` in two lanes: the caller's thread on `con`, a thread on the connection `beside(con)` gives
    (entered on that thread, so its set-up is beside the caller's first task; it closes the connection on exit).
    Each lane takes the first task in its `order` (the tasks it does not name after those it does) whose needs
    are done and whose lane is its own or either; it stops when no task left may ever be its, or once a task
    failed. Needs name tasks of the list (others are left out: never waited for)."""
    names = {t.name for t in tasks}
    pending = [Task(t.name, t.run, tuple(n for n in t.needs if n in names), t.lane) for t in tasks]
    done: set[str] = set()
    failures: list[BaseException] = []  # the first one is raised (the other lane's is its interruption)
    curs: list[duckdb.DuckDBPyConnection] = []  # the cursor while its lane works (interrupted on a failure)
    turn = threading.Condition()
    ranked = [{n: i for i, n in enumerate(o)} for o in order]

    def take(lane: int) -> Task | None:
        """The next task for `lane` (None: stop), waiting while one it may take is pending but not ready."""
        rank = ranked[lane]
        with turn:
            while not failures:
                mine = [t for t in pending if t.lane in (None, lane)]
                if not mine:
                    return None
                ready = [t for t in mine if all(n in done for n in t.needs)]
                if ready:
                    task = min(ready, key=lambda t: rank.get(t.name, len(rank)))
                    pending.remove(task)
                    return task
                turn.wait()
            return None

    def failed(exc: BaseException, others: Callable[[], list[duckdb.DuckDBPyConnection]]) -> None:
        with turn:  # (the cursor is taken out of `curs` under this lock before it is closed)
            failures.append(exc)
            turn.notify_all()
            for o in others():
                o.interrupt()

    def work(lane: int, c: duckdb.DuckDBPyConnection) -> None:
        while (task := take(lane)) is not None:
            task.run(c)
            with turn:
                done.add(task.name)
                turn.notify_all()

    def other() -> None:
        try:
            with beside(con) as cur:
                with turn:
                    curs.append(cur)
                try:
                    work(BESIDE, cur)
                finally:
                    with turn:
                        curs.clear()
        except BaseException as exc:  # re-raised in the caller's thread below
            failed(exc, lambda: [con])

    t = threading.Thread(target=other, name="stallscan-lane")
    t.start()
    try:
        work(HERE, con)
    except BaseException as exc:
        failed(exc, lambda: curs)
    finally:
        t.join()
    if failures:
        raise failures[0]
