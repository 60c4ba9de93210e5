"""The one-file ingest's bookkeeping cuts (docs/benchmarks.md "one28"): the run's tally (events, lines, files with
events, rejects and the skipped kinds from one statement) equals the tables' own counts; unknown_shapes.sql runs only
when a skipped kind of the run is an unknown shape; a flush of new files writes their rows by plain INSERT and a
file read again (grown) has its row replaced; parse_views is read once a batch."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from stallscan.ingest.run import ingest_paths
from stallscan.store import sql
from stallscan.store.db import connect
from tests.helpers import claude_line

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def _spy(monkeypatch) -> list[str]:
    """The text of every statement the connections run (execute and the query files' names)."""
    seen: list[str] = []
    real_execute = duckdb.DuckDBPyConnection.execute
    real_query = sql.query

    def execute(self, q, *a, **k):
        seen.append(str(q))
        return real_execute(self, q, *a, **k)

    def query(con, name, *a, **k):
        seen.append(name)
        return real_query(con, name, *a, **k)

    monkeypatch.setattr(duckdb.DuckDBPyConnection, "execute", execute)
    monkeypatch.setattr(sql, "query", query)
    return seen


def test_the_tally_equals_the_tables_counts(tmp_path):
    con = connect(str(tmp_path / "t.duckdb"), macros=False)
    try:
        res = ingest_paths(con, [str(SAMPLES)])
        want = dict(con.execute("SELECT kind, count(*) FROM skipped GROUP BY ALL").fetchall())
        assert res.skipped == want and sum(want.values()) > 0
        assert res.events == con.execute("SELECT count(*) FROM events").fetchall()[0][0] > 0
        assert res.rejects == con.execute("SELECT count(*) FROM rejects").fetchall()[0][0]
        assert res.lines == con.execute("SELECT sum(n_lines) FROM files").fetchall()[0][0]
        assert res.files_with_events == con.execute("SELECT count(DISTINCT file) FROM events").fetchall()[0][0]
    finally:
        con.close()


def _session(path: Path, records: list[dict]) -> None:
    base = {"sessionId": "d1", "version": "2.1.180", "isSidechain": False}
    path.write_text("\n".join(json.dumps(base | r) for r in records) + "\n")


def test_unknown_shapes_asked_only_when_the_run_skipped_one(tmp_path, monkeypatch):
    seen = _spy(monkeypatch)
    plain, drift = tmp_path / "plain", tmp_path / "drift"
    plain.mkdir()
    drift.mkdir()
    (plain / "s.jsonl").write_text(claude_line("user", 1) + "\n" + claude_line("assistant", 2) + "\n")
    _session(
        drift / "s.jsonl",
        [
            {
                "type": "user",
                "uuid": "u1",
                "timestamp": "2026-09-01T10:00:00Z",
                "message": {"role": "user", "content": "hi"},
            },
            {"type": "task-ledger", "uuid": "t1", "timestamp": "2026-09-01T10:00:01Z", "entries": []},
        ],
    )
    con = connect(str(tmp_path / "u.duckdb"), macros=False)
    try:
        res = ingest_paths(con, [str(plain)])
        assert res.events == 2 and res.unknown_shapes == [] and "ingest/unknown_shapes" not in seen
        res = ingest_paths(con, [str(drift)])
        assert "ingest/unknown_shapes" in seen
        assert res.unknown_shapes == [
            {"format": "claude_code", "version": "2.1.180", "shape": "type task-ledger", "records": 1, "files": 1}
        ]
    finally:
        con.close()


def test_new_files_by_insert_a_grown_file_by_upsert_parse_views_read_once(tmp_path, monkeypatch):
    seen = _spy(monkeypatch)
    f = tmp_path / "g.jsonl"
    f.write_text(claude_line("user", 1) + "\n")
    con = connect(str(tmp_path / "g.duckdb"), macros=False)
    try:
        ingest_paths(con, [str(f)])
        writes = [s for s in seen if "INTO files SELECT" in s]
        assert writes == ["INSERT INTO files SELECT *, now() FROM _files_rows"]
        assert sum("getvariable('parse_views')" in s for s in seen) == 1
        seen.clear()
        with f.open("a") as out:
            out.write(claude_line("assistant", 2) + "\n")
        ingest_paths(con, [str(f)])
        writes = [s for s in seen if "INTO files SELECT" in s]
        assert writes == ["INSERT OR REPLACE INTO files SELECT *, now() FROM _files_rows"]
        row = con.execute("SELECT n_lines, n_events, status FROM files WHERE path = ?", [str(f)]).fetchall()
        assert row == [(2, 2, "ok")]
        assert con.execute("SELECT count(*) FROM files").fetchall()[0][0] == 1
    finally:
        con.close()
