"""The report block model: sections return neutral blocks once, and the terminal, Markdown and HTML
renderers draw the same blocks; a section registered from elsewhere appears in all three.

The report data is the snapshot of sample_logs/ (tests/snapshots/report.json), so no database is needed."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from rich.console import Console

from stallscan.report import layout, registry
from stallscan.report.blocks import Block, Column, Heading, Paragraph, Table, walk
from stallscan.report.build import render_report
from stallscan.report.html import to_html
from stallscan.report.markdown import to_markdown
from stallscan.report.section import Section
from tests.helpers import ROOT, SNAPSHOTS


@pytest.fixture
def data() -> dict[str, Any]:
    out: dict[str, Any] = json.loads((SNAPSHOTS / "report.json").read_text(encoding="utf-8"))
    return out


def terminal(data: dict[str, Any], full: bool = False) -> str:
    console = Console(record=True, width=120, file=io.StringIO())
    for part in render_report(data, full=full):
        console.print(part)
        console.print()
    return console.export_text()


def _no_collect(con: Any, opts: Any) -> dict[str, Any]:
    raise AssertionError("the renderers never collect")


def test_registered_section_appears_in_every_format(data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "SECTIONS", [])  # sections registered here stay in this test
    # one section with the generic layout (no blocks of its own), one with its own blocks
    registry.register(Section("probe_generic", "Probe without blocks", _no_collect))
    data["probe_generic"] = {"flagged_sessions": 4242, "by_kind": {"odd_kind": 17}}

    def probe_blocks(d: dict[str, Any], report: dict[str, Any], full: bool) -> list[Block]:
        cols = [Column("kind", "id"), Column("n")]
        return [Paragraph(f"{d['n']} probes ({'full' if full else 'short'})"), Table(cols, [["probe_kind", "31"]])]

    registry.register(Section("probe_own", "Probe with blocks", _no_collect, probe_blocks))
    data["probe_own"] = {"n": 97}

    md, page = to_markdown(data), to_html(data)
    full, short = terminal(data, full=True), terminal(data)
    for text in (md, page, full):
        for words in ("Probe without blocks", "4,242", "odd_kind", "Probe with blocks", "97 probes (full)"):
            assert words in text, (words, text[-2000:])
        assert "probe_kind" in text
    assert "## Probe without blocks" in md and "<h2 id='probe_own'>Probe with blocks</h2>" in page
    assert "<a href='#probe_generic'>Probe without blocks</a>" in page  # in the table of contents
    # the default terminal report: the short form, and the generic one points to the full one
    assert "Probe with blocks" in short and "97 probes (short)" in short
    assert "Probe without blocks" in short and "stallscan report --section probe_generic" in short
    assert "probe_generic" in short.split("Details: --full")[1]  # named in the closing line too


def _h2(blocks: list[Block]) -> list[str]:
    return [b.text for b in blocks if isinstance(b, Heading) and b.level == 2]


def test_three_renderers_get_the_same_blocks(data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "SECTIONS", [])
    registry.register(Section("probe_generic", "Probe without blocks", _no_collect))
    data["probe_generic"] = {"flagged_sessions": 1}
    seen: list[list[Block]] = []
    build = layout.report_blocks

    def spy(*args: Any, **kw: Any) -> list[Block]:
        seen.append(build(*args, **kw))
        return seen[-1]

    monkeypatch.setattr(layout, "report_blocks", spy)
    md, page, term = to_markdown(data), to_html(data), terminal(data, full=True)
    assert len(seen) == 3 and seen[0] == seen[1] == seen[2]
    titles = _h2(seen[0])
    # the titles and their order are the registry's, said once (the answer opens every format)
    want = [s.title for s in registry.sections() if s.name in data]
    assert titles == ["The answer", *want] and want[-1] == "Probe without blocks"
    # ... and each renderer draws them in that order
    assert re.findall(r"^## (.+)$", md, re.M) == titles
    assert re.findall(r"<h2 id='[^']*'>([^<]+)</h2>", page) == titles
    lines = [line.rstrip() for line in term.splitlines()]
    assert [t for t in lines if t in titles] == titles
    # every table and paragraph of the blocks reaches the markdown (same words, same numbers)
    for b in walk(seen[0]):
        if isinstance(b, Table) and b.rows:
            assert " | ".join(c.header for c in b.columns) in md
        if isinstance(b, Paragraph):
            assert re.sub(r"\[([^\]]+)\]\(#[^)]*\)", r"`\1`", b.text) in md


def test_short_and_only_forms(data: dict[str, Any]) -> None:
    short, full = layout.report_blocks(data, full=False), layout.report_blocks(data)
    # the short form (issue 23: one 80x40 screen): the answer, then one line a section under one heading
    assert _h2(short) == ["The answer", "By section"] and "Guard" in _h2(full)
    lines = [b.text for b in short if isinstance(b, Paragraph) and b.text.startswith("**")]
    # sample_logs holds no guard log: the Guard section has no line in the short form
    assert [x.split("**")[1] for x in lines] == [t for t in _h2(full) if t not in ("The answer", "Guard")]
    assert len(walk(short)) < len(walk(full))
    # --section stalls: the section's full blocks under its heading, nothing else
    only = layout.report_blocks(data, full=False, only=["stalls"])
    start = _h2_at(full, "Stalls")
    end = next(i for i in range(start + 1, len(full)) if _h2_at(full, None, i))
    assert only == full[start:end]


def _h2_at(blocks: list[Block], title: str | None, at: int | None = None) -> Any:
    """The index of the section heading `title`, or (with `at`) whether blocks[at] is a section heading."""
    if at is not None:
        b = blocks[at]
        return isinstance(b, Heading) and b.level == 2
    return next(i for i, b in enumerate(blocks) if isinstance(b, Heading) and b.level == 2 and b.text == title)


def test_renderers_know_no_section_by_name() -> None:
    """Titles and order live in the registry: no renderer reads a section's data by its name."""
    names = list(registry.BUILTIN)
    for module in ("layout", "terminal", "markdown", "html", "charts", "blocks", "generic"):
        text = (ROOT / "stallscan" / "report" / f"{module}.py").read_text(encoding="utf-8")
        for name in names:
            assert not re.search(rf"data(\[|\.get\()[\"']{name}[\"']", text), (module, name)
