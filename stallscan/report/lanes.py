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
from stallscan.store import checkpoint
from stallscan.store.beside import Beside
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
# the built-in sections that read only what the ingest wrote and the session cells (not the labels nor a replay's
# tables): collected on the second lane's cursor while the caller labels the events (Ready)
AHEAD = ("corpus",)
# the sections the listed sessions come from (build._listed): the tail (their refs and timelines) waits for them
TAIL_NEEDS = ("boundaries", "stalls")
# the tasks after which their lane writes nothing more (stallscan.store.checkpoint: the report's writes checkpointed
# beside its last reads and numpy work): the stall section's first part (its replay's incremental run and summary
# cells; its rest, the tail and the cheap sections read). The threshold section's sweep says so itself once its
# bins are written, before its numpy work (sweep/core.py); the boundaries section runs before it on its lane (AFTER)
WRITERS = ("stalls",)
CHECKPOINT_WRITERS = len(WRITERS) + 1  # (and the sweep)


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
        if name in WRITERS:
            checkpoint.writes_done(c)

    return run


def _rest(
    s: Section, opts: ReportOptions, early: dict[str, Any], firsts: dict[str, Any]
) -> Callable[[duckdb.DuckDBPyConnection], None]:
    assert s.parts is not None

    def run(c: duckdb.DuckDBPyConnection) -> None:
        assert s.parts is not None
        early[s.name] = s.parts.join(firsts[s.name], s.parts.rest(c, opts, firsts[s.name]))

    return run


class Queue:
    """The tasks of two lanes: each lane, once it works (`work`), takes the first task in its `order` (the tasks
    it does not name after those it does) that is its own or either lane's and whose needs are done, and waits
    while one such task's needs are under way. It leaves when no task left may be its, or none it may take can
    become ready: a need held to a lane that has not started yet (that lane, when it starts, takes what is
    left), or after a failure in any lane (`fail`; `work` records its own and re-raises it). Needs name tasks
    of the list (others are left out: never waited for)."""

    def __init__(self, tasks: list[Task], order: Sequence[Sequence[str]] = ORDER) -> None:
        names = {t.name for t in tasks}
        self.pending = [Task(t.name, t.run, tuple(n for n in t.needs if n in names), t.lane) for t in tasks]
        self.done: set[str] = set()
        self.running: set[str] = set()
        self.started: set[int] = set()
        self.failures: list[BaseException] = []  # the first one is raised (another lane's is its interruption)
        self.turn = threading.Condition()
        self.ranked = [{n: i for i, n in enumerate(o)} for o in order]

    def _stuck(self, name: str) -> bool:
        """Whether task `name` cannot be done until a lane not started yet starts (under self.turn)."""
        if name in self.done or name in self.running:
            return False
        task = next(t for t in self.pending if t.name == name)
        held = task.lane is not None and task.lane not in self.started
        return held or any(self._stuck(n) for n in task.needs)

    def take(self, lane: int) -> Task | None:
        """The next task for `lane` (None: leave), waiting while one it may take is under way."""
        rank = self.ranked[lane]
        with self.turn:
            self.started.add(lane)
            self.turn.notify_all()
            while not self.failures:
                mine = [t for t in self.pending if t.lane in (None, lane) and not self._stuck(t.name)]
                if not mine:
                    return None
                ready = [t for t in mine if all(n in self.done for n in t.needs)]
                if ready:
                    task = min(ready, key=lambda t: rank.get(t.name, len(rank)))
                    self.pending.remove(task)
                    self.running.add(task.name)
                    return task
                self.turn.wait()
            return None

    def fail(self, exc: BaseException, interrupt: Callable[[], Sequence[duckdb.DuckDBPyConnection]] = tuple) -> None:
        """Record a failure: every lane leaves after its current task; `interrupt()`'s connections are
        interrupted (under the queue's lock: a lane takes its connection out of that list under it before
        closing it)."""
        with self.turn:
            self.failures.append(exc)
            self.turn.notify_all()
            for c in interrupt():
                c.interrupt()

    def work(
        self,
        lane: int,
        c: duckdb.DuckDBPyConnection,
        interrupt: Callable[[], Sequence[duckdb.DuckDBPyConnection]] = tuple,
    ) -> None:
        """Take and run tasks on `c` until none is left for `lane`; a failure is recorded (fail) and re-raised."""
        try:
            while (task := self.take(lane)) is not None:
                task.run(c)
                with self.turn:
                    self.running.discard(task.name)
                    self.done.add(task.name)
                    self.turn.notify_all()
        except BaseException as exc:
            self.fail(exc, interrupt)
            raise


