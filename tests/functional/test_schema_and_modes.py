"""Schema evolution and file hygiene.

- a database from an older stallscan (older schema_version, a table missing a column) is refused with
  exit 5 and the advice to re-ingest with --rebuild, by every command; `ingest --rebuild` then gives the
  same tables as a fresh ingest; a step with a migration upgrades in place;
- the database, its spill directory and exports follow the user's umask, and nothing is written to $TMPDIR.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from stallscan import SCHEMA_VERSION
from stallscan.ingest.run import ingest_paths
from stallscan.store import schema_check
from stallscan.store.db import connect
from stallscan.store.errors import SchemaError
from tests.helpers import SAMPLES, memory_copy
from tests.hostile import snapshot

ENV = dict(os.environ, NO_COLOR="1", COLUMNS="200")


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "stallscan", *args], capture_output=True, text=True, env=ENV, timeout=300
    )


# the corpus of this module's databases: two formats of sample_logs (what a schema check or a rebuild does
# with the rows does not depend on how many formats they come from; the whole folder's ingest costs 6x)
CORPUS = [str(SAMPLES / "claude-code"), str(SAMPLES / "codex")]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> Path:
    """CORPUS ingested into a new database file, closed: the tests copy it."""
    path = tmp_path_factory.mktemp("schema") / "ingested.duckdb"
    con = connect(path)
    ingest_paths(con, CORPUS)
    con.close()
    return path


@pytest.fixture(scope="module")
def fresh(ingested) -> dict:
    """The snapshot of CORPUS ingested afresh into a new database (deterministic)."""
    con = memory_copy(ingested)
    out = snapshot(con)
    con.close()
    return out


def make_old_db(path: Path, ingested: Path, version: str | None, drop_column: str | None = "meta") -> None:
    """A database as an older stallscan left it: its version stamp, and events without a column (`ingested`:
    a database holding CORPUS, copied)."""
    shutil.copy(ingested, path)
    raw = duckdb.connect(str(path))
    if version is None:
        raw.execute("DROP TABLE stallscan_meta")
    else:
        raw.execute("UPDATE stallscan_meta SET value = ? WHERE key = 'schema_version'", [version])
    if drop_column:
        raw.execute("DROP VIEW IF EXISTS sessions")
        raw.execute(f"ALTER TABLE events DROP COLUMN {drop_column}")
    raw.close()


def test_older_database_is_refused_by_every_command_then_rebuilt(tmp_path, ingested, fresh):
    db = tmp_path / "old.duckdb"
    make_old_db(db, ingested, str(SCHEMA_VERSION - 1), "meta")
    for args in (["ingest", *CORPUS], ["report", "--format", "json"], ["sql", "SELECT count(*) FROM events"]):
        p = cli(*args, "--db", str(db))
        assert p.returncode == 5, (args, p.returncode, p.stderr)
        first, hint = p.stderr.splitlines()[:2]
        assert first.startswith(f"error: database {db} was written by stallscan schema {SCHEMA_VERSION - 1} ")
        assert "stale (events lacks meta)" in first
        assert hint.startswith("hint: re-ingest: stallscan ingest PATH --rebuild")
        assert "Traceback" not in p.stderr and p.stdout == ""
    p = cli("ingest", *CORPUS, "--db", str(db), "--rebuild", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["ingested"] == json.loads(p.stdout)["files"] > 0  # everything re-read
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT value FROM stallscan_meta WHERE key = 'schema_version'").fetchone()[0] == str(
        SCHEMA_VERSION
    )
    assert snapshot(con) == fresh
    con.close()


@pytest.mark.parametrize(
    "version, drop, why",
    [
        (None, "meta", "events lacks meta"),  # unversioned, short a column
        (str(SCHEMA_VERSION - 1), None, "rows written by it may be wrong"),  # older rows, same columns
        (str(SCHEMA_VERSION), "tokens_out", "events lacks tokens_out"),  # current stamp, drifted table
    ],
)
def test_stale_shapes_are_refused_in_process(tmp_path, version, drop, why, ingested, fresh):
    db = tmp_path / "old.duckdb"
    make_old_db(db, ingested, version, drop)
    for ro in (False, True):
        with pytest.raises(SchemaError, match=why) as info:
            connect(db, read_only=ro)
        assert info.value.exit_code == 5 and "--rebuild" in info.value.hint
    con = connect(db, rebuild=True)
    ingest_paths(con, CORPUS)
    assert snapshot(con) == fresh
    con.close()


def test_rebuild_drops_derived_tables_too(tmp_path, ingested):
    db = tmp_path / "d.duckdb"
    shutil.copy(ingested, db)  # CORPUS ingested
    con = connect(db)
    con.execute("CREATE TABLE user_labels AS SELECT 'stale' AS origin")
    con.close()
    con = connect(db, rebuild=True)
    assert con.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    assert (
        con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'user_labels'").fetchone()[0]
        == 0
    )
    con.close()


def test_step_with_a_migration_upgrades_in_place(tmp_path, monkeypatch, ingested):
    db = tmp_path / "m.duckdb"
    make_old_db(db, ingested, str(SCHEMA_VERSION - 1), drop_column=None)
    before = None
    raw = duckdb.connect(str(db), read_only=True)
    before = snapshot(raw)
    raw.close()
    monkeypatch.setitem(schema_check.MIGRATIONS, SCHEMA_VERSION - 1, "CREATE TABLE upgraded_marker AS SELECT 1 AS x")
    con = connect(db)
    assert con.execute("SELECT value FROM stallscan_meta WHERE key = 'schema_version'").fetchone()[0] == str(
        SCHEMA_VERSION
    )
    assert con.execute("SELECT x FROM upgraded_marker").fetchone()[0] == 1
    assert snapshot(con) == before
    con.close()
    # a migration that leaves a table short of a column is not enough: still refused
    make_old_db(tmp_path / "n.duckdb", ingested, str(SCHEMA_VERSION - 1), drop_column="meta")
    with pytest.raises(SchemaError, match="events lacks meta"):
        connect(tmp_path / "n.duckdb")


def test_newer_and_current_databases(tmp_path, ingested):
    """A current database opens again (read-write and read-only) with its rows and stamp; one stamped by a
    newer schema is refused with exit code 5, both ways, and left as it was."""
    db = tmp_path / "c.duckdb"
    shutil.copy(ingested, db)  # CORPUS ingested
    con = connect(db)
    before = snapshot(con)
    con.close()
    for read_only in (False, True):  # current: opens twice, same rows, same stamp
        con = connect(db, read_only=read_only)
        assert snapshot(con) == before
        stamp = con.execute("SELECT value FROM stallscan_meta WHERE key = 'schema_version'").fetchone()
        assert stamp == (str(SCHEMA_VERSION),)
        con.close()
    raw = duckdb.connect(str(db))
    raw.execute("UPDATE stallscan_meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION + 1)])
    raw.close()
    for read_only in (False, True):
        with pytest.raises(SchemaError, match="written by a newer stallscan") as info:
            connect(db, read_only=read_only)
        assert info.value.exit_code == 5 and "upgrade stallscan" in info.value.hint
    raw = duckdb.connect(str(db), read_only=True)
    assert raw.execute("SELECT value FROM stallscan_meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION + 1),
    )
    assert snapshot(raw) == before
    raw.close()


# ---------------------------------------------------------------------------------------------------
# file modes and temporary paths
# ---------------------------------------------------------------------------------------------------
def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in [root, *root.rglob("*")]}


# the console script's entry (stallscan.entry.main, what `python -m stallscan` runs) for each command in turn
IN_ONE_PROCESS = """
import json, sys
from stallscan.entry import main
for args in json.loads(sys.argv[1]):
    sys.argv = ["stallscan", *args]
    try:
        main()
    except SystemExit as exc:
        if exc.code:
            sys.exit(f"{args[0]}: exit {exc.code}")
