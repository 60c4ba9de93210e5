"""The report's per-session summary rows (stallscan.report.summary_cells): the report built from them after a
session is added, changed or removed equals a report built from scratch on the same files; the cells are
replaced per changed session (stamped incremental, equal to a full rebuild); and the "Stalls" figures read
from them equal the row-level queries of stallscan.replay.stalls over rounds, turns and stalls."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay import stalls as replay_stalls_mod
from stallscan.report import summary_cells as cells
from stallscan.report.build import build_report, public
from stallscan.report.section import ReportOptions
from stallscan.report.sections import boundaries, stalls
from stallscan.store import stamps
from stallscan.store.db import connect
from stallscan.sweep.core import tool_results_left_out
from tests.helpers import SAMPLES
from tests.replay_checks import fingerprint

OUTPUTS = (
    "session_cells",
    "boundary_cells",
    "boundary_misreads",
    "boundary_totals",
    "round_cells",
    "turn_cells",
    "signature_cells",
)


def _report(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    data = build_report(con, ReportOptions(bootstrap=40, timelines=True))
    return dict(json.loads(json.dumps(public(data), default=str)))


def _tree(tmp_path: Path) -> Path:
    """Three of the samples' formats (a Claude Code session to change, Codex sessions to add or remove, hermes
    sessions that stay as they were): each ingest here is three format batches instead of all nineteen."""
    tree = tmp_path / "logs"
    for sub in ("claude-code", "codex", "hermes"):
        shutil.copytree(SAMPLES / sub, tree / sub)
    return tree


def _change(tree: Path, what: str) -> None:
    if what == "add":  # the codex sample again under other session ids: new sessions
        for f in (SAMPLES / "codex").glob("*.jsonl"):
            (tree / "codex" / f"again-{f.name}").write_bytes(f.read_bytes().replace(b"-", b"x"))
    elif what.startswith("change"):  # the Claude Code session rewritten without its last two lines
        f = tree / "claude-code" / "session.jsonl"
        f.write_bytes(b"".join(f.read_bytes().splitlines(keepends=True)[:-2]))
    else:  # the codex file emptied: its sessions' rows are removed
        (tree / "codex" / "rollout.jsonl").write_bytes(b"")


@pytest.mark.parametrize(
    "what",
    [
        "change",
        "change_over_the_view",
        pytest.param("add", marks=pytest.mark.slow),
        pytest.param("remove", marks=pytest.mark.slow),
    ],
)  # (add and remove in the slow tier: change both removes and adds a session's rows)
def test_incremental_report_equals_a_full_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str) -> None:
    """change_over_the_view: the boundary cells' queries read the view turn_boundaries narrowed to the
    changed sessions, as over more than ROWS_MAX_SESSIONS of them, instead of their rows copied once."""
    monkeypatch.chdir(tmp_path)
    if what == "change_over_the_view":
        monkeypatch.setattr(cells, "ROWS_MAX_SESSIONS", 0)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    tree = _tree(tmp_path)
    con = connect(str(tmp_path / "inc.duckdb"))
    ingest_paths(con, [str(tree)])
    before = _report(con)
    sessions = con.execute("SELECT count(DISTINCT session_id) FROM events").fetchone()
    _change(tree, what)
    ingest_paths(con, [str(tree)])
    asked: list[tuple[str, bool]] = []  # the signature cells' check (SKIPPED_WHEN_NONE) and its answers
    real_any = cells._any

    def any_noted(c: duckdb.DuckDBPyConnection, q: str) -> bool:
        asked.append((q, real_any(c, q)))
        return asked[-1][1]

    monkeypatch.setattr(cells, "_any", any_noted)
    got = _report(con)
    # the changed Claude Code session has signature rows (the check answers true: DELETE and INSERT run); the codex
    # sessions added or removed have none (false: both skipped); either way the cells equal a full build's below
    assert asked == [("signatures_any", what.startswith("change"))]
    for name in ("session_cells", "boundary_cells", "stall_cells"):
        assert stamps.get(con, name)["mode"] == "incremental", name  # replaced per changed session
    after = con.execute("SELECT count(DISTINCT session_id) FROM events").fetchone()
    assert (after > sessions) if what == "add" else (after < sessions) if what == "remove" else after == sessions
    inc_cells = {t: fingerprint(con, t) for t in OUTPUTS}
    if what.startswith("change"):  # the changed session's errors kept their events' file, line and excerpt:
        # they are read through the changed sessions' ids (report/cells_misreads.sql), which a wrong filter loses
        n = con.execute(
            "SELECT count(*) FROM boundary_misreads WHERE file LIKE '%session.jsonl' AND excerpt IS NOT NULL"
        ).fetchone()
        assert n is not None and n[0] > 0
    # the misreads' constant list of the changed sessions' error events (report/cells_misreads.sql) is reset after
    assert con.execute("SELECT getvariable('cells_misread_ids')").fetchone() == (None,)
    # the section's sums over every session, read from boundary_totals (kept by adding and subtracting the
    # changed sessions' cells), equal the sums of every session's cells
    assert con.execute("SELECT getvariable('scope_whole')").fetchone() == (True,)
    con.execute("SET VARIABLE scope_whole = false")
    opts = ReportOptions(bootstrap=40, timelines=True)
    assert json.loads(json.dumps(public(boundaries.collect(con, opts)), default=str)) == got["boundaries"]
    left_out = tool_results_left_out(con, "none", counted=cells.refresh_boundaries_scoped)
    assert left_out == got["threshold"]["tool_results_left_out"]
    con.close()

    fresh = connect(str(tmp_path / "full.duckdb"))
    ingest_paths(fresh, [str(tree)])
    want = _report(fresh)
    assert {t: fingerprint(fresh, t) for t in OUTPUTS} == inc_cells
    fresh.close()
    assert got == want
    assert got != before  # the change shows in the report


def test_repeat_reuses_the_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample_db_file: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    shutil.copy(sample_db_file, tmp_path / "d.duckdb")
    con = connect(str(tmp_path / "d.duckdb"))
    _report(con)
    stamped = {n: stamps.get(con, n) for n in ("session_cells", "boundary_cells", "stall_cells")}
    assert all(s is not None and s["mode"] == "full" for s in stamped.values())
    assert cells.refresh_sessions(con) == cells.refresh_boundaries(con) == cells.refresh_stalls(con) == "reused"
    monkeypatch.setattr(stamps, "rules_hash", lambda: "other rules")  # new rules: every group rebuilt
    assert cells.refresh_sessions(con) == cells.refresh_boundaries(con) == cells.refresh_stalls(con) == "full"
    con.close()


def test_cells_count_every_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample_db_file: Path) -> None:
    """Each table's n adds up to its upstream's rows (counted here from the rows themselves)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    shutil.copy(sample_db_file, tmp_path / "d.duckdb")
    con = connect(str(tmp_path / "d.duckdb"))
    _report(con)
    one = lambda q: con.execute(q).fetchone()[0]
    assert one("SELECT sum(events) FROM session_cells") == one("SELECT count(*) FROM events") > 0
    assert one("SELECT sum(n) FROM boundary_cells") == one("SELECT count(*) FROM turn_boundaries") > 0
    assert one("SELECT count(*) FROM boundary_misreads") == one(
        "SELECT count(*) FROM turn_boundaries WHERE error IN ('auto_as_human', 'human_as_auto')"
    )
    assert one("SELECT sum(n) FROM round_cells") == one("SELECT count(*) FROM rounds") > 0
    assert one("SELECT sum(n) FROM turn_cells") == one("SELECT count(*) FROM turns") > 0
    assert one("SELECT sum(decided) FROM signature_cells") == one(
        "SELECT count(*) FROM rounds WHERE signature IS NOT NULL"
    )
    con.close()


