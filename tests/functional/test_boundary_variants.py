"""Rule variants of the router's order (marker-aware, notification-aware, both): golden cases
(tests/golden/boundary_variants/<case>/, expectations written by hand from the rules in
stallscan/data/router_variants.toml), agreement of the SQL with the plain-Python reference
(stallscan.replay.boundary_variants_ref) on generated sessions, and the sweep's comparison with the router."""

from __future__ import annotations

import json
import tomllib
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stallscan.ingest.run import ingest_paths
from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.boundary_variants import RULES, VARIANTS, replay_variants, rule_entries
from stallscan.replay.labels import LIBRARY, label_events
from stallscan.sweep.core import ALL_POLICIES, run_sweep, thresholds_grid
from stallscan.sweep.variants import event_errors, rule_advice
from tests.helpers import TESTS, examples
from tests.replay_checks import rows as _rows
from tests.replay_checks import variant_mismatches

GOLDEN = TESTS / "golden" / "boundary_variants"
CASES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir())


# ---------------------------------------------------------------------------------------------------
# golden cases
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES)
def test_golden(con, case):
    folder = GOLDEN / case
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    res = ingest_paths(con, [str(folder / "transcript.jsonl")])
    assert res.rejects == 0
    label_events(con, config={})
    replay_boundaries(con, expected["threshold"])
    got = _rows(
        con,
        "SELECT e.line, t.origin, t.decided_by, t.decision, t.error, v.* FROM turn_boundaries t "
        "JOIN turn_boundary_variants v USING (event_id) JOIN events e USING (event_id) ORDER BY e.line",
    )
    assert [g["line"] for g in got] == [d["line"] for d in expected["decisions"]], case
    for g, want in zip(got, expected["decisions"]):
        assert g["origin"] == want["origin"], (case, want["line"])
        for policy, prefix in (("router", None), *VARIANTS.items()):
            cols = {k: (k if prefix is None else f"{prefix}_{k}") for k in ("decided_by", "decision", "error")}
            have = {k: g[c] for k, c in cols.items()}
            assert have == want[policy], (case, want["line"], policy)
    assert variant_mismatches(con, expected["threshold"]) == []


def test_golden_cases_cover_each_rule():
    """Each new step decides somewhere, each variant both removes and (marker-aware) adds an error."""
    steps, removed, added = set(), set(), set()
    for c in CASES:
        for d in json.loads((GOLDEN / c / "expected.json").read_text())["decisions"]:
            r = d["router"]["error"]
            for p in VARIANTS:
                steps.add((p, d[p]["decided_by"]))
                if r in ("auto_as_human", "human_as_auto") and d[p]["error"] == "none":
                    removed.add(p)
                if r == "none" and d[p]["error"] in ("auto_as_human", "human_as_auto"):
                    added.add(p)
    assert {("marker-aware", "marker"), ("notification-aware", "notification")} <= steps
    assert {("marker+notification", "marker"), ("marker+notification", "notification")} <= steps
    assert removed == set(VARIANTS) and added == {"marker-aware"}


def test_rules_are_cited_and_name_library_entries():
    with open(LIBRARY, "rb") as fh:
        library = {e["id"] for e in tomllib.load(fh)["prompts"]}
    entries = rule_entries()
    assert entries and all(e["citation"] for e in entries)
    for e in entries:
        if e["match"] == "rule":
            assert e["value"] in library, f"{RULES.name} {e['id']}: no prompt-library entry {e['value']!r}"
    assert {e["rule_set"] for e in entries} == {"marker", "automatic"}


# ---------------------------------------------------------------------------------------------------
# generated sessions: SQL and reference agree
# ---------------------------------------------------------------------------------------------------
T0 = datetime(2026, 1, 1, tzinfo=UTC)
TEXTS = [
    "",
    "Done.",
    "please continue",
    "API Error: 500",
    "Operation interrupted: x",
    "[Request interrupted by user]",
    "[Request interrupted by user for tool use] now do y",
    "<task-notification>x</task-notification>",
    "<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>",
    "<subagent_notification>x</subagent_notification>",
    "Stop hook feedback:\n[x]: y",
    None,
]
event_st = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "user", "assistant", "assistant", "tool", "system"]),
        "kind": st.sampled_from(["message", "message", "turn_start", "turn_aborted", "context"]),
        "text": st.sampled_from(TEXTS),
        "finish_norm": st.sampled_from([None, "stop", "cancelled", "tool_calls"]),
        "n_tool_calls": st.sampled_from([0, 0, 1]),
        "ms": st.one_of(st.none(), st.integers(0, 10_000)),
        "ts_quality": st.sampled_from(["per_message", "per_message", "none"]),
        "initiator": st.sampled_from([None, None, None, "user", "agent"]),
    }
)


