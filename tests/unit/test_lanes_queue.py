"""The report's lanes' work queue (stallscan.report.lanes.run_lanes) on an in-memory database: every task runs
once, after what it needs, on its lane when it is held to one; a failure in a task on either lane, or in the
second lane's set-up, is raised once both lanes have stopped (a statement running on the other lane is
interrupted), and nothing is left running."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

import duckdb
import pytest

from stallscan.report.lanes import BESIDE, HERE, Task, run_lanes

# some seconds, unless interrupted (an interruption that comes before the statement starts is lost: the
# statement then runs to its end, and the test still passes)
LONG = "SELECT sum(hash(a)) FROM range(400000000) t(a)"


@contextlib.contextmanager
def _cursor(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    cur = con.cursor()
    try:
        yield cur
    finally:
        cur.close()


def _lane_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "stallscan-lane"]


def test_every_task_runs_once_after_its_needs_on_its_lane() -> None:
    con = duckdb.connect()
    ran: list[tuple[str, bool]] = []  # (task, on the caller's connection)
    lock = threading.Lock()

    def task(name: str) -> Task:
        def run(c: duckdb.DuckDBPyConnection) -> None:
            c.execute("SELECT 1").fetchall()
            with lock:
                ran.append((name, c is con))

        return Task(name, run)

    tasks = [
        Task("a", task("a").run, (), HERE),
        Task("b", task("b").run, ("a",), HERE),
        Task("c", task("c").run, (), BESIDE),
        Task("c.rest", task("c.rest").run, ("c",)),
        Task("tail", task("tail").run, ("a", "c", "not a task")),  # (needs outside the list: not waited for)
        task("x"),
        task("y"),
    ]
    run_lanes(con, tasks, _cursor)
    names = [n for n, _ in ran]
    assert sorted(names) == sorted(t.name for t in tasks)
    assert names.index("a") < names.index("b") and names.index("c") < names.index("c.rest")
    assert names.index("tail") > max(names.index("a"), names.index("c"))
    where = dict(ran)
    assert where["a"] and where["b"] and not where["c"]
    assert not _lane_threads()


@pytest.mark.parametrize("lane", [HERE, BESIDE])
def test_a_failure_on_either_lane_is_raised_and_interrupts_the_other(lane: int) -> None:
    """The failing task's lane stops, no task after is taken, and the failure (not the other lane's
    interruption) is raised after both lanes stopped. Whether the other lane's statement was interrupted is not
    asserted: an interrupt that comes before the statement starts is lost (it then runs to its end)."""
    con = duckdb.connect()
    started = threading.Event()
    ran: list[str] = []

    def long(c: duckdb.DuckDBPyConnection) -> None:
        started.set()
        c.execute(LONG).fetchall()

    def fails(c: duckdb.DuckDBPyConnection) -> None:
        started.wait(30)
        time.sleep(0.05)  # (most often the other lane's statement is running by then)
        raise ValueError("lane failed")

    tasks = [
        Task("long", long, (), 1 - lane),
        Task("fails", fails, (), lane),
        Task("after", lambda c: ran.append("after"), ("long",)),
    ]
    with pytest.raises(ValueError, match="lane failed"):
        run_lanes(con, tasks, _cursor)
    assert ran == [] and not _lane_threads()
    assert con.execute("SELECT 42").fetchone() == (42,)  # the connection still works


def test_a_failure_making_the_second_connection_is_raised_and_nothing_waits() -> None:
    """The caller's lane does not wait for a task held to the second lane, or needing one, when that lane could
    not start."""
    con = duckdb.connect()
    ran: list[str] = []

    def broken(c: duckdb.DuckDBPyConnection) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        raise RuntimeError("no cursor")

    tasks = [
        Task("beside", lambda c: ran.append("beside"), (), BESIDE),
        Task("tail", lambda c: ran.append("tail"), ("beside",)),
    ]
    with pytest.raises(RuntimeError, match="no cursor"):
        run_lanes(con, tasks, broken)
    assert ran == [] and not _lane_threads()


def test_a_lane_that_starts_late_takes_what_is_left() -> None:
    """The caller's lane does not wait for a task held to a lane that has not started (nor for one needing it):
    it takes what it may and leaves; the second lane, once started, takes the rest. No task runs twice."""
    con = duckdb.connect()
    gate = threading.Event()
    ran: list[tuple[str, bool]] = []
    lock = threading.Lock()

    def task(name: str, after: threading.Event | None = None) -> Callable[[duckdb.DuckDBPyConnection], None]:
        def run(c: duckdb.DuckDBPyConnection) -> None:
            with lock:
                ran.append((name, c is con))
            if after is not None:
                after.set()

        return run

    @contextlib.contextmanager
    def late(c: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
        assert gate.wait(60)  # (a safeguard against a hang, not a timing check)
        with _cursor(c) as cur:
            yield cur

    tasks = [
        Task("a", task("a", gate), (), HERE),
        Task("b", task("b"), (), BESIDE),
        Task("b.rest", task("b.rest"), ("b",)),
        Task("x", task("x")),
    ]
    run_lanes(con, tasks, late)
    names = [n for n, _ in ran]
    assert sorted(names) == ["a", "b", "b.rest", "x"]
    assert names.index("b") < names.index("b.rest")
    assert dict(ran)["a"] and not dict(ran)["b"]
    assert not _lane_threads()
