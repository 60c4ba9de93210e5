"""Export replaces what it wrote before, whole, and a killed export leaves no mix (issue 24).

A re-export with other partitioning, a re-export after the data shrank, SIGKILLs at every step of an export
($STALLSCAN_EXPORT_FAILPOINT stops it at a named point and says so on stderr: no timing), and
`report --from-parquet` checking the manifest. The expected counts come from the databases the exports were
written from; the read-back goes through pyarrow, polars and DuckDB (with and without hive partitioning).
Real processes (`python -m stallscan ...`) where the process is the subject: the export that is killed, and
one export and parquet report end to end; the other commands run the typer app in this process (the same
command, exit code and output without a Python start-up each).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.dataset as ds
import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from stallscan.export import LAYOUT_FILE
from stallscan.export_files import FAILPOINT_ENV
from tests.helpers import SAMPLES

TABLES = ("events", "user_labels", "turn_boundaries", "rounds", "stalls", "turns")


# the reports here compare two inputs under the same options, or only need to succeed: few resamples
FAST = ("--bootstrap", "20")


def process(*args: str) -> subprocess.CompletedProcess[str]:
    """The command in a real `python -m stallscan` process."""
    return subprocess.run([sys.executable, "-m", "stallscan", *args], capture_output=True, text=True)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command run by the typer app in this process."""
    r = CliRunner().invoke(app, list(args), prog_name="stallscan")
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)


def db_counts(db: Path) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        con.close()


def read_counts(folder: Path, table: str) -> set[int]:
    """Rows of one exported table as each reader sees it (one value when they all agree)."""
    path = folder / table
    glob = f"{path}/**/*.parquet" if any(p.is_dir() for p in path.iterdir()) else f"{path}/*.parquet"
    duck = duckdb.connect()
    return {
        ds.dataset(str(path), format="parquet", partitioning="hive").count_rows(),
        pl.scan_parquet(glob, hive_partitioning=True).select(pl.len()).collect().item(),
        duck.execute(f"SELECT count(*) FROM read_parquet('{glob}', hive_partitioning = true)").fetchone()[0],
        duck.execute(f"SELECT count(*) FROM read_parquet('{glob}', hive_partitioning = false)").fetchone()[0],
    }


# the folders of the small database: three of sample_logs' (four formats), with events, turns and stalls
SMALL = ("claude-code", "cline", "codex")


@pytest.fixture(scope="module")
def dbs(tmp_path_factory, sample_db_file):
    """big: every sample log, replayed (the session's sample_db_file, copied); small: three of its folders
    (SMALL: fewer events, turns and stalls), ingested here."""
    base = tmp_path_factory.mktemp("dbs")
    small_logs = base / "small"
    for kind in SMALL:
        shutil.copytree(SAMPLES / kind, small_logs / kind)
    out = {}
    for name in ("big", "small"):
        db = base / f"{name}.duckdb"
        if name == "big":
            shutil.copy(sample_db_file, db)
        else:
            assert cli("ingest", str(small_logs), "--db", str(db)).returncode == 0
        # a first export derives what is not derived yet, so the counts below are what every export writes
        assert cli("export", str(base / f"{name}-warm"), "--db", str(db)).returncode == 0
        out[name] = (db, db_counts(db))
    assert all(0 < out["small"][1][t] < out["big"][1][t] for t in ("events", "turns", "stalls"))
    return out


def assert_export_is(folder: Path, counts: dict[str, int]) -> None:
    for t in TABLES:
        assert read_counts(folder, t) == {counts[t]}, t
    manifest = json.loads((folder / LAYOUT_FILE).read_text())
    assert {t: manifest["tables"][t]["rows"] for t in TABLES} == counts
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".")]  # no staging left behind


def test_default_export_reports_from_parquet(tmp_path, dbs):
    db, counts = dbs["big"]
    run = process("export", str(tmp_path / "x"), "--db", str(db))
    assert run.returncode == 0, run.stderr
    assert_export_is(tmp_path / "x", counts)  # rounds is among the default tables
    rep = process("report", "--from-parquet", str(tmp_path / "x"), "--format", "json", *FAST)
    assert rep.returncode == 0, rep.stderr
    direct = cli("report", "--db", str(db), "--format", "json", *FAST)
    pick = lambda r: json.loads(r.stdout)["headline"]["items"]  # (the examples name file lines: db only)
    assert pick(rep) == pick(direct)


