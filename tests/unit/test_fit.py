"""report/fit.py: tables fit the width by dropping the lowest-priority columns; numbers and ids keep their
full width; text columns shrink with an ellipsis; no column is ever zero wide."""

from __future__ import annotations

import io

from rich.console import Console

from stallscan.ingest.run import ingest_paths
from stallscan.report.build import build_report
from stallscan.report.fit import Col, fit_columns, fit_table
from stallscan.report.registry import ReportOptions
from tests.helpers import SAMPLES

COLS = [
    Col("session", "id", 99),
    Col("count", keep=90),
    Col("gap s", keep=80),
    Col("rule", "id", 20),
    Col("excerpt", "text", 50, min=10, max=40),
]
ROWS = [["258c7280/agent-a8", "1,234,567", "640475.12", "completion", "a long excerpt " * 6]]


def _render(t, width):
    out = io.StringIO()
    Console(file=out, width=width, no_color=True).print(t)
    return out.getvalue()


def test_wide_enough_keeps_everything():
    assert fit_columns(COLS, ROWS, 200) == [0, 1, 2, 3, 4]


def test_drops_lowest_priority_first_and_never_cuts_numbers():
    for width in (80, 60, 45, 30):
        keep = fit_columns(COLS, ROWS, width)
        text = _render(fit_table(COLS, ROWS, avail=width), width)
        assert all(len(line) <= width for line in text.splitlines()), text
        for i in keep:
            if COLS[i].kind != "text":
                assert ROWS[0][i] in text, (width, text)
        dropped = [c.keep for i, c in enumerate(COLS) if i not in keep]
        kept = [c.keep for i, c in enumerate(COLS) if i in keep]
        assert not dropped or max(dropped) <= min(kept)
    assert fit_columns(COLS, ROWS, 45) == [0, 1, 2]  # rule (20) and excerpt (50) go first


def test_report_progress_steps(con):
    ingest_paths(con, [str(SAMPLES / "hermes")])
    seen = []
    build_report(con, ReportOptions(bootstrap=0), progress=lambda label, done, total: seen.append((label, done, total)))
    labels = [s[0] for s in seen]
    # the two replays first (stallscan.replay.together), then each section
    assert labels[:5] == ["Replaying", "Corpus", "Turn boundaries", "Stalls", "Threshold"] and labels[-1] == "done"
    assert [s[1] for s in seen] == sorted(s[1] for s in seen) and seen[-1][1] == seen[-1][2]
