"""The HTML report in a real browser: headless Debian chromium renders it, the headline figures must be in
the rendered DOM, and a screenshot is saved (under the test's tmp dir; also at $STALLSCAN_SCREENSHOT).

`.ci/run` installs chromium (apt-get install -y chromium); without it this test skips, saying why.

The report is rendered in this process (CliRunner: the browser is the subject here, not the command's
process) from a copy of the run's reported_file (tests/functional/conftest.py), whose stored cells it reads."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from tests.helpers import ROOT

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _browser() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no chromium on PATH (bash .ci/run installs Debian's chromium package)")


def report(db: Path, *args: str) -> Any:
    """`stallscan report --db DB --bootstrap 200 ARGS` in this process; it must exit 0."""
    r = CliRunner().invoke(app, ["report", "--db", str(db), "--bootstrap", "200", *args])
    assert r.exit_code == 0, (r.output, r.exception)
    return r


def test_report_renders_in_chromium(tmp_path, reported_file):
    browser = _browser()
    db = tmp_path / "b.duckdb"
    shutil.copy(reported_file, db)
    page = tmp_path / "report.html"
    assert "wrote" in report(db, "-o", str(page)).stderr
    data = json.loads(report(db, "--format", "json").stdout)
    profile = tmp_path / "profile"
    dom = subprocess.run(
        [browser, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", dom.stdout)).split())
    items = {i["key"]: i for i in data["headline"]["items"]}
    mis, rec, silent = items["misread"], items["recommendation"], items["silent"]
    assert f"{mis['misread']:,} misread turns" in text
    assert f"of {mis['records']:,} at" in text
    assert f"{silent['per_1000']:.1f} per 1,000 turns" in text
    assert f"{rec['verdict']}: lowest cost on {rec['plateau'][0]:.2f}–{rec['plateau'][1]:.2f} s" in text
    for it in items.values():
        assert " ".join(it["text"].split()) in text
    for e in data["headline"]["examples"]:
        assert e["show"].replace(str(db), str(db)) in text
    # every example links to a timeline anchor that exists in the page
    for href in set(re.findall(r"href=\"#([^\"]+)\"", dom.stdout)):
        assert f'id="{href}"' in dom.stdout, href
    assert dom.stdout.count("<svg") >= 3 and "<script" not in dom.stdout
    shot = tmp_path / "report.png"
    s = subprocess.run(
        [
            browser,
            *FLAGS,
            f"--user-data-dir={profile}",
            "--window-size=1280,2200",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert s.returncode == 0 and shot.exists() and shot.stat().st_size > 20_000, s.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keep = os.environ.get("STALLSCAN_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, Path(keep) if Path(keep).is_absolute() else ROOT / keep)