@pytest.mark.parametrize(
    ("harness", "stall_rows"),
    [(None, "plan endings"), (["claude_code", "codex"], "none"), (["gemini_cli", "litellm"], "no plan ending")],
)
def test_stall_figures_equal_the_row_queries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample_db_file: Path, harness: list[str] | None, stall_rows: str
) -> None:
    """The section's figures equal the row-level queries, also where it does not run them: no stall row in scope
    (the endings' list, the recovery and the bound sweep answered without a statement), stall rows but no plan
    ending (the list not run)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    shutil.copy(sample_db_file, tmp_path / "d.duckdb")
    con = connect(str(tmp_path / "d.duckdb"))
    opts = ReportOptions(bootstrap=0, harness=harness or [])
    data = build_report(con, opts)
    assert data["stalls"]["counts"] == replay_stalls_mod.summary_counts(con, scoped=True)
    assert data["stalls"]["rates"] == replay_stalls_mod.silent_rates(con, scoped=True)
    assert data["stalls"]["signatures"] == replay_stalls_mod.signature_hits(con, scoped=True)
    assert data["stalls"]["counts"]  # not vacuous
    rows = replay_stalls_mod.list_stalls(con, outcome=list(stalls.PLAN_ENDINGS), scoped=True, limit=opts.limit)
    listed = [(r["session_id"], r["seq"]) for r in rows if r["delivered"]]
    assert [(r["session_id"], r["seq"]) for r in data["stalls"]["silent_endings"]] == listed
    assert data["stalls"]["recovery"] == replay_stalls_mod.recovery(con, scoped=True)
    bounds = sorted(set(stalls.SWEEP_BOUNDS + [opts.retry_bound]))
    assert data["stalls"]["bound_sweep"] == replay_stalls_mod.bound_sweep(con, bounds, scoped=True)
    in_scope = [n for c in data["stalls"]["counts"].values() for n in c.get("stall_outcome", {}).values()]
    assert (bool(listed), bool(in_scope)) == {"plan endings": (True, True), "none": (False, False)}.get(
        stall_rows, (False, True)
    )
    if stall_rows == "none":
        assert data["stalls"]["bound_sweep"] == stalls.no_bound_sweep(bounds)
    con.close()


@pytest.mark.parametrize("harness", [None, ["claude_code", "codex"]])
def test_tool_results_left_out_from_the_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample_db_file: Path, harness: list[str] | None
) -> None:
    """The threshold section's tool results left out, read from boundary_cells (the report's sweep gives
    the refresh), equal the count over every tool-result row of turn_boundaries, in and out of a scope."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    shutil.copy(sample_db_file, tmp_path / "d.duckdb")
    con = connect(str(tmp_path / "d.duckdb"))
    data = build_report(con, ReportOptions(bootstrap=0, harness=harness or []))
    for by in ("none", "harness", "source_format"):
        rows = tool_results_left_out(con, by, 1.0, 5.0)
        assert rows and sum(r["tool_results"] for r in rows) > 0
        assert tool_results_left_out(con, by, 1.0, 5.0, cells.refresh_boundaries_scoped) == rows, by
    assert data["threshold"]["tool_results_left_out"] == tool_results_left_out(con, "none")
    con.close()


