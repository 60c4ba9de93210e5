"""`turn_boundaries` is a view: the stored table turn_boundaries_narrow with the decisions computed
(queries/replay/turn_boundaries_view.sql).

* the view has the columns and types of the table it replaced, in the same order (the list below is the one
  stallscan/replay/boundaries.py documents);
* a database holding an older `turn_boundaries` table gets the view in its place, with the same rows;
* the view reads in a plain DuckDB connection (no stallscan macro), with the same rows.
"""

from __future__ import annotations

import duckdb

from stallscan.replay.boundaries import replay_boundaries
from stallscan.store import stamps
from tests.helpers import relation_kinds
from tests.replay_checks import fingerprint

COLUMNS = [
    ("session_id", "VARCHAR"),
    ("seq", "INTEGER"),
    ("event_id", "VARCHAR"),
    ("ts", "TIMESTAMP WITH TIME ZONE"),
    ("gap_s", "DOUBLE"),
    ("prev_reply_status", "VARCHAR"),
    ("initiator", "VARCHAR"),
    ("decided_by", "VARCHAR"),
    ("decision", "VARCHAR"),
    ("origin", "VARCHAR"),
    ("is_human_turn", "BOOLEAN"),
    ("error", "VARCHAR"),
    ("gap_only_decision", "VARCHAR"),
    ("gap_only_error", "VARCHAR"),
    ("header_only_decision", "VARCHAR"),
    ("header_only_error", "VARCHAR"),
    ("source_format", "VARCHAR"),
    ("role", "VARCHAR"),
    ("kind", "VARCHAR"),
    ("origin_rule", "VARCHAR"),
    ("human_content", "BOOLEAN"),
    ("starts_request", "BOOLEAN"),
    ("prev_event_id", "VARCHAR"),
    ("gap_raw_s", "DOUBLE"),
    ("ts_quality", "VARCHAR"),
    ("threshold", "DOUBLE"),
]


def test_the_view_has_the_former_tables_columns(sample_db):
    replay_boundaries(sample_db, 2.0)
    assert relation_kinds(sample_db, "turn_boundaries") == {"view"}
    assert relation_kinds(sample_db, "turn_boundaries_narrow") == {"table"}
    assert [(r[0], r[1]) for r in sample_db.execute("DESCRIBE turn_boundaries").fetchall()] == COLUMNS
    n_user_tool = sample_db.execute("SELECT count(*) FROM events WHERE role IN ('user', 'tool')").fetchone()[0]
    assert n_user_tool > 0
    assert sample_db.execute("SELECT count(*), count(DISTINCT event_id) FROM turn_boundaries").fetchone() == (
        n_user_tool,
        n_user_tool,
    )


def test_an_older_turn_boundaries_table_is_replaced_by_the_view(sample_db):
    replay_boundaries(sample_db, 2.0)
    want = fingerprint(sample_db, "turn_boundaries")
    variants = fingerprint(sample_db, "turn_boundary_variants")
    sample_db.execute("DROP VIEW turn_boundaries")
    sample_db.execute(
        "CREATE TABLE turn_boundaries AS SELECT 1 AS stale"
    )  # as a database written before the view holds
    stamps.forget(sample_db, "turn_boundaries")
    replay_boundaries(sample_db, 2.0)
    assert relation_kinds(sample_db, "turn_boundaries") == {"view"}
    assert fingerprint(sample_db, "turn_boundaries") == want
    assert fingerprint(sample_db, "turn_boundary_variants") == variants


def test_the_view_reads_without_stallscan(sample_db, tmp_path):
    replay_boundaries(sample_db, 2.0)
    want = fingerprint(sample_db, "turn_boundaries")
    sample_db.execute("CHECKPOINT")
    sample_db.close()
    plain = duckdb.connect(str(tmp_path / "d.duckdb"), read_only=True)
    try:
        assert fingerprint(plain, "turn_boundaries") == want
    finally:
        plain.close()
