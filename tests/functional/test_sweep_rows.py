"""The sweep's rows straight from the stored columns (the table macro sweep_rows(), queries/sweep/sweep_rows.sql)
say what the views say: for every scored row (a model request that is not a tool result), the router's step and
decision as the view turn_boundaries computes them, and each rule variant's as the view turn_boundary_variants
does; on sample_logs as replayed, and with a marker rule that marks every default-labelled prompt (so the
variants' stored rows are many). And replay_boundaries(summary=False) leaves out the counts, not the tables.
"""

from __future__ import annotations

from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.boundary_variants import replay_variants
from stallscan.store import sql

VARIANTS = ("marker", "notif", "both")

# the views' columns, each turned into what the sweep reads (the documented meaning: 'human' -> true, an
# undecided row -> false, no step -> '')
REFERENCE = """
SELECT b.session_id, b.seq, b.source_format, coalesce(b.is_human_turn, false) AS human,
       coalesce(b.decided_by, '') AS decided_by, coalesce(b.decision = 'human', false) AS decided_human,
       coalesce(b.gap_s, 'NaN'::DOUBLE) AS gap_s, b.prev_reply_status IS NULL AS first_in_session,
       coalesce(b.origin_rule, '') IN ('default_human', '') AS by_fallback,
       coalesce(v.marker_decided_by, '') AS marker_decided_by,
       coalesce(v.marker_decision = 'human', false) AS marker_decided_human,
       coalesce(v.notif_decided_by, '') AS notif_decided_by,
       coalesce(v.notif_decision = 'human', false) AS notif_decided_human,
       coalesce(v.both_decided_by, '') AS both_decided_by,
       coalesce(v.both_decision = 'human', false) AS both_decided_human
FROM turn_boundaries b JOIN turn_boundary_variants v USING (event_id)
WHERE b.starts_request AND b.origin <> 'tool_result'
"""


def _differences(con) -> tuple[int, int, int]:
    """(rows of the reference, rows only in the reference, rows only in sweep_rows())"""
    sql.run(con, "sweep/sweep_picks")
    sql.run(con, "sweep/sweep_rows")
    ours = "SELECT * FROM sweep_rows()"
    n = con.execute(f"SELECT count(*) FROM ({REFERENCE})").fetchone()[0]
    only_ref = con.execute(f"SELECT count(*) FROM (({REFERENCE}) EXCEPT ALL ({ours}))").fetchone()[0]
    only_ours = con.execute(f"SELECT count(*) FROM (({ours}) EXCEPT ALL ({REFERENCE}))").fetchone()[0]
    return n, only_ref, only_ours


def test_sweep_rows_equal_the_views(sample_db):
    replay_boundaries(sample_db)
    n, only_ref, only_ours = _differences(sample_db)
    assert n > 0 and (only_ref, only_ours) == (0, 0)


def test_sweep_rows_equal_the_views_when_every_prompt_is_marked(sample_db):
    replay_boundaries(sample_db)
    replay_variants(sample_db)  # (loads the rules: router_variant_rules)
    sample_db.execute("INSERT INTO router_variant_rules VALUES ('marker', 'every', 'rule', 'default_human', NULL)")
    sql.run(sample_db, "replay/turn_boundaries_variants_prev")  # (the previous replies the marks read: tbv_prev)
    sql.run(sample_db, "replay/turn_boundaries_variants")
    marked = sample_db.execute("SELECT count(*) FROM turn_boundary_variants_marked WHERE marker_seen").fetchone()[0]
    differs = sample_db.execute(
        "SELECT count(*) FROM turn_boundary_variants_marked m JOIN turn_boundaries b USING (event_id) "
        "WHERE m.marker_decision IS DISTINCT FROM b.decision"
    ).fetchone()[0]
    assert marked > 10 and differs > 0  # (the marker variant decides some rows otherwise than the router)
    n, only_ref, only_ours = _differences(sample_db)
    assert n > 0 and (only_ref, only_ours) == (0, 0)
    replay_variants(sample_db)  # (the rules as shipped again)


def test_summary_false_leaves_out_the_counts_only(sample_db):
    assert replay_boundaries(sample_db, 5.0, summary=False) == {}  # (sample_db_file is replayed at 2 s)
    n, thresholds = sample_db.execute("SELECT count(*), list(DISTINCT threshold) FROM turn_boundaries").fetchone()
    assert n > 0 and thresholds == [5.0]
    counts = replay_boundaries(sample_db, 5.0)
    assert sum(counts["decided_by"].values()) == sum(counts["error"].values()) == n
    assert replay_boundaries(sample_db, 5.0, summary=False) == {}  # (reused: only the stamps are read)
    assert sample_db.sql("SELECT count(*) FROM turn_boundaries").fetchall() == [(n,)]  # (no result left half read)
