"""Checksum every table stallscan writes, to prove a refactor changed no row.

    python bench/dump_tables.py sample_logs ../shared/data/real --hostile /tmp/hostile > after.json
    git stash; python bench/dump_tables.py ... > before.json; git stash pop; diff before.json after.json

Each corpus is ingested into a fresh database with the CLI of this checkout (`python -m stallscan`), every
table (base and derived) is exported to parquet, and each table's rows are hashed in a fixed order. Only
`files.ingested_at` is left out (a wall-clock time). `--hostile DIR` first writes the damaged-transcript
corpus of tests/functional/test_hostile_input.py into DIR (when DIR does not exist yet) and includes it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
TABLES = "events,files,skipped,rejects,user_labels,turn_boundaries,stalls,turns,rounds,sweep"
DROP = {"files": ["ingested_at"]}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stallscan", *args], cwd=ROOT, text=True, capture_output=True)


def dump(corpus: str, work: Path) -> dict[str, list[object]]:
    db = work / "d.duckdb"
    out = work / "out"
    ing = cli("ingest", corpus, "--db", str(db))
    if ing.returncode not in (0, 1, 3):
        raise SystemExit(f"ingest {corpus} failed ({ing.returncode}): {ing.stderr}")
    exp = cli("export", str(out), "--db", str(db), "--tables", TABLES)
    if exp.returncode != 0:
        raise SystemExit(f"export failed: {exp.stderr}")
    con = duckdb.connect()
    res: dict[str, list[object]] = {"ingest_exit": [ing.returncode]}
    for table in TABLES.split(","):
        src = f"'{out}/{table}/**/*.parquet'"
        drop = f" EXCLUDE ({', '.join(DROP[table])})" if table in DROP else ""
        cols = ", ".join(f'"{c}"' for c in con.execute(f"SELECT *{drop} FROM {src} LIMIT 0").fetchnumpy())
        n, h = con.execute(
            f"SELECT count(*), md5(coalesce(string_agg(t::VARCHAR, '|' ORDER BY {cols}), '')) "
            f"FROM (SELECT *{drop} FROM {src}) t"
        ).fetchone()  # type: ignore[misc]
        res[table] = [n, h]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="*")
    ap.add_argument("--hostile", help="write (if absent) and include the hostile corpus in this directory")
    args = ap.parse_args()
    corpora = [str(Path(c).resolve()) for c in args.corpus]
    if args.hostile:
        h = Path(args.hostile).resolve()
        if not h.exists():
            sys.path.insert(0, str(ROOT))  # the test module imports `tests.helpers`: the checkout's root
            from tests.functional.test_hostile_input import corruption_corpus

            h.mkdir(parents=True)
            corruption_corpus(h)
        corpora.append(str(h))
    result = {}
    for c in corpora:
        with tempfile.TemporaryDirectory() as tmp:
            result[c] = dump(c, Path(tmp))
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
