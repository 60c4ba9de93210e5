"""The HTML report's layout, measured in real headless Chromium (as tests/functional/test_browser.py starts
it): at a phone's 390 px the table of contents stacks above the content, which gets the width, and nothing
scrolls the page sideways (wide tables scroll inside their box); at desktop width the contents stay a
column on the left. The cost chart's reference-line labels never overlap, measured with the browser's own
text boxes (getBBox), not an estimate.

The page is the real report; a measuring script is added to a copy of it only here (the report has none).
Headless Chromium will not make a window narrower than about 500 px, so the copy is shown in an iframe of
the width measured (with overlay-free, hidden scrollbars, as on a phone); the script writes what it measured
into the outer page, which --dump-dom prints. One browser run measures both widths: the outer page holds one
iframe of each width, and each copy's script names its result by the width it was given."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.functional.test_browser import FLAGS, _browser, report

MEASURE = """<script>
(function () {
  const r = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const doc = document.documentElement;
  const out = {
    viewport: doc.clientWidth,
    page_scroll_width: doc.scrollWidth,
    body_scroll_width: document.body.scrollWidth,
    nav: r(document.querySelector('nav')),
    main: r(document.querySelector('main')),
    cards: [...document.querySelectorAll('.card')].map(r),
    tables: [...document.querySelectorAll('.tw')].map((el) => ({box: r(el), scroll: el.scrollWidth})),
    figures: [...document.querySelectorAll('figure svg')].map(r),
    labels: [...document.querySelectorAll('figure svg')].map((svg) =>
      [...svg.querySelectorAll('text.mark')].map((t) => {
        const b = t.getBBox(); return [b.x, b.y, b.x + b.width, b.y + b.height, t.textContent];
      })),
    viewboxes: [...document.querySelectorAll('figure svg')].map((svg) => svg.viewBox.baseVal.width),
  };
  const pre = parent.document.createElement('pre');
  pre.id = 'measured-WIDTH';
  pre.textContent = JSON.stringify(out);
  parent.document.body.appendChild(pre);
})();
</script>"""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory, reported_file: Path) -> Path:
    _browser()
    tmp = tmp_path_factory.mktemp("page")
    db = tmp / "p.duckdb"
    shutil.copy(reported_file, db)  # the run's report of the real files (its stored cells: rendered, not computed)
    out = tmp / "report.html"
    report(db, "-o", str(out))
    text = out.read_text(encoding="utf-8")
    assert "<script" not in text  # the report itself runs no script
    measured = tmp / "measured.html"
    measured.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    return measured


WIDTHS = (390, 1280)  # a phone, a desktop


@pytest.fixture(scope="module")
def measured(page: Path) -> dict[int, dict[str, Any]]:
    """What the script measured in the page at each of WIDTHS, from one headless Chromium run."""
    text = page.read_text(encoding="utf-8")
    frames = "".join(
        f"<iframe style='border:0;display:block' width='{w}' height='900' "
        f'srcdoc="{html.escape(text.replace("measured-WIDTH", f"measured-{w}"), quote=True)}"></iframe>'
        for w in WIDTHS
    )
    frame = page.parent / "frames.html"
    frame.write_text(f"<!doctype html><html><body style='margin:0'>{frames}</body></html>", encoding="utf-8")
    dom = subprocess.run(
        [_browser(), *FLAGS, f"--user-data-dir={page.parent / 'profile'}", "--hide-scrollbars"]
        + ["--window-size=1400,1000", "--dump-dom", frame.as_uri()],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    out: dict[int, dict[str, Any]] = {}
    for w in WIDTHS:
        m = re.search(rf"<pre id=\"measured-{w}\">(.*?)</pre>", dom.stdout, re.S)
        assert m, (w, dom.stdout[-2000:])
        got: dict[str, Any] = json.loads(html.unescape(m.group(1)))
        assert got["viewport"] == w, got["viewport"]  # the frame is the viewport asked for
        out[w] = got
    return out


def test_phone_width_stacks_the_contents_and_gives_the_content_the_width(measured: dict[int, Any]) -> None:
    m = measured[390]
    left, top, right, _bottom = m["main"]
    assert right - left >= 340, m["main"]  # the content column, not ~100 px beside a fixed contents column
    nav = m["nav"]
    assert nav[3] <= top + 1, (nav, m["main"])  # the contents sit above the content
    assert nav[2] - nav[0] >= 340, nav  # and take the width too
    # nothing scrolls the page sideways
    assert m["page_scroll_width"] <= 390 and m["body_scroll_width"] <= 390, m
    # cards wrap into the column; each one fits the viewport
    assert m["cards"], m
    for c in m["cards"]:
        assert c[0] >= 0 and c[2] <= 390, c
    # tables too wide for the column scroll inside their own box, which stays within the viewport
    assert m["tables"]
    for t in m["tables"]:
        assert t["box"][0] >= 0 and t["box"][2] <= 390, t
    assert any(t["scroll"] > t["box"][2] - t["box"][0] for t in m["tables"])  # at least one does scroll
    # charts shrink to the column
    assert m["figures"]
    for f in m["figures"]:
        assert f[0] >= 0 and f[2] <= 390, f


def test_desktop_width_keeps_the_contents_column(measured: dict[int, Any]) -> None:
    m = measured[1280]
    nav, main = m["nav"], m["main"]
    assert nav[2] <= main[0], (nav, main)  # contents left of the content
    assert abs(nav[1] - main[1]) < 40, (nav, main)  # side by side, not stacked
    assert 180 <= nav[2] - nav[0] <= 220, nav  # the 200 px contents column
    assert main[2] - main[0] >= 900, main
    assert m["page_scroll_width"] <= 1280, m
    for svg, vb in zip(m["figures"], m["viewboxes"], strict=True):
        assert abs((svg[2] - svg[0]) - vb) < 1, (svg, vb)  # charts at their drawn size


def test_cost_chart_labels_never_overlap_in_the_browser(measured: dict[int, Any]) -> None:
    m = measured[1280]
    labelled = [ls for ls in m["labels"] if ls]
    assert labelled, "no chart carries reference-line labels"
    for labels, vb in zip(m["labels"], m["viewboxes"], strict=True):
        for i, a in enumerate(labels):
            assert a[0] >= 0 and a[2] <= vb, (a, vb)  # inside the chart, not cut at its edge
            for b in labels[i + 1 :]:
                apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
                assert apart, (a, b)