def test_each_sessions_worst_misread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample_db_file: Path) -> None:
    """boundary_misreads' in_session / session_errors / far, which the headline's examples read, against each
    session's errors ranked here from turn_boundaries' rows: the gap farthest from the threshold on a log
    scale first (no gap last), then the earlier time (no time last), then the earlier record."""
    import math

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    shutil.copy(sample_db_file, tmp_path / "d.duckdb")
    con = connect(str(tmp_path / "d.duckdb"))
    _report(con)
    errors: dict[str, list[tuple[Any, ...]]] = {}
    for sid, seq, ts, gap, threshold in con.execute(
        "SELECT session_id, seq, ts, gap_s, threshold FROM turn_boundaries "
        "WHERE error IN ('auto_as_human', 'human_as_auto')"
    ).fetchall():
        far = None if gap is None else abs(math.log(max(gap, 0.001) / max(threshold, 0.001)))
        errors.setdefault(sid, []).append((far, ts, seq))
    assert errors
    want = {}
    for sid, errs in errors.items():
        ranked = sorted(errs, key=lambda e: (e[0] is None, -(e[0] or 0.0), e[1] is None, e[1] or 0, e[2]))
        want[sid] = (ranked[0][2], len(errs))
    got = {
        sid: (seq, n)
        for sid, seq, n in con.execute(
            "SELECT session_id, seq, session_errors FROM boundary_misreads WHERE in_session = 1"
        ).fetchall()
    }
    assert got == want
    con.close()


def test_signature_cells_skip_answers_for_every_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample_db_file: Path
) -> None:
    """report/cells_signatures_any.sql, asked per session as the only changed one: false only for a session with no
    stored signature_cells row and none the cells' query would add (so an incremental refresh that skips its DELETE
    and INSERT leaves the table as they would); true for some sessions and false for others (not vacuous)."""
    from stallscan.store import sql

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    shutil.copy(sample_db_file, tmp_path / "d.duckdb")
    con = connect(str(tmp_path / "d.duckdb"))
    _report(con)
    stmt = sql.load("report/cells_signatures")[-1]
    answers = set()
    for (sid,) in con.execute("SELECT DISTINCT session_id FROM events").fetchall():
        con.execute(f"CREATE OR REPLACE TEMP TABLE {cells.CHANGED} AS SELECT ?::VARCHAR AS session_id", [sid])
        row = sql.first(sql.query(con, "report/cells_signatures_any"))
        assert row is not None
        answers.add(row[0])
        if not row[0]:
            assert con.execute("SELECT count(*) FROM signature_cells WHERE session_id = ?", [sid]).fetchone() == (0,)
            assert con.execute(f"SELECT count(*) FROM ({stmt})", {"all": False}).fetchone() == (0,), sid
    assert answers == {True, False}
    con.close()
