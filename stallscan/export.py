"""Export tables to parquet (zstd) for notebooks: the same rows back from polars, pyarrow and DuckDB.

The export is also the hand-off to other engines (stallscan.spark): every export writes a manifest,
`_stallscan_layout.json`, naming LAYOUT_VERSION, the schema version, and per table its columns with
DuckDB types, its partition columns and row count. Partitioning by `session_bucket` (a stable bucket of
session_id: md5 -> 0..buckets-1) keeps every session inside one partition; the manifest counts, for the
events, the sessions another partitioning (e.g. `date`) splits across partitions (`sessions_split`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import duckdb

from stallscan import export_files as files
from stallscan.replay.stall_rules import NARRATED_BOUND
from stallscan.store.errors import InputError, StallscanError
from stallscan.store.version import SCHEMA_VERSION, __version__

BASE = ("events", "files", "skipped", "rejects")
LAYOUT_VERSION = 1  # bump on any change a reader of an older export would misread
LAYOUT_FILE = "_stallscan_layout.json"
DEFAULT_BUCKETS = 64
SESSION_BUCKET = "(md5_number(session_id) % {b})::INTEGER"  # stable across DuckDB versions (md5, not hash())
# what `report --from-parquet` reads (rounds was missing: a default export could not be reported from)
DEFAULT_TABLES = ("events", "user_labels", "turn_boundaries", "rounds", "stalls", "turns")
TEXT_COLUMNS = {
    "events": ("text", "tool_calls"),
    "rejects": ("excerpt",),
    "stalls": ("excerpt",),
    "turn_boundaries": ("excerpt",),
}


@dataclass
class ExportResult:
    table: str
    path: str
    rows: int
    partitioned_by: list[str]
    sessions_split: int | None = None  # sessions whose rows landed in more than one partition


def _registry() -> Any:
    """stallscan.replay.registry with every stage's entries registered (the sweep's register on import)."""
    import stallscan.sweep.bins
    import stallscan.sweep.core  # noqa: F401
    from stallscan.replay import registry

    return registry


def available_tables() -> list[str]:
    return list(BASE) + [t for e in _registry().REGISTRY.values() if e.export for t in e.outputs]


def ensure_table(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """A derived table present and up to date (stallscan.replay.registry.ensure); base tables as they are."""
    if table not in BASE:
        _registry().ensure(con, table)


def export_tables(
    con: duckdb.DuckDBPyConnection,
    out_dir: str | os.PathLike[str],
    tables: list[str],
    partition_by: list[str] | None = None,
    redact: str = "none",
    buckets: int = DEFAULT_BUCKETS,
    scoped: bool = False,
) -> list[ExportResult]:
    """Write each table as parquet under out_dir/<table>/ (hive partitions when partition_by is given).

    scoped: only the rows of the sessions in the temp table `scope_sessions` (the shared filters --harness,
    --model, --since, --until; queries/report/scoped_events.sql), for the tables with a session_id (`files`,
    `rejects` and `sweep` have none and are written whole).

    redact: "none"; "mask" (secret shapes in text columns replaced, see stallscan.redact); "drop" (text
    columns removed). Partition columns a table lacks are skipped for that table; `date` is the UTC day of `ts`;
    `session_bucket` is a stable bucket (0..buckets-1) of session_id, so a session never spans partitions.
    """
    if buckets < 1:
        raise StallscanError(f"--buckets must be >= 1, not {buckets}", hint="e.g. --buckets 64")
    tables = list(dict.fromkeys(tables))  # (a table named twice is written once)
    unknown = [t for t in tables if t not in available_tables()]
    if unknown:
        raise StallscanError(f"unknown table(s): {', '.join(unknown)}", hint="one of: " + ", ".join(available_tables()))
    if redact not in ("none", "mask", "drop"):
        raise StallscanError(f"unknown redaction {redact!r}", hint="none, mask or drop")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(
            f"cannot export into {out_dir}: it is a file, not a folder",
            hint="name a folder (created if missing), e.g. stallscan export out/",
        )
    if not out.parent.exists():
        raise InputError(f"cannot export into {out_dir}: folder {out.parent} does not exist", hint="create it first")
    for table in tables:
        ensure_table(con, table)
    if partition_by:
        have = {"date", "session_bucket"} | {r[0] for t in tables for r in con.execute(f"DESCRIBE {t}").fetchall()}
        bad = [p for p in partition_by if p not in have]
        if bad:
            raise StallscanError(
                f"unknown --partition-by column {bad[0]!r} (not in {', '.join(tables)})",
                hint="e.g. source_format, session_bucket (keeps each session in one partition) or date (the UTC day of ts)",
            )
    out.mkdir(parents=True, exist_ok=True)
    from stallscan.store.stamps import events_version

    files.clear_leftovers(out)  # staging folders of exports that were killed
    gen = files.generation()
    stage = out / f"{files.NEW}{gen}"
    stage.mkdir()
    manifest: dict[str, Any] = {
        "layout_version": LAYOUT_VERSION,
        "schema_version": SCHEMA_VERSION,
        "writer": f"stallscan {__version__}",
        "generation": gen,
        "buckets": int(buckets),
        "session_bucket": SESSION_BUCKET.format(b=int(buckets)),
        "tables": {},
    }
    version = events_version(con)
    try:
        results = _stage_tables(con, tables, partition_by, redact, buckets, stage, manifest, version, scoped)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)  # (a killed process leaves it: the next export removes it)
        raise
    _swap(out, stage, manifest)
    return results


def _stage_tables(
    con: duckdb.DuckDBPyConnection,
    tables: list[str],
    partition_by: list[str] | None,
    redact: str,
    buckets: int,
    stage: Path,
    manifest: dict[str, Any],
    version: int | None,
    scoped: bool = False,
) -> list[ExportResult]:
    """Write each table under stage/<table>/ and describe it in the manifest."""
    out, gen, results = stage.parent, manifest["generation"], []
    for n, table in enumerate(tables, 1):
        cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
        select = _select(table, cols, redact)
        where = ""
        if scoped and "session_id" in cols:
            where = " WHERE session_id IN (SELECT session_id FROM scope_sessions)"
            select = f"SELECT * FROM ({select}){where}"
        parts = [
            p
            for p in (partition_by or [])
            if p in cols or (p == "date" and "ts" in cols) or (p == "session_bucket" and "session_id" in cols)
        ]
        if parts and "date" in parts:
            select = f"SELECT *, CAST(ts AS DATE) AS date FROM ({select})"
        if parts and "session_bucket" in parts:
            select = f"SELECT *, {SESSION_BUCKET.format(b=int(buckets))} AS session_bucket FROM ({select})"
        target = stage / table  # built beside the target, swapped in whole once every table is written
        if parts:
            con.execute(
                f"COPY ({select}) TO '{_q(str(target))}' (FORMAT parquet, COMPRESSION zstd, "
                f"PARTITION_BY ({', '.join(parts)}))"
            )
            target.mkdir(exist_ok=True)  # (no rows: no partition folder was written)
        else:
            target.mkdir(parents=True, exist_ok=True)
            con.execute(f"COPY ({select}) TO '{_q(str(target / 'data.parquet'))}' (FORMAT parquet, COMPRESSION zstd)")
        rows = cast("tuple[int]", con.execute(f"SELECT count(*) FROM {table}{where}").fetchall()[0])[0]
        split: int | None = None
        if "session_id" in cols:
            split = 0
            if parts:
                split = con.execute(
                    f"SELECT count(*) FROM (SELECT session_id FROM ({select}) GROUP BY session_id "
                    f"HAVING count(DISTINCT ({', '.join(parts)})) > 1)"
                ).fetchall()[0][0]
        results.append(ExportResult(table, str(out / table), rows, parts, split))
        manifest["tables"][table] = {
            "columns": {r[0]: r[1] for r in con.execute(f"DESCRIBE {table}").fetchall()},
            "partitioned_by": parts,
            "rows": rows,
            "scoped": bool(where),  # only the sessions the shared filters kept (stallscan export --harness ...)
            "sessions_split": split,
            "redact": redact,
            "generation": gen,
            "events_version": version,
            "files": files.describe(target),
        }
        files.failpoint("staged", n)
    return results


def _swap(out: Path, stage: Path, manifest: dict[str, Any]) -> None:
    """Swap the staged tables in, then write the manifest, merged into the old one (exports of other tables
    into the same folder keep theirs). The old manifest goes first: between the swaps the folder has none
    (a reader that checks it refuses), never one that describes files no longer there."""
    path = out / LAYOUT_FILE
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = {}
    kept = {t: e for t, e in (old.get("tables") or {}).items() if t not in manifest["tables"] and (out / t).exists()}
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    trash = out / f"{files.OLD}{manifest['generation']}"
    for n, table in enumerate(manifest["tables"], 1):
        files.swap_in(out, stage, trash, table)
        files.failpoint("swapped", n)
    files.write_manifest(out, {**manifest, "tables": {**kept, **manifest["tables"]}}, LAYOUT_FILE)
    files.failpoint("manifest", 1)
    shutil.rmtree(trash, ignore_errors=True)
    shutil.rmtree(stage, ignore_errors=True)


def _select(table: str, cols: list[str], redact: str) -> str:
    text_cols = [c for c in TEXT_COLUMNS.get(table, ()) if c in cols]
    if redact == "none" or not text_cols:
        return f"SELECT * FROM {table}"
    if redact == "drop":
        return f"SELECT * EXCLUDE ({', '.join(text_cols)}) FROM {table}"
    from stallscan.store.redact import redact_sql  # masks secret shapes inside DuckDB

    repl = []
    for c in text_cols:
        if c == "tool_calls":
            repl.append(
                f"list_transform(tool_calls, lambda t: {{'id': t.id, 'name': t.name, "
                f"'arguments': {redact_sql('t.arguments')}}}) AS tool_calls"
            )
        else:
            repl.append(f"{redact_sql(c)} AS {c}")
    return f"SELECT * REPLACE ({', '.join(repl)}) FROM {table}"


def _q(s: str) -> str:
    return s.replace("'", "''")


# ---------------------------------------------------------------------------------------------- reading back
REPLAYED = ("user_labels", "turn_boundaries", "rounds", "stalls", "turns")
PSEUDO_COLUMNS = ("date", "session_bucket")  # partition columns export adds; not part of any table


def connect_parquet(
    out_dir: str | os.PathLike[str], events: str | os.PathLike[str] | None = None
) -> tuple[duckdb.DuckDBPyConnection, dict[str, Any]]:
    """An in-memory stallscan database holding parquet outputs as tables: the replayed tables of
    `out_dir` (a `stallscan spark replay` OUTPUT or an export folder), `events` from `events` (else
    out_dir/events/, else the Spark run's input when it is a local folder), files/skipped/rejects when
    exported. Returns (connection, manifest): the manifest holds threshold / retry_bound / replay_info when
    a Spark run wrote it."""
    from stallscan.store.db import connect

    root = Path(out_dir)
    manifest: dict[str, Any] = {}
    layout: dict[str, Any] | None = None
    for name in ("_stallscan.json", LAYOUT_FILE):
        with contextlib.suppress(OSError, ValueError):
            got = json.loads((root / name).read_text(encoding="utf-8"))
            manifest = {**got, **manifest}
            layout = got if name == LAYOUT_FILE else layout
    missing = [t for t in REPLAYED if not _parquet_files(root / t)]
    if missing:
        raise StallscanError(
            f"{root} lacks replayed table(s): {', '.join(missing)}",
            hint="point at the OUTPUT of `stallscan spark replay`, or export those tables (the default "
            f"--tables of `stallscan export` are these: {', '.join(DEFAULT_TABLES)})",
        )
    ev = Path(events) if events else root / "events"
    if layout is not None or not (root / "_stallscan.json").exists():  # an export folder: check its manifest
        read = [*REPLAYED, *(t for t in ("files", "skipped", "rejects") if _parquet_files(root / t))]
        files.verify(root, layout, read + (["events"] if ev == root / "events" and _parquet_files(ev) else []))
    if not _parquet_files(ev) and not events and str(manifest.get("input", "")).find("://") < 0:
        ev = Path(str(manifest.get("input", "")).removeprefix("file:"))
    if not _parquet_files(ev):
        raise StallscanError(
            f"no events parquet found for {root} (looked in {ev})", hint="pass --events PATH (the replay's INPUT)"
        )
    con = connect(":memory:")
    cols = [r[0] for r in con.execute("DESCRIBE events").fetchall()]
    con.execute(
        f"INSERT INTO events BY NAME SELECT {', '.join(cols)} FROM read_parquet($p, hive_partitioning = true)",
        {"p": _glob(ev)},
    )
    for t in REPLAYED:
        src = f"read_parquet('{_q(_glob(root / t))}', hive_partitioning = true, union_by_name = true)"
        drop = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {src}").fetchall() if r[0] in PSEUDO_COLUMNS]
        exclude = f"EXCLUDE ({', '.join(drop)})" if drop else ""
        con.execute(f"CREATE OR REPLACE TABLE {t} AS SELECT * {exclude} FROM {src}")
    # the columns of rounds the stall sections read under these names (stallscan.replay.stalls: a replay stores
    # rounds_core, its sparse columns apart, and reads the views rounds_narrow and rounds over them and events)
    con.execute(
        "CREATE OR REPLACE VIEW rounds_narrow AS "
        "SELECT * EXCLUDE (event_id, ts, model, finish_reason, finish_eff, text_chars, excerpt) FROM rounds"
    )
    # (rounds_core's codes 0, "no code", but for the after_tool_round flag: its readers take every string from
    # `uncoded`, as a replay stores a value its code lists do not hold; queries/replay/stall_rounds.sql)
    con.execute(
        "CREATE OR REPLACE VIEW rounds_core AS SELECT session_id, seq, turn_id, round_in_turn, n_tool_calls, "
        "after_tool_round::INTEGER << 24 AS codes, NULL::INTEGER AS hit_key, json_object('source_format', source_format, "
        "'provider', provider, 'round_kind', round_kind, 'signature', signature)::VARCHAR AS uncoded FROM rounds"
    )
    # (the readers of turn_boundaries that do not read prev_event_id read turn_boundaries_by_seq, which a replay
    # makes: the same columns with the reply's seq in the session, prev_seq, in its place; here found once from
    # the events by the reply's id; queries/replay/turn_boundaries_view.sql)
    con.execute(
        "CREATE OR REPLACE TABLE turn_boundaries_by_seq AS SELECT b.* EXCLUDE (prev_event_id), p.seq AS prev_seq "
        "FROM turn_boundaries b LEFT JOIN (SELECT event_id, seq FROM events WHERE role = 'assistant') p "
        "ON p.event_id = b.prev_event_id"
    )
    # (likewise turns_by_seq, the view the readers of turns read that read neither event id: the turn's delivered
    # reply as its seq in the session; queries/replay/stall_turns_by_seq_view.sql)
    con.execute(
        "CREATE OR REPLACE TABLE turns_by_seq AS SELECT t.* EXCLUDE (start_event_id, delivered_event_id), "
        "d.seq AS delivered_seq FROM turns t "
        "LEFT JOIN (SELECT event_id, seq FROM events WHERE role = 'assistant') d ON d.event_id = t.delivered_event_id"
    )
    for t in ("files", "skipped", "rejects"):
        if _parquet_files(root / t):
            con.execute(f"INSERT INTO {t} BY NAME SELECT * FROM read_parquet($p)", {"p": _glob(root / t)})
    info = manifest.get("replay_info") or {}
    retry = info.get("retry_bound", manifest.get("retry_bound"))
    if retry is None:
        retry = con.execute("SELECT max(episode_nudges) FROM stalls").fetchall()[0][0]  # unknown: at least this
    from stallscan.replay import stall_data

    stall_data.install(con)  # the signature / prompt tables the stall sections join with
    con.execute(
        "CREATE OR REPLACE TABLE stall_replay_info AS SELECT $r::INTEGER AS retry_bound, $n::INTEGER AS "
        "narrated_bound, $s AS segmentation, $v AS data_version, now() AS replayed_at",
        {
            "r": retry,
            "n": info.get("narrated_bound", NARRATED_BOUND),
            "s": info.get("segmentation", "labels"),
            "v": info.get("data_version", stall_data.load().version),
        },
    )
    if "threshold" not in manifest:
        manifest["threshold"] = con.execute("SELECT any_value(threshold) FROM turn_boundaries").fetchall()[0][0]
    manifest["retry_bound"] = retry
    return con, manifest


def _parquet_files(p: Path) -> bool:
    return (p.is_dir() and any(p.rglob("*.parquet"))) or (p.is_file() and p.suffix == ".parquet")


def _glob(p: Path) -> str:
    return str(p / "**" / "*.parquet") if p.is_dir() else str(p)
