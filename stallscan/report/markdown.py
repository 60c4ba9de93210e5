"""The markdown renderer: report blocks as a Markdown document (headings to h3, tables, no charts: the
tables beside them carry the same numbers)."""

from __future__ import annotations

import re
from typing import Any

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

LINK = re.compile(r"\[([^\]]+)\]\(#[^)]*\)")


def _cell(s: str) -> str:
    s = LINK.sub(lambda m: f"`{m.group(1)}`", str(s))
    return s.replace("|", "\\|").replace("\n", " ")


def _draw(blocks: list[Block], out: list[str]) -> None:
    for b in blocks:
        if isinstance(b, Heading):
            out += [f"{'#' * min(b.level, 3)} {b.text}", ""]
        elif isinstance(b, Paragraph):
            out += [b.text, ""]
        elif isinstance(b, Headline):
            out += [f"- **{c.label}**: {c.text}" for c in b.cards] + [""]
        elif isinstance(b, Examples):
            for i, e in enumerate(b.items, 1):
                out.append(f"{i}. **{e.kind}** ({e.harness}): {e.why}. Open it: `{e.show}`")
                if e.excerpt:
                    out.append(f"   > {_cell(e.excerpt)}")
            out.append("")
        elif isinstance(b, Table):
            if b.title:
                out += [f"**{b.title}**", ""]
            out.append("| " + " | ".join(_cell(c.header) for c in b.columns) + " |")
            out.append("|" + "|".join("---" for _ in b.columns) + "|")
            out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in b.rows]
            out.append("")
        elif isinstance(b, Details):
            out += [f"**{b.summary}**", ""]
            _draw(b.blocks, out)
        elif not isinstance(b, (BarChart, LineChart)):
            raise TypeError(f"no markdown for {type(b).__name__}")


def to_markdown(data: dict[str, Any]) -> str:
    from stallscan.report.layout import report_blocks

    return render_markdown(report_blocks(data))


def render_markdown(blocks: list[Block]) -> str:
    out = ["# stallscan report", ""]
    _draw(blocks, out)
    return "\n".join(out).rstrip() + "\n"
