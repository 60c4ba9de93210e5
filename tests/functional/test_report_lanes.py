"""A report whose replays have stamps collects its sections in two lanes at once (stallscan.report.build._lanes):
after a change to the files, the report and every table it derives equal those of the same report built one
section after the other (one CPU), the stall replay's incremental runs took the second lane's scratch schema,
the change log is pruned as the serial report prunes it, and a failure in the second lane is raised."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay import derive
from stallscan.report import build
from stallscan.report import lanes as report_lanes
from stallscan.report.build import build_report, public
from stallscan.report.registry import sections
from stallscan.report.section import Parts, ReportOptions
from stallscan.report.sections import stalls as stalls_section
from stallscan.store import stamps
from stallscan.store.db import connect
from tests.functional.test_report_cells import OUTPUTS
from tests.helpers import SAMPLES
from tests.replay_checks import fingerprint

# the replays' tables, the sweep's bins, the report's cells (test_report_cells.OUTPUTS) and the change log
REPLAYED = ("user_labels", "turn_boundaries", "turn_boundary_variants", "rounds", "stalls", "turns", "sweep_bins")
DERIVED = (*REPLAYED, *OUTPUTS, "events_changes")
STAMPED = ("user_labels", "turn_boundaries", "sweep_bins", "stalls", "session_cells", "boundary_cells", "stall_cells")


def _report(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    data = build_report(con, ReportOptions(bootstrap=40, timelines=True))
    return dict(json.loads(json.dumps(public(data), default=str)))


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs from tmp_path, with no stallscan.toml or STALLSCAN_CONFIG of the caller's."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)


def _derived(tmp_path: Path, *names: str) -> list[duckdb.DuckDBPyConnection]:
    """Databases of sample_logs' Claude Code and Codex sessions reported once (every table derived), then the
    Codex sessions again under other ids (new sessions) ingested, not reported yet: one tree for all of them."""
    tree = tmp_path / "logs"
    for sub in ("claude-code", "codex"):
        shutil.copytree(SAMPLES / sub, tree / sub)
    cons = [connect(str(tmp_path / f"{name}.duckdb")) for name in names]
    for con in cons:
        ingest_paths(con, [str(tree)])
        _report(con)
    for f in (SAMPLES / "codex").glob("*.jsonl"):
        (tree / "codex" / f"again-{f.name}").write_bytes(f.read_bytes().replace(b"-", b"x"))
    for con in cons:
        ingest_paths(con, [str(tree)])
    return cons


def new_sessions_pair(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """Two databases (serial, name) of _derived's tree, closed (the CLI opens them): reported once, then new
    sessions ingested into both."""
    for con in _derived(tmp_path, "serial", name):
        con.close()
    return tmp_path / "serial.duckdb", tmp_path / f"{name}.duckdb"


def cli_report(db: Path) -> tuple[int, str]:
    """The CLI's JSON report of db (a small bootstrap): its exit code and stdout."""
    from typer.testing import CliRunner

    from stallscan.cli import app

    res = CliRunner().invoke(app, ["report", "--db", str(db), "--format", "json", "--bootstrap", "40"])
    return res.exit_code, res.stdout


def assert_same_derives(a_path: Path, b_path: Path) -> None:
    """Every stamp's key and every derived table's fingerprint the same in the two database files."""
    a, b = duckdb.connect(str(a_path)), duckdb.connect(str(b_path))
    try:
        for name in STAMPED:
            assert stamps.get(b, name)["key"] == stamps.get(a, name)["key"], name
        for t in DERIVED:
            assert fingerprint(b, t) == fingerprint(a, t), t
    finally:
        a.close()
        b.close()


