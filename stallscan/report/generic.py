"""The generic layout: the blocks of a section registered without its own (`Section.blocks` None).
Scalars in a two-column table, lists of records as tables, nested records under their own heading."""

from __future__ import annotations

from typing import Any

from stallscan.report.blocks import Block, Column, Heading, Paragraph, Table
from stallscan.report.cells import num
from stallscan.report.section import BlockBuilder

PAIR = [Column("", "id", 99), Column("value", "text", 90, min=10, max=60)]


def generic_blocks(name: str) -> BlockBuilder:
    """The block builder of section `name`; its short form points to the full one."""

    def build(v: Any, report: dict[str, Any], full: bool) -> list[Block]:
        return _full(v) if full else [Paragraph(f"details: stallscan report --section {name}")]

    return build


def _full(v: Any) -> list[Block]:
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        cols = list(dict.fromkeys(k for r in v for k in r))
        return [Table([Column(c, "text", 50) for c in cols], [[num(r.get(c)) for c in cols] for r in v])]
    if not isinstance(v, dict):
        return [Paragraph(num(v))]
    out: list[Block] = []

    def nested(x: Any) -> bool:
        return isinstance(x, dict) or (isinstance(x, list) and any(isinstance(y, (dict, list)) for y in x))

    scalars = [[k, num(x)] for k, x in v.items() if not nested(x)]
    if scalars:
        out.append(Table(PAIR, scalars))
    for k, x in v.items():
        if nested(x):
            out.append(Heading(k.replace("_", " "), 3, k))
            out += [Table(PAIR, [[a, num(b)] for a, b in x.items()])] if isinstance(x, dict) else _full(x)
    return out
