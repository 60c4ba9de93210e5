"""With no guard log ingested, the Guard section says so in one sentence with what to do, the same in the
terminal (--section guard, --full), the Markdown and the HTML: never a raw key/value dump of its empty data
(records 0, decisions {}, window_s 60, after_block ...), which is what the HTML and Markdown once printed.

The report data is the snapshot of sample_logs/ (tests/snapshots/report.json): no guard log there."""

from __future__ import annotations

import html
import io
import json
import re
from typing import Any

import pytest
from rich.console import Console

from stallscan.report.build import render_report
from stallscan.report.html import to_html
from stallscan.report.markdown import to_markdown
from tests.helpers import SNAPSHOTS

# the sentence, as the issue asks: that no log was ingested, and the two commands that bring one in
SAID = ("no guard log ingested", "stallscan guard install", "stallscan ingest <log>")
# the empty data's keys and values, which a generic layout would print
DUMP = ("records", "decisions", "window_s", "after_block", "summary", "person_within_window", "budget_spent")


@pytest.fixture
def data() -> dict[str, Any]:
    out: dict[str, Any] = json.loads((SNAPSHOTS / "report.json").read_text(encoding="utf-8"))
    assert out["guard"]["records"] == 0  # the premise: sample_logs holds no guard log
    return out


def words(text: str) -> str:
    return " ".join(text.split())


def html_section(page: str) -> str:
    part = page.split("<h2 id='guard'>Guard</h2>", 1)[1].split("<h2", 1)[0]
    return words(html.unescape(re.sub(r"<[^>]+>", " ", part)))


def md_section(doc: str) -> str:
    return words(doc.split("\n## Guard\n", 1)[1].split("\n## ", 1)[0])


def terminal(data: dict[str, Any], **kw: Any) -> str:
    console = Console(record=True, width=120, file=io.StringIO())
    for part in render_report(data, **kw):
        console.print(part)
    return words(console.export_text())


def test_no_guard_log_reads_as_one_sentence_in_html_and_markdown(data: dict[str, Any]) -> None:
    page, doc = html_section(to_html(data)), md_section(to_markdown(data))
    for text in (page, doc):
        for said in SAID:
            assert said in text, (said, text)
        for key in DUMP:
            assert key not in text, (key, text)
    assert "<table" not in to_html(data).split("<h2 id='guard'>", 1)[1].split("<h2", 1)[0]
    # the terminal says the same sentence, and the section holds nothing else in any format
    alone = terminal(data, only=["guard"])
    assert page == doc and page in alone, (page, doc, alone)
    assert alone.replace(page, "").strip() == "Guard"
    assert page in terminal(data, full=True)


def test_no_guard_log_leaves_the_default_terminal_report_alone(data: dict[str, Any]) -> None:
    short = terminal(data)
    assert "no guard log" not in short and "Guard" not in short.split("Details:")[0]