def _insert(con, sessions):
    rows = []
    for s, (fmt, events) in enumerate(sessions):
        for i, e in enumerate(events, 1):
            ts = T0 + timedelta(milliseconds=e["ms"]) if e["ms"] is not None else None
            kind = {"tool": "tool_result", "assistant": "message"}.get(e["role"], e["kind"])
            rows.append(
                (f"s{s}-{i}", fmt, f"/g/s{s}", i, i, 0, 1, f"s{s}", i, ts, ts, e["ts_quality"], e["role"], kind)
                + (e["text"], e["n_tool_calls"] if e["role"] == "assistant" else 0, e["finish_norm"])
                + (e["initiator"], "m", "{}")
            )
    con.executemany(
        "INSERT INTO events (event_id, source_format, file, line, last_line, part, n_records, session_id, seq, ts, "
        "ts_end, ts_quality, role, kind, text, n_tool_calls, finish_norm, initiator, model, is_sidechain, meta) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, false, ?)",
        rows,
    )


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sessions=st.lists(
        st.tuples(
            st.sampled_from(["claude_code", "codex", "copilot_cli", "openai_chat"]),
            st.lists(event_st, min_size=1, max_size=12),
        ),
        min_size=1,
        max_size=4,
    ),
    threshold=st.sampled_from([0.0, 2.0, 7.0]),
)
def test_sql_agrees_with_reference(con, sessions, threshold):
    con.execute("DELETE FROM events")
    _insert(con, sessions)
    label_events(con, config={})
    replay_boundaries(con, threshold)  # (its marks read the stored turn_boundaries_narrow: stored=True)
    assert variant_mismatches(con, threshold) == []
    # the marks read through the view turn_boundaries_by_seq (a connection without the stored table) are the same
    marked = "SELECT * FROM turn_boundary_variants_marked ORDER BY event_id"
    stored = con.execute(marked).fetchall()
    replay_variants(con, counts=False)
    assert con.execute(marked).fetchall() == stored


# ---------------------------------------------------------------------------------------------------
# the sweep: each variant swept like the router, compared event by event
# ---------------------------------------------------------------------------------------------------
@pytest.fixture
def golden_db(con):
    ingest_paths(con, [str(GOLDEN / c / "transcript.jsonl") for c in CASES])
    label_events(con, config={})
    replay_boundaries(con, 2.0)
    return con


def test_sweep_compares_each_variant_with_the_router(golden_db):
    res = run_sweep(golden_db, thresholds_grid(0, 10, 0.05), policies=ALL_POLICIES, bootstrap=50, seed=1)
    assert [v["policy"] for v in res.variants] == list(VARIANTS)
    # hand count from the golden expectations at 2 s: router 8 errors (2 auto_as_human + 6 human_as_auto);
    # marker-aware removes the 6 and adds the notification after the interrupt; notification-aware removes 2
    ref = {v["policy"]: v["at_reference"] for v in res.variants}
    assert ref["marker-aware"] == {"threshold": 2.0, "errors": 3, "removed": 6, "added": 1, "router_errors": 8}
    assert ref["notification-aware"] == {"threshold": 2.0, "errors": 6, "removed": 2, "added": 0, "router_errors": 8}
    assert ref["marker+notification"] == {"threshold": 2.0, "errors": 0, "removed": 8, "added": 0, "router_errors": 8}
    for v in res.variants:
        rec = res.recommendation[(v["policy"], "all")]
        assert v["threshold"] == rec["threshold"] and v["interval"] == rec["interval"] and rec["bootstrap"] == 50
        # the event-level recount agrees with the one-pass curve, and removed - added is the change in errors
        assert v["errors"] == rec["auto_as_human"] + rec["human_as_auto"]
        assert v["router_errors"] - v["errors"] == v["removed"] - v["added"]
    assert res.rule_advice.startswith("The single rule change that helps this corpus most is marker-aware")


def test_event_errors_match_the_curve_at_every_threshold(golden_db):
    from stallscan.sweep.core import load_rows

    t = thresholds_grid(0, 10, 0.5)
    res = run_sweep(golden_db, t, policies=ALL_POLICIES, bootstrap=0)
    rows = load_rows(golden_db)
    for c in res.curves:
        for i, thr in enumerate(t):
            assert event_errors(rows, c.policy, thr).sum() == c.all["fp"][i] + c.all["fn"][i], (c.policy, thr)


def test_router_alias_and_single_variant(golden_db):
    res = run_sweep(golden_db, thresholds_grid(0, 10, 0.5), policies=("router", "notification-aware"), bootstrap=0)
    assert [c.policy for c in res.curves] == ["router", "notification-aware"]
    assert [v["policy"] for v in res.variants] == ["notification-aware"]
    assert "notification-aware" in res.rule_advice


