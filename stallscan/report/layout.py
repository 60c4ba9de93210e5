"""The report as one list of blocks, for every format: the answer, then each section (title and order
from the registry, blocks from the section), then the timelines. The renderers draw this list and know
no section by name."""

from __future__ import annotations

from typing import Any

from stallscan.report.answer import answer_blocks, timeline_blocks
from stallscan.report.blocks import Block, Heading, Paragraph
from stallscan.report.generic import generic_blocks
from stallscan.report.registry import sections


def report_blocks(data: dict[str, Any], full: bool = True, only: list[str] | None = None) -> list[Block]:
    """The full report (`full`: markdown, HTML, terminal --full), the short default terminal one, or only
    the named sections in full (`only`). A section whose short form is empty is left out of it."""
    out: list[Block] = [] if only else answer_blocks(data, full)
    present = [s for s in sections() if s.name in data]
    for s in present:
        if only and s.name not in only:
            continue
        body = (s.blocks or generic_blocks(s.name))(data[s.name], data, full or bool(only))
        if full or only:
            out += [Heading(s.title, 2, s.name), *body]
        elif body:  # the default terminal report: one line a section (its first block), under one heading
            if not any(isinstance(b, Heading) and b.id == "sections" for b in out):
                out.append(Heading("By section", 2, "sections"))
            first, *rest = body
            if isinstance(first, Paragraph):
                out += [Paragraph(f"**{s.title}**: {first.text}", first.tone), *rest]
            else:
                out += body
    if full and not only:
        out += timeline_blocks(data)
    if not full and not only:
        out.append(
            Paragraph(
                "Details: --full (every section) or --section NAME ("
                + ", ".join(s.name for s in present)
                + "); --format html -o report.html for the dashboard.",
                "note",
            )
        )
    return out
