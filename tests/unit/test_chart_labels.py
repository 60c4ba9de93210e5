"""The reference-line labels of the report's charts (the cost chart's "current" and "best ..." thresholds, the
histogram's threshold): read back from the SVG's coordinates, no two labels overlap, none leaves the chart,
no other reference line runs through a label, and lines closer than a few pixels share one label.

A label's box is estimated from its text at 6.5 px a character (an 11 px sans-serif font averages about
6; tests/functional/test_page_layout.py measures the real boxes in Chromium)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from stallscan.report.blocks import BarChart, LineChart
from stallscan.report.charts import bar_chart, line_chart

CHAR = 6.5
SERIES = {"router": [(0.0, 9.0), (2.5, 4.0), (5.0, 5.0), (10.0, 7.0)]}


@dataclass
class Label:
    text: str
    x0: float
    x1: float
    y0: float
    y1: float


def labels(svg: str) -> list[Label]:
    out = []
    for m in re.finditer(r"<text class='mark' x='([\d.]+)' y='([\d.]+)'( text-anchor='end')?>([^<]*)</text>", svg):
        x, y, end, text = float(m.group(1)), float(m.group(2)), bool(m.group(3)), m.group(4)
        w = len(text) * CHAR
        x0 = x - w if end else x
        out.append(Label(text, x0, x0 + w, y - 10, y + 3))
    assert svg.count("class='mark'") == len(out)
    return out


def ref_lines(svg: str) -> list[tuple[float, float, float]]:
    """(x, top, bottom) of every dashed vertical reference line."""
    pat = r"<line x1='([\d.]+)' y1='([\d.]+)' x2='\1' y2='([\d.]+)' stroke='#000' stroke-dasharray='4 3'/>"
    return [(float(a), min(float(b), float(c)), max(float(b), float(c))) for a, b, c in re.findall(pat, svg)]


def size(svg: str) -> tuple[float, float]:
    m = re.search(r"viewBox='0 0 ([\d.]+) ([\d.]+)'", svg)
    assert m
    return float(m.group(1)), float(m.group(2))


def check(svg: str) -> list[Label]:
    """No two labels overlap, each lies inside the chart, and no line runs through a label but its own."""
    ls, lines = labels(svg), ref_lines(svg)
    w, h = size(svg)
    for i, a in enumerate(ls):
        assert a.x0 >= 0 and a.x1 <= w and a.y0 >= 0 and a.y1 <= h, (a, w, h)
        for b in ls[i + 1 :]:
            assert a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0, (a, b)
        # a label's own line ends beside it; any line reaching into its box from elsewhere crosses it
        for x, top, bottom in lines:
            inside = a.x0 < x < a.x1 and top < a.y1 and bottom > a.y0
            assert not inside, (a, x, top, bottom)
    return ls


def cost_chart(marks: dict[str, float]) -> str:
    return line_chart(LineChart("gap threshold", "cost", SERIES, "caption", marks))


@pytest.mark.parametrize("gap", [0.2, 0.35, 0.6])
def test_close_thresholds_get_labels_that_do_not_overlap(gap: float) -> None:
    svg = cost_chart({"best router": 2.0 + gap, "current": 2.0})
    ls = check(svg)
    assert sorted(lb.text for lb in ls) == sorted(["current 2 s", f"best router {2.0 + gap:g} s"])
    assert len(ref_lines(svg)) == 2


def test_thresholds_a_few_pixels_apart_share_one_label() -> None:
    # 0.05 s is about 3 px at 720 px for 0-10 s: two labels could not sit beside their lines
    svg = cost_chart({"best router": 2.05, "current": 2.0})
    (one,) = check(svg)
    assert "current 2 s" in one.text and "best router 2.05 s" in one.text, one


def test_equal_thresholds_share_one_line_and_one_label() -> None:
    svg = cost_chart({"best router": 2.0, "best gap-only": 2.0, "current": 2.0})
    (one,) = check(svg)
    assert one.text == "best router = best gap-only = current 2 s"
    assert len(ref_lines(svg)) == 1


def test_a_threshold_near_the_right_edge_keeps_its_label_inside() -> None:
    svg = cost_chart({"recommended by the marker-aware variant": 9.9, "current": 2.0})
    assert len(check(svg)) == 2


def test_many_thresholds_stack_without_overlap() -> None:
    marks = {"best notification-aware": 0.85, "best router": 1.05, "best gap-only": 1.05, "best marker-aware": 1.2}
    svg = cost_chart({**marks, "best labels": 1.5, "current": 2.0, "best other": 2.1, "far": 7.5})
    ls = check(svg)
    named = " ".join(lb.text for lb in ls)
    for name in [*marks, "best labels", "current", "best other", "far"]:
        assert name in named
    # the plot keeps its height: the labels take a band above it
    assert size(svg)[1] > 280


def test_the_histogram_threshold_label_stays_inside() -> None:
    bins: list[tuple[float, float | None]] = [(0, 1), (1, 2), (2, 5), (5, None)]
    for mark in (0.5, 4.9, 30.0):
        svg = bar_chart(BarChart("t", "x", "y", bins, {"human": [1, 2, 3, 4]}, mark, "c"))
        (one,) = check(svg)
        assert one.text == f"threshold {mark:g} s"