def test_advice_when_no_rule_helps():
    row = {"policy": "marker-aware", "group": "all", "router_cost": 3.0, "cost": 4.0, "router_errors": 3}
    row |= {"removed": 0, "added": 1, "router_threshold": 2.0, "threshold": 2.0, "interval": None}
    text = rule_advice([row, row | {"policy": "notification-aware", "cost": 3.0, "added": 0}])
    assert text.startswith("No single rule change beats the router order") and "2.00 s" in text
    assert rule_advice([]) is None


def test_variants_rebuilt_when_stale(golden_db):
    """A turn_boundaries replayed at another threshold without the variants (e.g. by an older build) is
    noticed: the sweep rebuilds turn_boundary_variants rather than mixing thresholds."""
    golden_db.execute("UPDATE turn_boundary_variants_marked SET threshold = 99")  # (the rows the view stores)
    assert {r[0] for r in golden_db.execute("SELECT DISTINCT threshold FROM turn_boundary_variants").fetchall()} == {
        2.0,
        99,
    }
    res = run_sweep(golden_db, np.array([2.0]), policies=ALL_POLICIES, bootstrap=0)
    assert {r[0] for r in golden_db.execute("SELECT DISTINCT threshold FROM turn_boundary_variants").fetchall()} == {
        2.0
    }
    assert res.variants[0]["at_reference"]["removed"] == 6


def test_cli_sweep_shows_variants_and_advice(tmp_path):
    """The commands in this process (typer's CliRunner: the same app, output and exit codes; the process is
    not the subject here)."""
    from typer.testing import CliRunner

    from stallscan.cli import app

    db = str(tmp_path / "v.duckdb")

    def run(*args):
        return CliRunner().invoke(
            app, list(args), prog_name="stallscan", env={"NO_COLOR": "1", "COLUMNS": "160", "STALLSCAN_CONFIG": None}
        )

    assert run("ingest", str(GOLDEN), "--db", db).exit_code == 0
    p = run("sweep", "--db", db, "--format", "json", "--bootstrap", "20", "--max", "10")
    assert p.exit_code == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [v["policy"] for v in doc["variants"]] == list(VARIANTS)
    assert doc["rule_advice"].startswith("The single rule change that helps this corpus most is marker-aware")
    table = run("sweep", "--db", db, "--bootstrap", "0", "--max", "10").stdout
    assert "Rule variants vs the router order" in table and "marker+notification" in table
    assert "The single rule change" in table
    one = json.loads(run("sweep", "--db", db, "--format", "json", "--policy", "router", "--bootstrap", "0").stdout)
    assert [r["policy"] for r in one["recommendations"]] == ["router", "labels"] and one["variants"] == []
    bad = run("sweep", "--db", db, "--policy", "markers")
    assert bad.exit_code != 0 and "marker-aware" in bad.stderr and bad.stdout == ""


def test_export_builds_the_variants_table(con, tmp_path):
    from stallscan.export import export_tables

    ingest_paths(con, [str(GOLDEN / "claude_notification_burst" / "transcript.jsonl")])
    export_tables(con, tmp_path / "out", ["turn_boundary_variants"])
    got = con.execute(
        f"SELECT count(*), count(*) FILTER (WHERE notif_decided_by = 'notification') "
        f"FROM read_parquet('{tmp_path / 'out' / 'turn_boundary_variants'}/**/*.parquet')"
    ).fetchone()
    assert got == (4, 2)


def test_the_narrow_rows_bin_into_the_wide_rows_cells(golden_db):
    """sweep_input_narrow.sql (the local router / gap-only sweep's rows: numbers only, in no set order) gives
    the cells of sweep_input.sql's rows, the same multiset of rows (the session index may differ, its order
    not), and the same sweep."""
    from stallscan.sweep.core import load_rows, sweep_cells, sweep_from_cells

    t = thresholds_grid(0, 10, 0.5)
    wide = sweep_cells(load_rows(golden_db, variants=False), t)
    narrow = sweep_cells(load_rows(golden_db, variants=False, narrow=True), t)
    assert set(narrow) == set(wide) and len(narrow["n"]) == len(wide["n"]) > 0

    def table(c: dict[str, np.ndarray]) -> np.ndarray:  # each row's columns, the session as its dense rank; sorted
        cols = [np.unique(c["sess"], return_inverse=True)[1]] + [
            np.asarray(c[k], float) for k in sorted(set(c) - {"sess", "grp"})
        ]
        rows = np.stack(cols, axis=1)
        return rows[np.lexsort(rows.T[::-1])]

    assert np.array_equal(table(narrow), table(wide))
    assert set(wide["grp"].tolist()) == set(narrow["grp"].tolist()) == {"all"}
    one, two = (sweep_from_cells(c, t, policies=("router", "gap-only"), bootstrap=50) for c in (wide, narrow))
    assert one.recommendation == two.recommendation
