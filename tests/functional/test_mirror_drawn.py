"""The console script's mirror after a report it computed (stallscan.entry._mirror_after_command) takes the
document the command printed and the JSON text it stored (stallscan.cli.report_cmd.DRAWN, STORED) instead of
drawing them again: a repeat served from that mirror prints byte for byte what the computing run printed, and
the mirror holds what one drawn again from the stored data holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stallscan import entry
from stallscan.cli import report_cmd
from stallscan.report import mirror
from tests.helpers import report_tree

FAST = ["--bootstrap", "20"]


def _run(args: list[str]) -> str:
    env = {k: v for k, v in os.environ.items() if k != "STALLSCAN_CONFIG"}
    out = subprocess.run([sys.executable, "-m", "stallscan", *args], capture_output=True, env=env, check=True)
    return out.stdout.decode()


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_the_repeat_from_the_mirror_prints_what_the_computing_run_printed(tmp_path, monkeypatch, fmt):
    src = report_tree(tmp_path, monkeypatch)
    args = ["report", str(src), "--db", str(tmp_path / "r.duckdb"), "--format", fmt, *FAST]
    first = _run(args)
    assert os.path.exists(tmp_path / "r.duckdb.memo")  # (written after the computing run)
    assert _run(args) == first


def test_the_mirror_is_the_one_drawn_from_the_stored_data(tmp_path, monkeypatch, capsys):
    src = report_tree(tmp_path, monkeypatch)
    db = str(tmp_path / "r.duckdb")
    args = [str(src), "--db", db, "--format", "json", *FAST]
    paths, values = entry.parse_report(args) or ([], {})
    docs = {}
    for drawn in (True, False):
        for f in (db, db + ".wal", db + ".memo"):
            Path(f).unlink(missing_ok=True)
        report_cmd.run_parsed(paths, values)
        assert report_cmd.STORED and set(report_cmd.DRAWN) == {"json"}
        if not drawn:
            report_cmd.DRAWN.clear()  # (the mirror draws the document again from the data)
        entry._mirror_after_command(args)
        m = mirror.load(db)
        assert m is not None
        found = mirror.find(m, paths, values)
        assert found is not None and {"data", "doc:json"} <= set(found["spans"])
        docs[drawn] = {k: m.raw(span) for k, span in found["spans"].items() if k != "walk"}
    capsys.readouterr()
    assert docs[True] == docs[False]
