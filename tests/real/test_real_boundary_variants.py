"""The router's rule variants on the real transcripts.

Expected cases are read from PROVENANCE.md (line numbers of interrupt markers, aborted turns, the prompts
typed after them, task notifications), never from the code under test. The SQL must agree with the
plain-Python reference on every real file, and the per-variant error table is printed for the closing note."""

from __future__ import annotations

import pytest

from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.labels import label_events
from stallscan.sweep.core import ALL_POLICIES, run_sweep, thresholds_grid
from tests.replay_checks import variant_mismatches

CC = "claude-code/marot-spotter/"


@pytest.fixture(scope="module")
def tb(db):
    label_events(db.con, config={})
    replay_boundaries(db.con, 2.0)
    return db


def row(tb, rel: str, line: int) -> dict:
    """turn_boundaries + turn_boundary_variants row of the user-role event covering `line` of a real file."""
    cur = tb.con.execute(
        "SELECT t.origin, t.origin_rule, t.decided_by, t.error, v.* FROM turn_boundaries t "
        "JOIN turn_boundary_variants v USING (event_id) JOIN events e USING (event_id) "
        "WHERE e.file = ? AND ? BETWEEN e.line AND e.last_line",
        [str(tb.root / rel), line],
    )
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    assert len(rows) == 1, (rel, line, rows)
    return rows[0]


def test_sql_agrees_with_reference_on_every_real_file(tb):
    assert variant_mismatches(tb.con, 2.0) == []


@pytest.mark.parametrize(
    "rel,marker_line,prompt_line,marker",
    [
        # PROVENANCE §2a: subagent.jsonl L69 interrupt marker, L71 human "create the beads" (115 s)
        (CC + "subagent.jsonl", 69, 71, "claude.interrupt_marker"),
        # PROVENANCE §2a: tool_heavy.jsonl L18 interrupt marker, L26 human (80 s)
        (CC + "tool_heavy.jsonl", 18, 26, "claude.interrupt_marker"),
        # PROVENANCE §12 Solsmile: L23 <turn_aborted> note, the human re-sends the prompt (L32, 24.3 s)
        ("codex/yashpunmiya-Solsmile/codex-session.jsonl", 23, 32, "codex.turn_aborted_note"),
    ],
)
def test_prompt_after_an_interrupt_is_a_new_human_turn(tb, rel, marker_line, prompt_line, marker):
    m = row(tb, rel, marker_line)
    assert (m["origin"], m["error"]) == ("automatic", "not_request")
    p = row(tb, rel, prompt_line)
    assert p["origin"] == "human"
    # the router reads it as the continuation of the interrupted tool call ...
    assert (p["decided_by"], p["error"]) == ("completion", "human_as_auto")
    # ... the marker rule as a new human turn; the notification rule does not touch it
    assert (p["marker_decided_by"], p["marker_id"], p["marker_error"]) == ("marker", marker, "none")
    assert (p["notif_error"], p["both_error"]) == ("human_as_auto", "none")


def test_notification_after_an_interrupt(tb):
    """PROVENANCE §2a 258c7280: L495 interrupt marker, then L496 a <task-notification> (automatic). The marker
    rule alone reads the notification as a human turn (an error it adds); the notification rule keeps it out."""
    n = row(tb, CC + "258c7280-ae70-4798-800f-63464d01a85d.jsonl", 496)
    assert (n["origin"], n["origin_rule"], n["error"]) == ("automatic", "claude.task_notification", "none")
    assert (n["marker_decided_by"], n["marker_error"]) == ("marker", "auto_as_human")
    assert (n["notif_decided_by"], n["notif_error"]) == ("notification", "none")
    assert (n["both_decided_by"], n["both_error"]) == ("notification", "none")


@pytest.fixture(scope="module")
def corpus(real_dir, h):
    """Every real file (all formats), as a user would ingest the folder."""
    con, _ = h.ingest_dirs([real_dir])
    label_events(con, config={})
    replay_boundaries(con, 2.0)
    yield con
    con.close()


def test_per_variant_error_table_on_all_real_files(corpus, capsys):
    res = run_sweep(corpus, thresholds_grid(0.0, 30.0, 0.05), policies=ALL_POLICIES, bootstrap=1000, seed=0)
    by = {v["policy"]: v for v in res.variants}
    assert set(by) == {"marker-aware", "notification-aware", "marker+notification"}
    for v in res.variants:
        assert v["router_errors"] - v["errors"] == v["removed"] - v["added"]
        assert v["interval"] is not None and v["interval"][0] <= v["threshold"] <= v["interval"][1] + 1e-9
    # PROVENANCE: at least the 3 prompts above follow an interrupt and are read as continuations by the router
    assert by["marker-aware"]["at_reference"]["removed"] >= 3
    # ... and the notification of 258c7280 L496 is read as human after the L495 marker: marker-aware adds it
    assert by["marker-aware"]["at_reference"]["added"] >= 1
    assert by["marker+notification"]["at_reference"]["added"] <= by["marker-aware"]["at_reference"]["added"] - 1
    assert res.rule_advice and res.rule_advice.endswith(".")
    with capsys.disabled():
        print("\nrule variants on the real files (errors vs the router order):")
        print(f"{'variant':21} {'best s':>7} {'95% interval':>13} {'errors':>6} {'removed':>7} {'added':>5}  @2s r/a")
        r = res.variants[0]
        print(f"{'router':21} {r['router_threshold']:7.2f} {_iv(r['router_interval']):>13} {r['router_errors']:6d}")
        for v in res.variants:
            ref = v["at_reference"]
            print(
                f"{v['policy']:21} {v['threshold']:7.2f} {_iv(v['interval']):>13} {v['errors']:6d} "
                f"{v['removed']:7d} {v['added']:5d}  {ref['removed']}/{ref['added']}"
            )
        print(res.rule_advice)


def _iv(iv) -> str:
    return f"{iv[0]:.2f}–{iv[1]:.2f}" if iv else "-"
