"""Fault run for issue 24's "data that doubles, stays stale, or loses fields": tries / survived / lost.

    python bench/fault_lost_data.py [--real ../shared/data/real] [--only kills,timed,reexports,emptied]

* kills: an export (sample logs, partitioned one way) over an older one (another database, another
  partitioning), SIGKILLed at every failpoint ($STALLSCAN_EXPORT_FAILPOINT, no timing). Survived: every
  table folder reads whole in pyarrow, polars and DuckDB (hive on and off) as the old export or the new
  one; with a manifest, `report --from-parquet` reads it and its row counts are the files'; without one,
  it refuses with exit 3; the next export ends equal to the database.
* timed: the same kill at moments spread over an export's measured run time (lands anywhere).
* reexports: every pair of partitionings, each after an export of the bigger or the smaller database.
  Survived: every reader counts the database's rows, and `report --from-parquet` works.
* emptied: every real file truncated to 0 bytes, and rewritten as plain text, in an ingested copy of the
  corpus. Survived: the file keeps no row, the summary names it, line accounting holds, every other file's
  rows are unchanged (but for seq), every session is numbered 1..n, and after the original is put back and
  ingested the tables equal the first ingest.
Appends at every cut point: `pytest -m slow tests/test_ingest_splits.py -s` prints that table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TABLES = ("events", "user_labels", "turn_boundaries", "rounds", "stalls", "turns")
POINTS = [f"staged:{i}" for i in range(1, 7)] + [f"swapped:{i}" for i in range(1, 7)] + ["manifest:1"]
PARTS = ["", "source_format", "session_bucket", "date", "session_bucket,date"]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stallscan", *args], capture_output=True, text=True, env=env)


def db_counts(db: Path) -> dict[str, int]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        con.close()


def reads(folder: Path) -> dict[str, set[int]] | None:
    """Per table, the row counts the four readers see; None when a reader fails."""
    import duckdb
    import polars as pl
    import pyarrow.dataset as ds

    out = {}
    try:
        for t in TABLES:
            path = folder / t
            glob = f"{path}/**/*.parquet" if any(p.is_dir() for p in path.iterdir()) else f"{path}/*.parquet"
            duck = duckdb.connect()
            out[t] = {
                ds.dataset(str(path), format="parquet", partitioning="hive").count_rows(),
                pl.scan_parquet(glob, hive_partitioning=True).select(pl.len()).collect().item(),
                duck.execute(f"SELECT count(*) FROM read_parquet('{glob}', hive_partitioning = true)").fetchone()[0],
                duck.execute(f"SELECT count(*) FROM read_parquet('{glob}', hive_partitioning = false)").fetchone()[0],
            }
    except Exception:
        return None
    return out


def databases(tmp: Path) -> dict[str, tuple[Path, dict[str, int]]]:
    small_logs = tmp / "small-logs"
    shutil.copytree(ROOT / "sample_logs", small_logs, ignore=shutil.ignore_patterns("hermes", "*.md", "*.py"))
    out = {}
    for name, logs in (("big", ROOT / "sample_logs"), ("small", small_logs)):
        db = tmp / f"{name}.duckdb"
        cli("ingest", str(logs), "--db", str(db))
        cli("export", str(tmp / f"{name}-warm"), "--db", str(db))  # derives the replayed tables
        out[name] = (db, db_counts(db))
    return out


def export(out: Path, db: Path, parts: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return cli("export", str(out), "--db", str(db), "--partition-by", parts, "--buckets", "4", env=env)


def complete(out: Path, counts: dict[str, int]) -> bool:
    got = reads(out)
    rep = cli("report", "--from-parquet", str(out))
    return got == {t: {counts[t]} for t in TABLES} and rep.returncode == 0


def kills(tmp: Path, dbs) -> tuple[int, int]:
    (big, old), (small, new) = dbs["big"], dbs["small"]
    tries = ok = 0
    for point, (first, second) in itertools.product(POINTS, [("source_format", "session_bucket"), ("", "date")]):
        out = tmp / f"kill-{tries}"
        export(out, big, first)
        proc = subprocess.Popen(
            [sys.executable, "-m", "stallscan", "export", str(out), "--db", str(small), "--partition-by", second],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "STALLSCAN_EXPORT_FAILPOINT": point},
        )
        assert proc.stderr is not None
        reached = proc.stderr.readline().strip() == f"failpoint {point}"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        got = reads(out)
        whole = got is not None and all(got[t] in ({old[t]}, {new[t]}) for t in TABLES)
        manifest_path = out / "_stallscan_layout.json"
        rep = cli("report", "--from-parquet", str(out))
        if manifest_path.exists():
            m = json.loads(manifest_path.read_text())
            agrees = got is not None and all(got[t] == {m["tables"][t]["rows"]} for t in TABLES)
            checked = agrees and rep.returncode == 0
        else:
            checked = rep.returncode == 3
        export(out, small, second)
        tries += 1
        ok += reached and whole and checked and complete(out, new)
        shutil.rmtree(out)
    return tries, ok


def timed_kills(tmp: Path, dbs, n: int = 12) -> tuple[int, int]:
    """Kills at moments spread over an export's run time (not deterministic: the failpoints above are the
    test; these land anywhere, e.g. inside a COPY that is writing a parquet file)."""
    import time

    (big, old), (small, new) = dbs["big"], dbs["small"]
    probe = tmp / "probe"
    t0 = time.perf_counter()
    export(probe, small, "session_bucket")
    took = time.perf_counter() - t0
    tries = ok = 0
    for i in range(n):
        out = tmp / f"tkill-{i}"
        export(out, big, "source_format")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "stallscan",
                "export",
                str(out),
                "--db",
                str(small),
                "--partition-by",
                "session_bucket",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(took * (i + 0.5) / n)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        got = reads(out)
        whole = got is not None and all(got[t] in ({old[t]}, {new[t]}) for t in TABLES)
        rep = cli("report", "--from-parquet", str(out))
        m = out / "_stallscan_layout.json"
        if m.exists():
            rows = json.loads(m.read_text())["tables"]
            checked = rep.returncode == 0 and got is not None and all(got[t] == {rows[t]["rows"]} for t in TABLES)
        else:
            checked = rep.returncode == 3
        export(out, small, "session_bucket")
        tries += 1
        ok += whole and checked and complete(out, new)
        shutil.rmtree(out)
    return tries, ok


def reexports(tmp: Path, dbs) -> tuple[int, int]:
    tries = ok = 0
    for (a, b), (x, y) in itertools.product(itertools.product(PARTS, PARTS), [("big", "small"), ("small", "big")]):
        out = tmp / f"re-{tries}"
        export(out, dbs[x][0], a)
        export(out, dbs[y][0], b)
        tries += 1
        ok += complete(out, dbs[y][1])
        shutil.rmtree(out)
    return tries, ok


def emptied(tmp: Path, real: Path) -> tuple[int, int]:
    from stallscan.ingest.run import ingest_paths
    from stallscan.store.db import connect
    from tests.hostile import accounting_errors

    corpus = tmp / "corpus"
    shutil.copytree(real, corpus)
    con = connect(str(tmp / "real.duckdb"))
    ingest_paths(con, [str(corpus)])

    def rows(where: str, p: str, seq: bool = True) -> list[tuple[str, int, str]]:
        """Count and checksum of the rows of file p (=) or of every other file (<>); without seq: the
        numbering of a session spread over files changes when one of them is emptied (checked apart)."""
        q = " UNION ALL ".join(
            f"SELECT '{t}', count(*), coalesce(md5(string_agg(x::VARCHAR, '|' ORDER BY x::VARCHAR)), '') "
            f"FROM (SELECT * {'' if seq or t != 'events' else 'EXCLUDE (seq)'} FROM {t}) x WHERE file {where} ?"
            for t in ("events", "skipped", "rejects")
        )
        return con.execute(q, [p, p, p]).fetchall()

    def numbered() -> bool:  # every session's events numbered 1..n
        return not con.execute(
            "SELECT count(*) FROM (SELECT session_id FROM events GROUP BY session_id "
            "HAVING min(seq) <> 1 OR max(seq) <> count(*) OR count(DISTINCT seq) <> count(*))"
        ).fetchone()[0]

    files = [r[0] for r in con.execute("SELECT path FROM files WHERE n_lines > 0 ORDER BY path").fetchall()]
    tries = ok = 0
    for path in files:
        p = Path(path)
        original = p.read_bytes()
        others, mine, others_noseq = rows("<>", path), rows("=", path), rows("<>", path, seq=False)
        for content in (b"", b"a plain text note\nnothing a harness wrote\n"):
            p.write_bytes(content)
            res = ingest_paths(con, [str(corpus)])
            survived = (
                all(n == 0 for _, n, _ in rows("=", path))
                and rows("<>", path, seq=False) == others_noseq
                and numbered()
                and not accounting_errors(con)
                and [e[0] for e in res.emptied] == [path]
            )
            p.write_bytes(original)
            ingest_paths(con, [str(corpus)])
            tries += 1
            back = rows("=", path) == mine and rows("<>", path) == others
            ok += survived and back
            if not (survived and back):
                print(f"lost: {p.relative_to(corpus)} emptied as {content[:9]!r} (then put back: {back})", flush=True)
    con.close()
    return tries, ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--real", default=str(ROOT.parent / "shared" / "data" / "real"))
    ap.add_argument("--only", default="kills,timed,reexports,emptied")
    args = ap.parse_args()
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        dbs = databases(tmp) if only & {"kills", "timed", "reexports"} else {}
        rows = []
        if "kills" in only:
            rows.append(("kills during export", *kills(tmp, dbs)))
        if "timed" in only:
            rows.append(("kills at timed moments", *timed_kills(tmp, dbs)))
        if "reexports" in only:
            rows.append(("re-exports", *reexports(tmp, dbs)))
        if "emptied" in only:
            rows.append(("truncations and rewrites", *emptied(tmp, Path(args.real))))
    print(f"{'fault':28} {'tries':>6} {'survived':>9} {'lost':>5}")
    for name, tries, ok in rows:
        print(f"{name:28} {tries:6} {ok:9} {tries - ok:5}")


if __name__ == "__main__":
    main()