def run_lanes(
    con: duckdb.DuckDBPyConnection,
    tasks: list[Task],
    beside: Callable[[duckdb.DuckDBPyConnection], AbstractContextManager[duckdb.DuckDBPyConnection]],
    order: Sequence[Sequence[str]] = ORDER,
) -> None:
    """Run `tasks` (a Queue) in two lanes: the caller's thread on `con`, a thread on the connection `beside(con)`
    gives (entered on that thread, so its set-up is beside the caller's first task; it closes the connection on
    exit). A failure interrupts the other lane's statement; the first one is raised once both lanes stopped."""
    q = Queue(tasks, order)
    curs: list[duckdb.DuckDBPyConnection] = []  # the cursor while its lane works (interrupted on a failure)

    def other() -> None:
        try:
            with beside(con) as cur:
                with q.turn:
                    curs.append(cur)
                try:
                    q.work(BESIDE, cur, lambda: [con])
                finally:
                    with q.turn:
                        curs.clear()
        except BaseException as exc:  # (recorded by q.work, or the cursor's set-up failed)
            if exc not in q.failures:
                q.fail(exc, lambda: [con])

    t = threading.Thread(target=other, name="stallscan-lane")
    t.start()
    try:
        q.work(HERE, con, lambda: curs)
    except BaseException:  # (recorded by q.work, raised below)
        pass
    finally:
        t.join()
    if q.failures:
        raise q.failures[0]


class Ready:
    """The second lane's cursor made ahead, on a thread of its own, while the caller labels the events after one
    new session: its set-up (store.db.cursor: the report's macros), then the report's scope on it (`scope`,
    stallscan.report.build.scope: it brings the session cells up to date, written beside the labels as the lanes'
    summaries are written beside each other, under derive.STAMPING). The labels' statements run on one DuckDB
    thread, and the second CPU had nothing to do under them; the caller's own scope then finds the session cells
    up to date, and the lane starts with its cursor made. The `ahead` sections (AHEAD: those that read neither
    the labels nor a replay's tables) are collected there too, into `early`, and left out of the lanes. `wait()`
    joins the thread and raises its error; `take()` hands over the cursor (once); `close()` joins and closes a
    cursor nobody took."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        opts: ReportOptions,
        scope: Callable[[duckdb.DuckDBPyConnection, ReportOptions], None],
        ahead: Sequence[Section] = (),
    ) -> None:
        self._cur: duckdb.DuckDBPyConnection | None = None
        self.early: dict[str, Any] = {}  # the `ahead` sections' data, collected on the cursor after its scope
        self._job = Beside(self._make, con, opts, scope, ahead, name="stallscan-ready")

    def _make(
        self,
        con: duckdb.DuckDBPyConnection,
        opts: ReportOptions,
        scope: Callable[[duckdb.DuckDBPyConnection, ReportOptions], None],
        ahead: Sequence[Section],
    ) -> None:
        from stallscan.replay.derive import scratch_named
        from stallscan.store import stamps
        from stallscan.store.db import cursor

        self._cur = cursor(con)  # (an error here on is raised in the caller's thread by wait / take)
        stamps.kept_for(self._cur, con)
        with scratch_named(BESIDE_SCRATCH):
            scope(self._cur, opts)
        for section in ahead:
            self.early[section.name] = section.collect(self._cur, opts)

    def wait(self) -> None:
        self._job.result()

    def take(self) -> duckdb.DuckDBPyConnection:
        self.wait()
        cur, self._cur = self._cur, None
        if cur is None:
            raise RuntimeError("the lane's cursor was taken already")
        return cur

    def close(self) -> None:
        self._job.join()
        if self._cur is not None:
            self._cur.close()
            self._cur = None
