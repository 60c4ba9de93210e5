"""The line reader's edge cases as case files (tests/unit/cases/reader/, hand labels in expected.json): a bad
line in the middle, a cut last line, no final newline, CRLF, a byte-order mark, blank lines. Any other way of
reading a file (a DuckDB-side reader, say) must give each line the same number and fate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stallscan.ingest.run import ingest_paths

CASES = Path(__file__).parent / "cases" / "reader"
EXPECTED = {k: v for k, v in json.loads((CASES / "expected.json").read_text()).items() if not k.startswith("_")}


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    import duckdb

    from stallscan.store.db import connect

    root = tmp_path_factory.mktemp("reader")
    for name in EXPECTED:
        shutil.copy(CASES / name, root / name)
    con: duckdb.DuckDBPyConnection = connect(":memory:")
    res = ingest_paths(con, [str(root)])
    yield con, root, res
    con.close()


def test_every_case_file_is_read():
    assert sorted(EXPECTED) == sorted(p.name for p in CASES.glob("*.jsonl"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_lines_keep_their_numbers_and_fates(ingested, name):
    con, root, _ = ingested
    want = EXPECTED[name]
    path = str(root / name)
    events = con.execute("SELECT line, role, text FROM events WHERE file = ? ORDER BY line", [path]).fetchall()
    assert [list(e) for e in events] == want["events"]
    skipped = con.execute("SELECT line, kind FROM skipped WHERE file = ? ORDER BY line", [path]).fetchall()
    assert [list(s) for s in skipped] == want["skipped"]
    rejects = con.execute("SELECT line, reason FROM rejects WHERE file = ? ORDER BY line", [path]).fetchall()
    assert [list(r) for r in rejects] == want["rejects"]
    n_lines, n_event_lines, n_skipped, n_rejects, pending = con.execute(
        "SELECT n_lines, n_event_lines, n_skipped, n_rejects, pending_bytes FROM files WHERE path = ?", [path]
    ).fetchone()
    assert n_lines == want["n_lines"] == n_event_lines + n_skipped + n_rejects
    data = (CASES / name).read_bytes()
    # a cut last line is left whole for the next ingest: the bytes after the last newline
    assert pending == (len(data) - data.rfind(b"\n") - 1 if want["pending"] else 0)


def test_the_run_counts_each_case(ingested):
    _, _, res = ingested
    assert res.lines == sum(w["n_lines"] for w in EXPECTED.values())
    assert res.rejects == sum(len(w["rejects"]) for w in EXPECTED.values())
    assert res.pending == sum(w["pending"] for w in EXPECTED.values())
