"""The guard log as data: `stallscan ingest` reads it as its own format, the report's Guard section says what
followed each block, the replay labels the guard's nudges automatic and counts them in the recovery curve,
and the excerpt is masked with the same secret patterns as the SQL redaction.
"""

from __future__ import annotations

import json
import subprocess
import sys

from stallscan.guard.log import excerpt
from stallscan.ingest.detect import detect_format
from stallscan.ingest.run import ingest_paths
from stallscan.replay.labels import label_events
from stallscan.replay.stalls import recovery, replay_stalls
from stallscan.report.build import build_report, render_report
from stallscan.report.registry import ORDER, ReportOptions
from stallscan.store.db import connect
from stallscan.store.redact import redact_sql
from tests.guard_helpers import NUDGE, ClaudeSession, run_hook


def _session_with_blocks(tmp_path):
    """A Claude session in enforce mode: block -> tool call; block x3 -> bound; each stop through the hook."""
    log = tmp_path / "logs" / "stallscan-guard.jsonl"
    s = ClaudeSession(tmp_path / "sess-1.jsonl")
    s.human("fix the failing test")
    s.tool_round()
    s.reply("Now I'll run the tests.")
    assert json.loads(run_hook(s.stop("Now I'll run the tests."), log, "--mode", "enforce")[0].stdout)
    s.feedback(NUDGE)
    s.tool_round()
    s.reply("Done: all tests pass.")
    run_hook(s.stop("Done: all tests pass."), log, "--mode", "enforce")
    s.human("and the changelog")
    s.tool_round()
    for _ in range(3):
        s.reply("Next, I'll edit CHANGELOG.md.")
        run_hook(s.stop("Next, I'll edit CHANGELOG.md."), log, "--mode", "enforce")
        s.feedback(NUDGE)
    s.reply("Next, I'll edit CHANGELOG.md.")
    run_hook(s.stop("Next, I'll edit CHANGELOG.md."), log, "--mode", "enforce")
    return s.path, log


def test_ingest_report_labels_and_recovery(tmp_path):
    transcript, log = _session_with_blocks(tmp_path)
    assert detect_format(log) == "stallscan_guard"
    con = connect(":memory:")
    ingest_paths(con, [str(transcript), str(log)], fmt="auto")
    rows = con.execute(
        "SELECT session_id, role, kind, meta ->> 'decision', CAST(meta ->> 'stalls' AS INTEGER) FROM events "
        "WHERE source_format = 'stallscan_guard' ORDER BY line"
    ).fetchall()
    assert [r[3] for r in rows] == ["block", "allow", "block", "block", "block", "allow"]
    assert [r[4] for r in rows] == [0, 0, 0, 1, 2, 3]
    assert {r[:3] for r in rows} == {("stallscan-guard:sess-1", "system", "guard_decision")}

    # the guard's nudges are automatic (labels) and nudges of the stalls before them (replay)
    label_events(con)
    labels = con.execute(
        "SELECT origin, origin_rule, count(*) FROM user_labels JOIN events USING (event_id) "
        "WHERE contains(text, '[stallscan guard]') GROUP BY ALL"
    ).fetchall()
    assert labels == [("automatic", "stallscan.guard_nudge", 4)]
    replay_stalls(con)
    nudged = con.execute(
        "SELECT round_kind, nudge_id, count(*) FROM rounds WHERE nudge_id IS NOT NULL GROUP BY ALL"
    ).fetchall()
    assert nudged == [("narrated_intent", "stallscan.guard", 4)]
    rec = recovery(con)["claude_code"]
    assert rec["episodes"] == 2 and rec["recovered"] == 1
    assert [p["reached"] for p in rec["curve"]][:1] == [2]

    # the report: decisions and what followed each block
    data = build_report(con, ReportOptions(bootstrap=10))
    g = data["guard"]
    assert g["records"] == 6 and g["decisions"] == {"block": 4, "allow": 2}
    assert g["after_block"] == {
        "tool_call": 1,
        "final": 0,
        "budget_spent": 1,
        "blocked_again": 2,
        "person_within_window": 0,
        "unknown": 0,
    }
    assert "guard" in ORDER and render_report(data)
    # a scope of the guard log's sessions (read through scope_sessions, not the whole-corpus branch) gives the
    # same figures; a scope without them none (the section's queries are then not run)
    only = build_report(con, ReportOptions(bootstrap=10, harness=["stallscan_guard"]))["guard"]
    assert only["records"] == 6 and only["after_block"] == g["after_block"] and only["blocks"] == g["blocks"]
    assert build_report(con, ReportOptions(bootstrap=10, harness=["claude_code"]))["guard"]["records"] == 0
    con.close()


def test_person_within_a_minute_is_a_likely_false_block(tmp_path):
    log = tmp_path / "g.jsonl"
    s = ClaudeSession(tmp_path / "t.jsonl")
    s.human("summarise the repo")
    s.tool_round()
    s.reply("Let me know if this is enough, otherwise I'll now dig into the tests.")
    s.reply("I'll now dig into the tests.")
    run_hook(s.stop("I'll now dig into the tests."), log, "--mode", "enforce")
    s.feedback(NUDGE)
    s.human("[Request interrupted by user]")
    con = connect(":memory:")
    ingest_paths(con, [str(s.path), str(log)], fmt="auto")
    data = build_report(con, ReportOptions(bootstrap=10))
    assert data["guard"]["after_block"]["person_within_window"] == 1
    con.close()


def test_excerpt_is_short_and_masked_like_the_sql_redaction():
    key = "sk-ant-" + "a1B2" * 10
    text = f"I deployed it with ANTHROPIC_API_KEY={key} and password=hunter22. Now I'll run the tests."
    ex = excerpt(text)
    assert len(ex) <= 80 and key not in ex and "hunter22" not in ex and ex.endswith("Now I'll run the tests.")
    con = connect(":memory:")
    for t in (text, f"token {key}", "password: s3cretvalue", "https://u:pw12345@host/x", text[-60:]):
        want = con.execute(f"SELECT {redact_sql('$t')}", {"t": " ".join(t.split())}).fetchone()[0]
        from stallscan.store.redact import mask

        assert mask(" ".join(t.split())) == want
    con.close()


def test_ingest_cli_reads_the_guard_log(tmp_path):
    _transcript, log = _session_with_blocks(tmp_path)
    db = tmp_path / "x.duckdb"
    p = subprocess.run(
        [sys.executable, "-m", "stallscan", "ingest", str(log), "--db", str(db)], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    p = subprocess.run(
        [sys.executable, "-m", "stallscan", "report", "--db", str(db), "--format", "json"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    g = json.loads(p.stdout)["guard"]
    # without the transcript, only the guard's own next records tell: the first block's tool call is unseen
    assert g["records"] == 6
    assert {k: v for k, v in g["after_block"].items() if v} == {"final": 1, "blocked_again": 2, "budget_spent": 1}