"""


@pytest.mark.parametrize("umask", [0o077, 0o022])
def test_database_and_exports_follow_umask_and_skip_tmp(tmp_path, umask):
    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    env = dict(ENV, TMPDIR=str(private_tmp), TEMP=str(private_tmp), TMP=str(private_tmp))
    work = tmp_path / "work"
    work.mkdir()
    db = work / "s.duckdb"
    logs = SAMPLES / "codex"  # (one harness's files: modes do not depend on how much is read)
    commands = [
        ["ingest", str(logs), "--db", str(db)],
        ["report", "--db", str(db), "--format", "json"],
        ["export", str(work / "out"), "--db", str(db), "--redact", "mask", "--tables", "events,rejects"],
    ]
    p = subprocess.run(  # one process under the umask and $TMPDIR runs the three, as the console script does
        [sys.executable, "-c", IN_ONE_PROCESS, json.dumps(commands)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        preexec_fn=lambda: os.umask(umask),
    )
    assert p.returncode == 0, p.stderr
    modes = _modes(work)
    assert any(k.endswith(".parquet") for k in modes)
    for name, mode in modes.items():
        p = work / name if name != "." else work
        if p.is_dir():
            want = 0o777 & ~umask
        else:
            want = 0o666 & ~umask
        if name == ".":
            continue
        assert mode == want, (name, oct(mode), oct(want))  # exactly what the umask allows
        if umask == 0o077:
            assert mode & 0o077 == 0, name  # private: nothing for group / others
    assert list(private_tmp.iterdir()) == []  # nothing written to $TMPDIR


def test_spill_directory_sits_next_to_the_database(tmp_path):
    db = tmp_path / "x.duckdb"
    con = connect(db)
    assert con.execute("SELECT current_setting('temp_directory')").fetchone()[0] == str(db.resolve()) + ".tmp"
    con.close()


def test_schema_creation_is_one_transaction(tmp_path, monkeypatch):
    """A failure (or a kill) while a new database is being created leaves no unstamped tables behind."""
    import stallscan.store.db as dbmod
    from stallscan.store import sql as sqlmod

    path = tmp_path / "half.duckdb"
    real_run = sqlmod.run

    def run_then_fail(con, name, params=None):
        real_run(con, name, params)
        if name == "store/schema":
            raise KeyboardInterrupt  # stands for a kill between the tables and the version stamp

    monkeypatch.setattr(sqlmod, "run", run_then_fail)
    with pytest.raises(KeyboardInterrupt):
        dbmod.connect(path)
    monkeypatch.setattr(sqlmod, "run", real_run)
    con = dbmod.connect(path)  # would raise SchemaError ("schema 0 ... stale") before the fix
    assert con.execute("SELECT value FROM stallscan_meta WHERE key = 'schema_version'").fetchone()[0] == str(
        SCHEMA_VERSION
    )
    con.close()


def test_expected_columns_come_from_temp_tables_that_are_dropped(tmp_path):
    """The schema check's expected columns (store/schema.sql's base tables, made as temp tables on the
    checked connection, read-only too) are the columns a new database gets, and no temp table is left."""
    path = tmp_path / "x.duckdb"
    connect(path).close()
    for read_only in (False, True):
        con = connect(path, read_only=read_only)
        try:
            got = schema_check._expected_here(con)
            assert got is not None and set(got) == set(schema_check.BASE_TABLES)
            assert got == schema_check._columns(con, schema_check.BASE_TABLES)
            assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchone() == (0,)
        finally:
            con.close()
