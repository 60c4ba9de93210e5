"""The terminal renderer: report blocks as rich renderables that fit the terminal's width (tables drop
columns by priority, stallscan.report.fit). Nothing here prints: the CLI prints each part, a blank line
between parts (a part starts at each section heading and at each note)."""

from __future__ import annotations

import re

from rich.console import Group, RenderableType
from rich.table import Table as RichTable
from rich.text import Text

from stallscan.report.blocks import (
    BarChart,
    Block,
    Details,
    Examples,
    Heading,
    Headline,
    LineChart,
    Paragraph,
    Table,
)
from stallscan.report.fit import fit_table, width
from stallscan.report.render_sweep import sparkline

MARKS = re.compile(r"\*\*([^*]+)\*\*|\[([^\]]+)\]\(#[^)]*\)")
TONES = {"warn": "yellow", "note": ""}
EXCERPT = 68  # characters of an example's excerpt


def inline(s: str, style: str = "") -> Text:
    """Text with the blocks' inline marks: **bold** drawn bold, [label](#anchor) as its label."""
    out, at = Text(style=style), 0
    for m in MARKS.finditer(s):
        out.append(s[at : m.start()])
        out.append(m.group(1), style="bold") if m.group(1) is not None else out.append(m.group(2))
        at = m.end()
    out.append(s[at:])
    return out


def to_terminal(blocks: list[Block]) -> list[RenderableType]:
    parts: list[list[RenderableType]] = [[]]
    for b in blocks:
        if (isinstance(b, Heading) and b.level == 2) or (isinstance(b, Paragraph) and b.tone == "note"):
            parts.append([])
        parts[-1] += _draw(b)
    return [Group(*p) for p in parts if p]


def _draw(b: Block) -> list[RenderableType]:
    if isinstance(b, Heading):
        return [Text(b.text, style="bold")]
    if isinstance(b, Paragraph):
        return [inline(b.text, TONES.get(b.tone, ""))]
    if isinstance(b, Table):
        rows: list[list[object]] = [[inline(c) for c in r] for r in b.rows]
        styles: list[str | None] = ["bold red" if f else None for f in b.flagged] or None  # type: ignore[assignment]
        return [fit_table(list(b.columns), rows, title=b.title or None, styles=styles)]
    if isinstance(b, Details):
        return [Text(b.summary, style="bold")] + [r for x in b.blocks for r in _draw(x)]
    if isinstance(b, Headline):
        grid = RichTable.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column()
        for c in b.cards:
            grid.add_row(Text("▸", style="bold"), Text.assemble((f"{c.label}: ", "bold"), inline(c.text)))
        return [grid]
    if isinstance(b, Examples):
        return [_examples(b)]
    if isinstance(b, LineChart):
        return _sparklines(b)
    if isinstance(b, BarChart):
        return []  # its numbers are in the table beside it
    raise TypeError(f"no terminal drawing for {type(b).__name__}")


def _examples(b: Examples) -> RenderableType:
    ex = RichTable.grid(padding=(0, 1))
    ex.add_column(no_wrap=True)
    ex.add_column()
    for i, e in enumerate(b.items, 1):
        t = Text(f"{e.kind} ({e.harness}): {e.why}")
        if e.excerpt:
            x = e.excerpt if len(e.excerpt) <= EXCERPT else e.excerpt[: EXCERPT - 1] + "…"
            t.append(f'\n"{x}"', style="dim")
        t.append("\n")
        t.append(e.show, style="cyan")
        ex.add_row(f"{i}.", t)
    return ex


def _sparklines(b: LineChart) -> list[RenderableType]:
    """One line per series: its name, the y values as a sparkline, the x range."""
    out: list[RenderableType] = []
    for name, pts in b.series.items():
        if not pts:
            continue
        label = f"{name} {pts[0][0]:g} "
        line = sparkline([y for _, y in pts], max(10, min(60, width() - len(label) - 8)))  # type: ignore[arg-type]
        out.append(Text(f"{label}{line} {pts[-1][0]:g}"))
    if out:
        out.insert(0, Text(f"{b.ylabel} by {b.xlabel}", style="dim"))
    return out
