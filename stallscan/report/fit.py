"""Tables that fit the terminal: columns are dropped by priority, numbers and ids are never cut.

`fit_table(cols, rows, width)` keeps every column whose cells fit at full width; when the sum does not
fit, the column with the lowest `keep` rank goes first (the note under the table names what was left
out). Text columns ("text") shrink down to `min` characters and end in an ellipsis; number and id
columns ("num", "id") always get the width of their widest cell. No column is ever zero wide.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from stallscan.report.blocks import Column

SEP = 3  # rich draws padding 1 + separator 1 + padding 1 between two columns (box SIMPLE_HEAD, no edge)


Col = Column  # the block model's column (header, kind num | id | text, keep, min, max)


def width() -> int:
    """The terminal width: $COLUMNS when set (tests pin it), else the terminal's, else 80."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    return shutil.get_terminal_size((80, 24)).columns


def _cell_len(v: object) -> int:
    return max((len(line) for line in str(v).split("\n")), default=0)


def _need(col: Col, cells: list[Any]) -> int:
    """Narrowest width the column can take without cutting what must not be cut."""
    longest = max((_cell_len(c) for c in cells), default=0)
    if col.kind == "text":
        return max(min(col.min, max(longest, len(col.header))), 1)
    return max(len(col.header), longest, 1)


def fit_columns(cols: list[Col], rows: list[list[Any]], avail: int | None = None) -> list[int]:
    """Indexes of the columns kept (in their order) so the table fits `avail` characters."""
    avail = avail or width()
    keep = list(range(len(cols)))
    needs = [_need(c, [r[i] for r in rows]) for i, c in enumerate(cols)]

    def total(idx: list[int]) -> int:
        return sum(needs[i] for i in idx) + SEP * (len(idx) - 1)

    while len(keep) > 1 and total(keep) > avail:
        drop = min(keep, key=lambda i: (cols[i].keep, -i))
        keep.remove(drop)
    return keep


def _allot(cols: list[Col], rows: list[list[Any]], keep: list[int], avail: int) -> dict[int, int]:
    """Column widths: fixed columns at their widest cell, text columns share what is left."""
    out: dict[int, int] = {}
    text = []
    for i in keep:
        cells = [r[i] for r in rows]
        need = _need(cols[i], cells)
        if cols[i].kind == "text":
            natural = max(need, max((_cell_len(c) for c in cells), default=0), len(cols[i].header))
            natural = min(natural, max(cols[i].max or natural, need))
            out[i] = natural
            text.append((i, need))
        else:
            out[i] = need
    spare = avail - sum(out.values()) - SEP * (len(keep) - 1)
    while spare < 0 and text:  # shrink the widest text column one step at a time, never below its need
        i, need = max(text, key=lambda x: out[x[0]] - x[1])
        if out[i] <= need:
            break
        out[i] -= 1
        spare += 1
    return out


def fit_table(
    cols: list[Col],
    rows: list[list[Any]],
    title: str | None = None,
    avail: int | None = None,
    styles: list[str | None] | None = None,
    note_dropped: bool = True,
) -> RenderableType:
    """A rich Table (or Group: table + a note naming dropped columns) that fits `avail` columns."""
    avail = avail or width()
    keep = fit_columns(cols, rows, avail)
    t = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=False,
    )
    widths = _allot(cols, rows, keep, avail)
    for i in keep:
        c = cols[i]
        if c.kind == "text":
            t.add_column(c.header, no_wrap=True, overflow="ellipsis", width=widths[i])
        else:
            t.add_column(c.header, justify="right" if c.right else "left", no_wrap=True, width=widths[i])
    for n, r in enumerate(rows):
        t.add_row(
            *[r[i] if isinstance(r[i], Text) else str(r[i]) for i in keep], style=(styles or [None] * len(rows))[n]
        )
    dropped = [cols[i].header for i in range(len(cols)) if i not in keep]
    if dropped and note_dropped:
        return Group(t, Text(f"(not shown at {avail} columns: {', '.join(dropped)})", style="dim"))
    return t
