"""The report as a Markdown document: headings to h3, tables, numbers in one style, no data dumps."""

from __future__ import annotations

import re
from typing import Any

from stallscan.report.document import document

LINK = re.compile(r"\[([^\]]+)\]\(#[^)]*\)")


def _cell(s: str) -> str:
    s = LINK.sub(lambda m: f"`{m.group(1)}`", str(s))
    return s.replace("|", "\\|").replace("\n", " ")


def _blocks(blocks: list[tuple[Any, ...]], out: list[str]) -> None:
    for b in blocks:
        kind = b[0]
        if kind == "h":
            out += [f"{'#' * min(b[1], 3)} {b[3]}", ""]
        elif kind == "p":
            out += [b[1], ""]
        elif kind == "list":
            out += [f"- {x}" for x in b[1]] + [""]
        elif kind == "examples":
            for i, e in enumerate(b[1], 1):
                out.append(f"{i}. **{e['kind']}** ({e['harness']}): {e['why']}. Open it: `{e['show']}`")
                if e["excerpt"]:
                    out.append(f"   > {_cell(e['excerpt'])}")
            out.append("")
        elif kind == "table":
            head, rows = b[1], b[2]
            out.append("| " + " | ".join(_cell(h) for h in head) + " |")
            out.append("|" + "|".join("---" for _ in head) + "|")
            out += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
            out.append("")
        elif kind == "details":
            out += [f"**{b[1]}**", ""]
            _blocks(b[2], out)
        # "cards" and "chart" are HTML only (the list and the tables carry the same figures)


def to_markdown(data: dict[str, Any]) -> str:
    out = ["# stallscan report", ""]
    _blocks(document(data), out)
    return "\n".join(out).rstrip() + "\n"