def _scratches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The scratch schema of every incremental run from here on."""
    used: list[str] = []
    incremental = derive._incremental

    def spy(con: duckdb.DuckDBPyConnection, *args: Any, **kw: Any) -> None:
        used.append(derive.scratch())
        incremental(con, *args, **kw)

    monkeypatch.setattr(derive, "_incremental", spy)
    return used


@pytest.mark.parametrize("big", [False, True])
def test_lanes_equal_one_section_after_the_other(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, big: bool) -> None:
    if big:  # as a database above the limit: the lanes only when the runs will be incremental over few sessions
        monkeypatch.setattr(build, "BESIDE_MAX_EVENTS", 0)
    serial, lanes = _derived(tmp_path, "serial", "lanes")
    monkeypatch.setenv("STALLSCAN_THREADS", "1")
    used = _scratches(monkeypatch)
    want = _report(serial)
    assert used and set(used) == {derive.SCRATCH}  # one lane: every run in the one scratch schema
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    used.clear()
    got = _report(lanes)
    assert {derive.SCRATCH, report_lanes.BESIDE_SCRATCH} <= set(used)  # the stall replay's runs beside the others'
    got = json.loads(json.dumps(got).replace("lanes.duckdb", "serial.duckdb"))  # (the `show` lines name it)
    assert got == want
    for name in STAMPED:
        assert stamps.get(lanes, name)["mode"] == stamps.get(serial, name)["mode"], name
        assert stamps.get(lanes, name)["key"] == stamps.get(serial, name)["key"], name
    for t in DERIVED:
        assert fingerprint(lanes, t) == fingerprint(serial, t), t
    assert lanes.execute("SELECT count(*) FROM events_changes").fetchone() == (0,)  # pruned once both are done
    schemas = "SELECT count(*) FROM duckdb_schemas() WHERE schema_name LIKE 'stallscan_inc%'"
    assert lanes.execute(schemas).fetchone() == (0,)  # both scratch schemas dropped


def test_the_lanes_run_on_one_duckdb_thread_when_the_runs_are_incremental_over_few_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    few, full = _derived(tmp_path, "few", "full")
    threads = "SELECT current_setting('threads')"
    seen: list[tuple[str, int]] = []
    for name in ("boundaries", "stalls"):  # the first task of each lane (the stall section's first part)
        section = next(s for s in sections() if s.name == name)
        collect = section.parts.first if section.parts else section.collect

        def spy(c: duckdb.DuckDBPyConnection, opts: ReportOptions, name: str = name, collect: Any = collect) -> Any:
            seen.append((name, int(c.execute(threads).fetchone()[0])))
            return collect(c, opts)

        if section.parts:
            monkeypatch.setattr(section, "parts", Parts(spy, section.parts.rest, section.parts.join))
        else:
            monkeypatch.setattr(section, "collect", spy)
    for con in (few, full):
        con.execute("SET threads = 2")
    _report(few)
    assert sorted(seen) == [("boundaries", 1), ("stalls", 1)]  # both lanes, their incremental runs on one thread
    assert int(few.execute(threads).fetchone()[0]) == 2  # set back after the lanes
    # another retry bound than the stall replay's stamp holds: a full stall replay, the lanes on two threads
    seen.clear()
    build_report(full, ReportOptions(bootstrap=40, retry_bound=5))
    assert sorted(seen) == [("boundaries", 2), ("stalls", 2)]


def test_no_lanes_above_the_limit_when_a_run_would_be_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    monkeypatch.setattr(build, "BESIDE_MAX_EVENTS", 0)
    (con,) = _derived(tmp_path, "d")
    opts = ReportOptions(bootstrap=40)
    assert build.few_changes(con, opts)
    assert not build.few_changes(con, ReportOptions(bootstrap=40, threshold=opts.threshold + 1))  # new threshold
    assert not build.few_changes(con, ReportOptions(bootstrap=40, retry_bound=opts.retry_bound + 1))
    monkeypatch.setattr(build, "LANE_MAX_SESSIONS", 0)
    assert not build.few_changes(con, opts)  # more changed sessions than the limit
    used = _scratches(monkeypatch)
    _report(con)
    assert used and set(used) == {derive.SCRATCH}  # one after the other


@pytest.mark.parametrize("part", ["first", "rest"])
def test_a_failure_in_the_second_lane_is_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part: str) -> None:
    """A failure in the stall section's first part (on the cursor) or in its rest (on whichever lane is free) is
    raised, the change log is not pruned, and the connection still reports."""
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    (con,) = _derived(tmp_path, "d")
    stalls = stalls_section.SECTION
    parts = stalls.parts
    assert parts is not None

    def fails(c: duckdb.DuckDBPyConnection, opts: ReportOptions, *head: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("boom")

    broken = Parts(fails, parts.rest, parts.join) if part == "first" else Parts(parts.first, fails, parts.join)
    monkeypatch.setattr(stalls, "parts", broken)
    with pytest.raises(ValueError, match="boom"):
        _report(con)
    if part == "first":  # (the stall replay not stamped: its changes kept)
        assert con.execute("SELECT count(*) FROM events_changes").fetchone()[0] > 0
    assert not [t for t in threading.enumerate() if t.name == "stallscan-lane"]  # nothing left running
    monkeypatch.setattr(stalls, "parts", parts)
    _report(con)  # the connection still works, and a report completes
    assert con.execute("SELECT count(*) FROM events_changes").fetchone() == (0,)


def test_the_timelines_are_read_on_the_second_lane_and_equal_the_serial_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listed sessions' refs and timelines are read in the lanes (build._tail, on whichever is free), once
    the boundaries section and the stall section's first part are in, and equal those the report reads after
    the sections (one CPU)."""
    lanes, serial = _derived(tmp_path, "lanes", "serial")
    from stallscan.report import timeline

    read_on: list[duckdb.DuckDBPyConnection] = []
    windows = timeline.timeline_windows

    def spy(c: duckdb.DuckDBPyConnection, *args: Any, **kw: Any) -> Any:
        read_on.append(c)
        return windows(c, *args, **kw)

    monkeypatch.setattr(timeline, "timeline_windows", spy)
    monkeypatch.setenv("STALLSCAN_THREADS", "1")
    want = _report(serial)
    assert read_on == [serial]
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    got = _report(lanes)
    assert len(read_on) == 2  # (once, in a lane)
    assert got["timelines"] and got == want


def test_a_failure_in_the_first_lane_is_raised_and_the_second_does_not_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure in the caller's lane before the boundaries section is in: the second lane does not wait for
    it (nor read the timelines), the failure is raised, and the connection still reports."""
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    (con,) = _derived(tmp_path, "d")
    from stallscan.report.sections import boundaries as boundaries_section

    section = boundaries_section.SECTION
    collect = section.collect
    tails: list[int] = []
    tail = build._tail

    def counted(*a: Any) -> None:
        tails.append(1)
        tail(*a)

    monkeypatch.setattr(build, "_tail", counted)

    def fails(c: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
        raise ValueError("first lane")

    monkeypatch.setattr(section, "collect", fails)
    with pytest.raises(ValueError, match="first lane"):
        _report(con)
    assert tails == []
    monkeypatch.setattr(section, "collect", collect)
    assert _report(con)["timelines"] is not None
