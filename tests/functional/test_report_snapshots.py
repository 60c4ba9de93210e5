"""Snapshot tests of every report format on sample_logs, in a pinned environment (TZ=UTC, NO_COLOR, 120 columns).

Update after an intended change with:  STALLSCAN_UPDATE_SNAPSHOTS=1 python -m pytest tests/functional/test_report_snapshots.py
(then read the diff before committing it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.helpers import ROOT, SNAPSHOTS

SNAP = SNAPSHOTS
ENV = dict(os.environ, TZ="UTC", NO_COLOR="1", COLUMNS="120", TERM="dumb")


@pytest.fixture(scope="module")
def db(tmp_path_factory, sample_db_file):
    path = tmp_path_factory.mktemp("snap") / "s.duckdb"
    shutil.copy(sample_db_file, path)  # sample_logs ingested and replayed (the run's): no report here replays
    return path


def normalise(text: str) -> str:
    """Machine-independent text: the checkout path, and event ids (md5 of that path, line, part)."""
    text = text.replace(str(ROOT), "<ROOT>")
    text = re.sub(r"\b[0-9a-f]{32}\b", "<event_id>", text)
    return re.sub(r"[ \t]+\n", "\n", text)


@pytest.mark.parametrize(
    "fmt, name", [("table", "report.txt"), ("json", "report.json"), ("markdown", "report.md"), ("html", "report.html")]
)
def test_report_snapshot(db, fmt, name):
    p = subprocess.run(
        [sys.executable, "-m", "stallscan", "report", "--db", str(db), "--format", fmt, "--bootstrap", "200"],
        env=ENV,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    got = normalise(p.stdout.replace(str(db), "<DB>"))
    # the headline opens every format
    opening = {
        "table": "The answer",
        "json": '"headline": {',
        "markdown": "## The answer",
        "html": "<h2 id='answer'>The answer</h2>",
    }[fmt]
    # (the HTML: the first thing in its main column, after the style sheet and the contents)
    head = got.split("<main>", 1)[1] if fmt == "html" else got
    assert opening in head[:3000], head[:3000]
    for words in ("Silent plan-as-answer endings", "Misread turns", "stallscan show "):
        assert words in got
    if fmt == "html":
        assert "<script" not in got and "http://" not in got.replace("http://www.w3.org/2000/svg", "")
        assert got.count("<svg") >= 2
    path = SNAP / name
    if os.environ.get("STALLSCAN_UPDATE_SNAPSHOTS") or not path.exists():
        SNAP.mkdir(exist_ok=True)
        path.write_text(got, encoding="utf-8")
        if not os.environ.get("STALLSCAN_UPDATE_SNAPSHOTS"):
            pytest.fail(f"snapshot {name} was missing and has been written; re-run")
    assert got == path.read_text(encoding="utf-8")


def test_html_tags_balance_and_every_section_sits_in_main(db):
    """An unclosed or extra </div> pushes the sections after it out of the dashboard's column (it did once)."""
    from html.parser import HTMLParser

    p = subprocess.run(
        [sys.executable, "-m", "stallscan", "report", "--db", str(db), "--format", "html", "--bootstrap", "50"],
        env=ENV,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    page = p.stdout

    class Walk(HTMLParser):
        VOID = frozenset(
            {"meta", "br", "img", "hr", "input", "link", "col", "wbr", "circle", "line", "rect", "path", "polyline"}
        )

        def __init__(self) -> None:
            super().__init__()
            self.stack: list[str] = []
            self.errors: list[str] = []
            self.h2_outside_main = 0

        def handle_starttag(self, tag, attrs):
            if tag == "h2" and "main" not in self.stack:
                self.h2_outside_main += 1
            if tag not in self.VOID:
                self.stack.append(tag)

        def handle_startendtag(self, tag, attrs):
            pass

        def handle_endtag(self, tag):
            if tag in self.VOID:
                return
            if not self.stack or self.stack[-1] != tag:
                self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            else:
                self.stack.pop()

    w = Walk()
    w.feed(page)
    assert w.errors == [] and w.stack == [], (w.errors[:5], w.stack[-5:])
    assert w.h2_outside_main == 0
