"""The headline block for the terminal (rich renderables; the CLI prints them)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text


def headline_renderable(h: dict[str, Any]) -> Group:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for it in h["items"]:
        grid.add_row(Text("▸", style="bold"), Text.assemble((f"{it['label']}: ", "bold"), it["text"]))
    parts: list[Any] = [Text("stallscan: the answer first", style="bold underline"), grid]
    if h["examples"]:
        ex = Table.grid(padding=(0, 1))
        ex.add_column(no_wrap=True)
        ex.add_column()
        for i, e in enumerate(h["examples"], 1):
            t = Text(f"{e['kind']} ({e['harness']}): {e['why']}")
            if e["excerpt"]:
                x = e["excerpt"] if len(e["excerpt"]) <= 68 else e["excerpt"][:67] + "…"
                t.append(f'\n"{x}"', style="dim")
            t.append("\n")
            t.append(e["show"], style="cyan")
            ex.add_row(f"{i}.", t)
        parts += [Text("Worst examples", style="bold"), ex]
    return Group(*parts)
