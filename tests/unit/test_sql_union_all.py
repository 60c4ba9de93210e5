"""stallscan.store.sql.union_all: one INSERT of a query file's SELECT per parameter set gives the rows one
statement per set gives, each copy with its own parameters (a name that begins another's, $id and $idx,
renamed apart), and nothing for no sets."""

from __future__ import annotations

import duckdb

from stallscan.store import sql


def test_one_insert_equals_one_statement_per_set(tmp_path, monkeypatch) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "pick.sql").write_text(
        "-- rows of v matching $pattern, tagged\nSELECT $id::INTEGER AS id, $idx::VARCHAR AS idx, s\n"
        "FROM v WHERE regexp_matches(s, $pattern::VARCHAR)\n"
    )
    monkeypatch.setattr(sql, "queries_dir", lambda: tmp_path)
    sql.load.cache_clear()
    try:
        con = duckdb.connect()
        con.execute("CREATE TABLE v AS SELECT * FROM (VALUES ('apple'), ('banana'), ('cherry')) t(s)")
        con.execute("CREATE TABLE one (id INTEGER, idx VARCHAR, s VARCHAR)")
        con.execute("CREATE TABLE each (id INTEGER, idx VARCHAR, s VARCHAR)")
        sets = [
            {"id": 1, "idx": "a", "pattern": "an"},
            {"id": 2, "idx": "b", "pattern": "^c"},
            {"id": 3, "idx": "c", "pattern": "z"},
        ]
        sql.union_all(con, "one", "t/pick", sets)
        (select,) = sql.load("t/pick")
        for p in sets:
            con.execute(f"INSERT INTO each {select}", p)
        sql.union_all(con, "one", "t/pick", [])
        got, want = (sorted(con.execute(f"SELECT * FROM {t}").fetchall()) for t in ("one", "each"))
        assert got == want == [(1, "a", "banana"), (2, "b", "cherry")]
    finally:
        sql.load.cache_clear()
