"""`turn_boundaries` is a view: the stored table turn_boundaries_narrow with the decisions computed
(queries/replay/turn_boundaries_view.sql).

* the view has the columns and types of the table it replaced, in the same order (the list below is the one
  stallscan/replay/boundaries.py documents);
* a database holding an older `turn_boundaries` table gets the view in its place, with the same rows;
* the view reads in a plain DuckDB connection (no stallscan macro), with the same rows.
"""

from __future__ import annotations

import re
from pathlib import Path

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


def _string_lists(path: str) -> set[tuple[str, ...]]:
    """The list literals of quoted strings in a query file (whitespace and line breaks ignored)."""
    text = (Path(__file__).resolve().parents[2] / "queries" / path).read_text()
    lists = re.findall(r"\[\s*('[^']*'(?:\s*,\s*'[^']*')*)\s*\]", text)
    return {tuple(re.findall(r"'([^']*)'", lst)) for lst in lists}


def test_the_code_lists_agree():
    """turn_boundaries_narrow stores some strings as 1-based codes into fixed lists: the INSERT encodes with the
    lists the view and the sweep's rows decode with."""
    stored = _string_lists("replay/turn_boundaries.sql")
    view = _string_lists("replay/turn_boundaries_view.sql")
    sweep = _string_lists("sweep/sweep_rows.sql")
    assert len(stored) >= 6
    assert stored <= view
    assert sweep <= view


def test_values_outside_the_code_lists_read_back(sample_db):
    """A value no code list holds (a kind, source format or time quality a reader might add later, a library
    rule's id) is kept beside the codes and read back by the view as it was: every row's event columns as
    `events` holds them, its label columns as `user_labels` does."""
    sample_db.execute(
        "UPDATE events SET kind = 'a_new_kind', source_format = 'a_new_format', ts_quality = 'per_turn' "
        "WHERE role IN ('user', 'tool') AND seq % 3 = 0"
    )
    stamps.forget(sample_db, "user_labels")
    stamps.forget(sample_db, "turn_boundaries")
    replay_boundaries(sample_db, 2.0, relabel=True)
    n_new, n_rules = sample_db.execute(
        "SELECT count(*) FILTER (WHERE kind = 'a_new_kind'), "
        "count(*) FILTER (WHERE origin_rule NOT IN ('default_human', 'tool_result')) FROM turn_boundaries"
    ).fetchone()
    assert n_new > 0 and n_rules > 0  # (the sample logs hold library rules' labels)
    cols = "session_id, seq, event_id, ts, initiator, source_format, role, kind, ts_quality"
    got = sample_db.execute(
        f"SELECT {cols}, origin, origin_rule, human_content, starts_request FROM turn_boundaries ORDER BY event_id"
    ).fetchall()
    want = sample_db.execute(
        f"SELECT {', '.join('e.' + c for c in cols.split(', '))}, l.origin, l.origin_rule, l.human_content, "
        "l.starts_request FROM events e JOIN user_labels l USING (event_id) ORDER BY event_id"
    ).fetchall()
    assert got == want


def test_default_labels_from_role_and_kind_match_the_labels(sample_db):
    """turn_boundaries.sql joins only the labels that are not one of the two structural defaults and reads those
    from the event's role and kind: the same rows as with every label in the join (complete=False, the path
    taken when the labels are not one per user / tool event), on logs that hold both defaults and others."""
    from stallscan.replay.scan_bounds import prev_replies
    from stallscan.store import sql

    replay_boundaries(sample_db, 2.0)
    want = fingerprint(sample_db, "turn_boundaries")
    shapes = dict(
        sample_db.execute(
            "SELECT CASE WHEN NOT human_content AND starts_request AND origin_rule IN ('tool_result', 'default_human') "
            "THEN origin_rule ELSE 'other' END AS shape, count(*) FROM user_labels GROUP BY ALL"
        ).fetchall()
    )
    assert min(shapes.get(k, 0) for k in ("tool_result", "default_human", "other")) > 0
    assert sql.query(sample_db, "replay/turn_boundaries_labels").fetchall() == [(True,)]
    for complete in (False, True):
        prev_replies(sample_db)
        sql.run(sample_db, "replay/label_structural")
        sql.run(sample_db, "replay/turn_boundaries", {"threshold": 2.0, "complete": complete})
        assert fingerprint(sample_db, "turn_boundaries") == want, complete


def test_an_event_without_its_label_is_left_out_as_before(sample_db):
    """With a user / tool event's label missing (the counts differ), the labels are joined as they were: that
    event has no row, every other row is unchanged."""
    replay_boundaries(sample_db, 2.0)
    gone = sample_db.execute(
        "SELECT event_id FROM turn_boundaries WHERE role = 'tool' AND origin_rule = 'tool_result' ORDER BY event_id"
    ).fetchone()[0]
    want = sample_db.execute(
        "SELECT count(*), coalesce(sum(hash(t::VARCHAR)::HUGEINT), 0) FROM turn_boundaries t WHERE event_id <> ?",
        [gone],
    ).fetchone()
    sample_db.execute("DELETE FROM user_labels_narrow WHERE event_id = ?", [gone])  # (the labels as stored)
    stamps.forget(sample_db, "turn_boundaries")
    replay_boundaries(sample_db, 2.0)
    assert (
        sample_db.execute(
            "SELECT count(*), coalesce(sum(hash(t::VARCHAR)::HUGEINT), 0) FROM turn_boundaries t"
        ).fetchone()
        == want
    )


def test_the_previous_reply_is_stored_as_its_seq(sample_db):
    """turn_boundaries_narrow stores the previous reply's seq in the session; the view's prev_event_id is that
    assistant event's id (NULL with no reply before); turn_boundaries_by_seq has the view's columns with prev_seq
    in prev_event_id's place and reads no events (the readers in the project that do not read prev_event_id)."""
    replay_boundaries(sample_db)
    assert [r[:2] for r in sample_db.execute("DESCRIBE turn_boundaries_by_seq").fetchall()] == [
        ("prev_seq", "INTEGER") if c == "prev_event_id" else (c, t) for c, t in COLUMNS
    ]
    bad = sample_db.execute(
        "SELECT count(*) FROM turn_boundaries b JOIN turn_boundaries_by_seq s USING (event_id) "
        "LEFT JOIN events e ON e.session_id = s.session_id AND e.seq = s.prev_seq "
        "WHERE b.prev_event_id IS DISTINCT FROM e.event_id OR (e.event_id IS NOT NULL AND e.role <> 'assistant')"
    ).fetchone()[0]
    assert bad == 0
    assert sample_db.execute("SELECT count(prev_event_id) FROM turn_boundaries").fetchone()[0] > 0
    plan = sample_db.execute("EXPLAIN SELECT * FROM turn_boundaries_by_seq").fetchall()[0][1]
    assert "events" not in plan and "JOIN" not in plan.upper()
