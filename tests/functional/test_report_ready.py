"""The report's second lane made ahead (stallscan.report.lanes.Ready): after new sessions, `stallscan report`
makes the lane's cursor and brings the session cells up to date on a thread beside the labels; the lane then
takes that cursor, the caller's scope finds the cells up to date, and the report and every derived table equal
those of the same report built one section after the other. A failure on that thread is raised by the report."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from stallscan.report import build, summary_cells
from stallscan.report import lanes as report_lanes
from stallscan.report.registry import sections
from stallscan.report.section import ReportOptions
from stallscan.store import stamps
from tests.functional.test_report_lanes import _derived, assert_same_derives, cli_report, new_sessions_pair


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)


def test_the_lane_made_beside_the_labels_is_taken_and_the_report_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial, ready = new_sessions_pair(tmp_path, "ready")
    made: list[report_lanes.Ready] = []
    taken: list[duckdb.DuckDBPyConnection] = []

    class Spy(report_lanes.Ready):
        def __init__(self, con: duckdb.DuckDBPyConnection, opts: ReportOptions, scope: Any, ahead: Any = ()) -> None:
            made.append(self)
            super().__init__(con, opts, scope, ahead)

        def take(self) -> duckdb.DuckDBPyConnection:
            cur = super().take()
            taken.append(cur)
            return cur

    refreshed: list[tuple[str, str]] = []
    refresh = summary_cells.refresh_sessions

    def spy_refresh(con: duckdb.DuckDBPyConnection) -> str:
        mode = refresh(con)
        refreshed.append((threading.current_thread().name, mode))
        return mode

    corpus = next(s for s in sections() if s.name == "corpus")
    collect = corpus.collect
    collected_on: list[str] = []

    def spy_corpus(c: duckdb.DuckDBPyConnection, opts: ReportOptions) -> Any:
        collected_on.append(threading.current_thread().name)
        return collect(c, opts)

    monkeypatch.setattr(corpus, "collect", spy_corpus)
    monkeypatch.setattr(report_lanes, "Ready", Spy)
    monkeypatch.setattr(summary_cells, "refresh_sessions", spy_refresh)
    monkeypatch.setenv("STALLSCAN_THREADS", "1")
    code, want = cli_report(serial)
    assert code == 0 and not made  # one CPU: no lanes, nothing made ahead
    assert collected_on == ["MainThread"]
    refreshed.clear()
    collected_on.clear()
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    code, got = cli_report(ready)
    assert code == 0
    assert len(made) == 1 and len(taken) == 1  # made beside the labels, taken by the second lane
    # the session cells brought up to date on the thread beside the labels; every other scope finds them so
    assert refreshed[0] == ("stallscan-ready", "incremental")
    assert {mode for _, mode in refreshed[1:]} == {"reused"}
    assert collected_on == ["stallscan-ready"]  # the corpus section there too, once (not again in the lanes)
    assert json.loads(got.replace("ready.duckdb", "serial.duckdb")) == json.loads(want)
    assert not [t for t in threading.enumerate() if t.name in ("stallscan-ready", "stallscan-lane")]
    assert_same_derives(serial, ready)


def test_a_failure_on_the_ready_thread_is_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, db = new_sessions_pair(tmp_path, "ready")
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    scope = build.scope

    def fails(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> None:
        if threading.current_thread().name == "stallscan-ready":
            raise ValueError("boom")
        scope(con, opts)

    monkeypatch.setattr(build, "scope", fails)
    res = CliRunner().invoke(app, ["report", "--db", str(db), "--format", "json", "--bootstrap", "40"])
    assert res.exit_code != 0 and isinstance(res.exception, ValueError)
    assert not [t for t in threading.enumerate() if t.name in ("stallscan-ready", "stallscan-lane")]
    monkeypatch.setattr(build, "scope", scope)
    code, out = cli_report(db)  # the database still reports
    assert code == 0 and json.loads(out)["report_version"]


def test_nothing_is_made_ahead_on_one_cpu_or_when_the_runs_are_not_few(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (con,) = _derived(tmp_path, "d")
    opts = ReportOptions(bootstrap=40)
    monkeypatch.setenv("STALLSCAN_THREADS", "1")
    assert build.ready_lane(con, opts, True) is None
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    assert build.ready_lane(con, opts, False) is None
    with stamps.kept_tables():
        ready = build.ready_lane(con, opts, True)
        assert ready is not None
        ready.close()  # not taken: joined and its cursor closed
    assert not [t for t in threading.enumerate() if t.name == "stallscan-ready"]
    con.close()
