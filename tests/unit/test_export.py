"""Parquet export: the same rows back from polars, pyarrow and DuckDB; partitions; text dropped on request."""

from __future__ import annotations

import duckdb
import polars as pl
import pyarrow.dataset as ds

from stallscan.export import export_tables
from stallscan.ingest.run import ingest_paths
from tests.helpers import SAMPLES, memory_copy


def _rows(con, sql):
    return sorted(con.execute(sql).fetchall(), key=str)


def test_events_roundtrip_three_readers(sample_ingested_file, tmp_path):
    con = memory_copy(sample_ingested_file)  # sample_logs ingested
    export_tables(con, tmp_path, ["events"], ["source_format", "date"])
    n = con.execute("SELECT count(*) FROM events").fetchone()[0]
    path = str(tmp_path / "events")
    ids_db = sorted(r[0] for r in con.execute("SELECT event_id FROM events").fetchall())
    pl_df = pl.read_parquet(f"{path}/**/*.parquet", hive_partitioning=True)
    pa_tbl = ds.dataset(path, format="parquet", partitioning="hive").to_table()
    duck = duckdb.connect()
    duck_ids = sorted(
        r[0]
        for r in duck.execute(
            f"SELECT event_id FROM read_parquet('{path}/**/*.parquet', hive_partitioning = true)"
        ).fetchall()
    )
    assert pl_df.height == pa_tbl.num_rows == n
    assert sorted(pl_df["event_id"].to_list()) == sorted(pa_tbl.column("event_id").to_pylist()) == duck_ids == ids_db
    # whole rows survive (text, tool call structs, timestamps)
    orig = con.execute("SELECT event_id, text, tool_calls, ts, finish_norm FROM events ORDER BY event_id").fetchall()
    back = duck.execute(
        f"SELECT event_id, text, tool_calls, ts, finish_norm FROM read_parquet('{path}/**/*.parquet', "
        "hive_partitioning = true) ORDER BY event_id"
    ).fetchall()
    assert back == orig
    assert {p.name for p in (tmp_path / "events").iterdir()} == {
        f"source_format={f}" for (f,) in con.execute("SELECT DISTINCT source_format FROM events").fetchall()
    }
    con.close()


def test_drop_text(con, tmp_path):
    ingest_paths(con, [str(SAMPLES / "hermes")])
    export_tables(con, tmp_path, ["events"], redact="drop")
    cols = pl.read_parquet(str(tmp_path / "events" / "data.parquet")).columns
    assert "text" not in cols and "tool_calls" not in cols and "event_id" in cols
