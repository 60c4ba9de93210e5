"""queries/store/schema.sql stores the events' long texts, tool calls, random ids and `meta` uncompressed (DuckDB
would try dictionary + FSST on every segment it writes); a database written before `meta` was, with it compressed,
still opens and takes new rows (the schema check compares column names and types, not their storage)."""

from __future__ import annotations

import duckdb

from stallscan.store import sql
from stallscan.store.db import connect
from stallscan.store.version import SCHEMA_VERSION

UNCOMPRESSED = ("event_id", "text", "tool_calls", "tool_call_id", "message_id", "record_id", "parent_id", "meta")
_ROW = (
    "SELECT md5(i::VARCHAR), 'claude_code', '/logs/a.jsonl', i, i, 0, 1, 's' || (i % 7), i, NULL, NULL, 'per_message', "
    "'user', 'message', 'prompt ' || i, [], 0, NULL, NULL, NULL, NULL, NULL, md5(i::VARCHAR), NULL, NULL, NULL, false, "
    "NULL, NULL, json_object('isMeta', i % 3 = 0, 'version', '2.1.' || (i % 4)) FROM range(20000) t(i)"
)


def _compression(con: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    got: dict[str, set[str]] = {}
    for col, how in con.execute(
        "SELECT column_name, compression FROM pragma_storage_info('events') WHERE segment_type <> 'VALIDITY'"
    ).fetchall():
        got.setdefault(col, set()).add(how)
    return got


def test_meta_and_the_wide_columns_are_written_uncompressed(tmp_path):
    con = connect(tmp_path / "s.duckdb")
    con.execute(f"INSERT INTO events {_ROW}")
    con.execute("CHECKPOINT")
    got = _compression(con)
    assert got["source_format"] != {"Uncompressed"}  # (the narrow text columns keep DuckDB's choice)
    for col in UNCOMPRESSED:
        assert got[col] == {"Uncompressed"}, col
    assert con.execute("SELECT count(*), count(DISTINCT meta) FROM events").fetchone() == (20000, 8)
    con.close()


def test_a_database_with_meta_compressed_still_opens_and_writes(tmp_path):
    path = tmp_path / "old.duckdb"
    text = (sql.queries_dir() / "store" / "schema.sql").read_text()
    old = text.replace("meta           JSON USING COMPRESSION uncompressed", "meta           JSON")
    assert old != text
    raw = duckdb.connect(str(path))
    raw.execute(old)
    raw.execute("INSERT OR REPLACE INTO stallscan_meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
    raw.execute(f"INSERT INTO events {_ROW}")
    raw.execute("CHECKPOINT")
    assert "Uncompressed" not in _compression(raw)["meta"]
    raw.close()
    con = connect(path)  # (no SchemaError: the same columns and types)
    con.execute(f"INSERT INTO events {_ROW.replace('range(20000)', 'range(20000, 20010)')}")
    assert con.execute("SELECT count(*), max(line) FROM events").fetchone() == (20010, 20009)
    con.close()