@pytest.mark.parametrize("first,second", [("source_format", "session_bucket"), ("session_bucket", ""), ("", "date")])
def test_reexport_with_other_partitioning_leaves_one_layout(tmp_path, dbs, first, second):
    db, counts = dbs["big"]
    out = tmp_path / "x"
    for parts in (first, second):
        run = cli("export", str(out), "--db", str(db), "--partition-by", parts, "--buckets", "4")
        assert run.returncode == 0, run.stderr
    assert_export_is(out, counts)
    layout = {p.name.split("=")[0] for p in (out / "events").iterdir()}
    assert layout == ({second} if second else {"data.parquet"})
    assert cli("report", "--from-parquet", str(out), *FAST).returncode == 0


def test_shrink_then_reexport_counts_the_new_data(tmp_path, dbs):
    out = tmp_path / "x"
    for name in ("big", "small"):
        run = cli("export", str(out), "--db", str(dbs[name][0]), "--partition-by", "session_bucket", "--buckets", "8")
        assert run.returncode == 0, run.stderr
    assert_export_is(out, dbs["small"][1])
    rep = cli("report", "--from-parquet", str(out), "--format", "json", *FAST)
    direct = cli("report", "--db", str(dbs["small"][0]), "--format", "json", *FAST)
    assert json.loads(rep.stdout)["headline"]["items"] == json.loads(direct.stdout)["headline"]["items"]


# where a kill lands: after the n-th table is staged / swapped in, after the manifest is written
# (one of each kind in the default tier, the others under `-m slow`)
KILLS = [
    "staged:1",
    pytest.param("staged:6", marks=pytest.mark.slow),
    pytest.param("swapped:1", marks=pytest.mark.slow),
    "swapped:4",
    pytest.param("swapped:6", marks=pytest.mark.slow),
    "manifest:1",
]


def kill_at(point: str, *args: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "stallscan", "export", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, FAILPOINT_ENV: point},
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()  # blocks until the export reaches the point (or ends)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert line.strip() == f"failpoint {point}", line


@pytest.mark.parametrize("point", KILLS)
def test_killed_export_leaves_the_old_or_the_new_never_a_mix(tmp_path, dbs, point):
    (big, old), (small, new) = dbs["big"], dbs["small"]
    out = tmp_path / "x"
    assert cli("export", str(out), "--db", str(big), "--partition-by", "source_format").returncode == 0
    kill_at(point, str(out), "--db", str(small), "--partition-by", "session_bucket", "--buckets", "4")
    step, n = point.split(":")
    for i, t in enumerate(TABLES, 1):  # each table folder is whole: the old export's or the new one's
        swapped = step == "manifest" or (step == "swapped" and i <= int(n))
        assert read_counts(out, t) == {(new if swapped else old)[t]}, (point, t)
    rep = cli("report", "--from-parquet", str(out), *FAST)
    if step == "swapped":  # mid-swap: no manifest, so no reader that checks it takes the mix
        assert not (out / LAYOUT_FILE).exists()
        assert rep.returncode == 3 and "interrupted" in rep.stderr and "re-run the export" in rep.stderr, rep.stderr
    else:  # before the swap the old export is intact; after the manifest the new one is complete
        assert rep.returncode == 0, rep.stderr
        manifest = json.loads((out / LAYOUT_FILE).read_text())
        assert {t: manifest["tables"][t]["rows"] for t in TABLES} == (new if step == "manifest" else old)
    again = cli("export", str(out), "--db", str(small), "--partition-by", "session_bucket", "--buckets", "4")
    assert again.returncode == 0, again.stderr
    assert_export_is(out, new)


def test_report_refuses_files_the_manifest_does_not_describe(tmp_path, dbs):
    db, _ = dbs["big"]
    out = tmp_path / "x"
    assert (
        cli("export", str(out), "--db", str(db), "--partition-by", "session_bucket", "--buckets", "4").returncode == 0
    )
    part = next(p for p in sorted((out / "stalls").iterdir()) if p.is_dir())
    stray = part / "old-run.parquet"
    shutil.copy(next(part.glob("*.parquet")), stray)  # a file left by something else
    rep = cli("report", "--from-parquet", str(out))
    assert rep.returncode == 3 and "does not list" in rep.stderr and "hint" in rep.stderr.lower(), rep.stderr
    stray.unlink()
    victim = next((out / "events").rglob("*.parquet"))
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])  # truncated
    rep = cli("report", "--from-parquet", str(out))
    assert rep.returncode == 3 and "events" in rep.stderr, rep.stderr
