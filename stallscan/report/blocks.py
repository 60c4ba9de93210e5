"""The report's neutral blocks: what every section returns, once, and the three renderers draw (rich for
the terminal, markdown, HTML). A leaf module: plain dataclasses, no rendering.

Text in blocks (paragraphs, cells, items) is plain, already formatted in one style, with two inline marks
every renderer understands: `**bold**` and `[label](#anchor)` (a link to a heading or a session timeline).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2  # 2: a section (the HTML's table of contents lists these), 3: a part of one
    id: str = ""  # the HTML anchor


@dataclass(frozen=True)
class Paragraph:
    text: str
    tone: str = ""  # "" | "warn" (drift, something to look at) | "note" (about the report itself: set apart)


@dataclass(frozen=True)
class Column:
    """A table column. `kind`: num (right-aligned, never cut), id (never cut), text (shrinks to `min`,
    at most `max` wide); `keep`: higher stays longer when a narrow terminal must lose columns."""

    header: str
    kind: str = "num"
    keep: int = 50
    min: int = 10
    max: int | None = None

    @property
    def right(self) -> bool:
        return self.kind == "num"


@dataclass(frozen=True)
class Table:
    columns: list[Column]
    rows: list[list[str]]
    title: str = ""
    flagged: list[bool] = field(default_factory=list)  # rows drawn as flagged (one per row, or empty)
    wide: bool = False  # long text cells: the HTML keeps the others on one line


@dataclass(frozen=True)
class Details:
    """Supporting detail: folded in HTML, a bold caption then its blocks elsewhere."""

    summary: str
    blocks: list[Block]


@dataclass(frozen=True)
class Card:
    label: str
    text: str  # the sentence (terminal and markdown)
    big: str  # the figure (HTML card)
    sub: str = ""  # the figure's context (HTML card)
    tone: str = ""  # "" | "keep" | "move"


@dataclass(frozen=True)
class Headline:
    cards: list[Card]


@dataclass(frozen=True)
class Example:
    kind: str  # e.g. "silent ending"
    harness: str
    why: str
    show: str  # the command that opens it
    excerpt: str = ""
    link: str = ""  # the anchor of its timeline, when the report holds one


@dataclass(frozen=True)
class Examples:
    items: list[Example]


@dataclass(frozen=True)
class BarChart:
    """Grouped bars over bins (lo, hi; hi None: open-ended), one series per name, a marked x value."""

    title: str
    xlabel: str
    ylabel: str
    bins: list[tuple[float, float | None]]
    series: dict[str, list[int]]
    mark: float | None
    caption: str


@dataclass(frozen=True)
class LineChart:
    """Lines through (x, y) points, one per series name; `marks` name x values (vertical lines)."""

    xlabel: str
    ylabel: str
    series: dict[str, list[tuple[float, float]]]
    caption: str
    marks: dict[str, float] = field(default_factory=dict)
    ymax: float | None = None


Block = Heading | Paragraph | Table | Details | Headline | Examples | BarChart | LineChart


def walk(blocks: list[Block]) -> list[Block]:
    """Every block, those inside Details included, in reading order."""
    out: list[Block] = []
    for b in blocks:
        out.append(b)
        if isinstance(b, Details):
            out += walk(b.blocks)
    return out
