"""The report as one self-contained HTML dashboard: headline cards, a table of contents, inline SVG
charts with real axes and ticks, every example linked to its session's timeline. No script, no fetch.

The HTML renderer of the report blocks (stallscan.report.blocks): the same blocks the terminal and the
Markdown draw, so every format says the same thing.
"""

from __future__ import annotations

import html
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
from stallscan.report.cells import num
from stallscan.report.charts import bar_chart, line_chart

CSS = """
:root{--fg:#1d2330;--muted:#5d6675;--line:#d9dde4;--card:#f5f7fa;--accent:#1f5fbf;--bad:#b3261e}
*{box-sizing:border-box}body{font:14px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;color:var(--fg);margin:0}
header{padding:20px 32px 8px;border-bottom:1px solid var(--line)}h1{margin:0 0 4px;font-size:22px}
.wrap{display:grid;grid-template-columns:200px minmax(0,1fr);gap:28px;padding:0 32px 48px}
nav{position:sticky;top:0;align-self:start;padding-top:20px;font-size:13px}nav ol{padding-left:18px;margin:0}
nav a{color:var(--fg);text-decoration:none}nav a:hover{color:var(--accent)}
main{min-width:0}h2{margin:28px 0 8px;padding-bottom:4px;border-bottom:2px solid var(--fg);font-size:18px}
h3{margin:20px 0 6px;font-size:15px}.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(240px,1fr));
gap:14px;margin:14px 0}.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.card .big{font-size:28px;font-weight:700;line-height:1.1}.card .label{font-size:12px;text-transform:uppercase;
letter-spacing:.04em;color:var(--muted)}.card .sub{font-size:13px;color:var(--muted);margin-top:4px}
.card.keep .big{color:#2e7d32}.card.move .big{color:var(--bad)}
table{border-collapse:collapse;margin:6px 0 14px;font-size:13px}th,td{border-bottom:1px solid var(--line);
padding:3px 8px;text-align:left;vertical-align:top}th{background:var(--card);font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.wide td{white-space:nowrap}
.wide td:last-child{white-space:normal;overflow-wrap:anywhere;min-width:14em;max-width:40em}.tw{overflow-x:auto}tr.flag td{color:var(--bad);font-weight:600}
details{margin:6px 0 14px}summary{cursor:pointer;color:var(--accent)}
ol.ex li{margin-bottom:8px}code{background:var(--card);padding:1px 4px;border-radius:3px;font-size:12.5px}
blockquote{margin:2px 0 0;color:var(--muted);font-size:13px}p.note{color:var(--muted)}
figure{margin:8px 0 16px}figcaption{font-size:12px;color:var(--muted)}svg text{font:11px system-ui,sans-serif}
.legend span{display:inline-block;margin-right:14px;font-size:12px}.legend i{display:inline-block;width:22px;
height:0;border-top:3px solid;vertical-align:middle;margin-right:5px}
figure svg{max-width:100%;height:auto}main p,main li,blockquote,code{overflow-wrap:anywhere}
@media (max-width:760px){header{padding:14px 12px 6px}.wrap{grid-template-columns:minmax(0,1fr);gap:0;padding:0 12px 32px}
nav{position:static;padding:12px 0 4px;border-bottom:1px solid var(--line)}
.cards{grid-template-columns:repeat(auto-fit,minmax(min(240px,100%),1fr))}}
"""

LINK = re.compile(r"\[([^\]]+)\]\(#([^)]*)\)")
BOLD = re.compile(r"\*\*([^*]+)\*\*")
NUMERIC = re.compile(r"^[–\-]?[\d,.]+( ?%| s| min| h| days)?$|^–$")


def _inline(s: str) -> str:
    s = html.escape(str(s), quote=False)
    s = LINK.sub(lambda m: f"<a href='#{m.group(2)}'>{m.group(1)}</a>", s)
    return BOLD.sub(lambda m: f"<strong>{m.group(1)}</strong>", s)


def _table(b: Table) -> str:
    cls = " class='wide'" if b.wide else ""
    out = [
        f"<div class='tw'><table{cls}><thead><tr>"
        + "".join(f"<th>{html.escape(c.header)}</th>" for c in b.columns)
        + "</tr></thead><tbody>"
    ]
    for i, r in enumerate(b.rows):
        flagged = i < len(b.flagged) and b.flagged[i]
        out.append(
            ("<tr class='flag'>" if flagged else "<tr>")
            + "".join(
                f"<td class='n'>{_inline(c)}</td>" if NUMERIC.match(str(c)) else f"<td>{_inline(c)}</td>" for c in r
            )
            + "</tr>"
        )
    return "".join(out) + "</tbody></table></div>"


def _headline(b: Headline) -> str:
    """Cards (the figures), then the sentences."""
    out = ["<div class='cards'>"]
    for c in b.cards:
        tone = f" {c.tone}" if c.tone else ""
        out.append(
            f"<div class='card{tone}'><div class='label'>{html.escape(c.label)}</div>"
            f"<div class='big'>{html.escape(c.big)}</div><div class='sub'>{html.escape(c.sub)}</div></div>"
        )
    out.append("</div>\n<ul>" + "".join(f"<li>{_inline(f'**{c.label}**: {c.text}')}</li>" for c in b.cards) + "</ul>")
    return "".join(out)


def _examples(b: Examples) -> str:
    out = ["<ol class='ex'>"]
    for e in b.items:
        title = html.escape(f"{e.kind} ({e.harness})")
        link = f"<a href='#{e.link}'>{title}</a>" if e.link else title
        out.append(
            f"<li>{link}: {html.escape(e.why)}. <code>{html.escape(e.show)}</code>"
            + (f"<blockquote>{html.escape(e.excerpt)}</blockquote>" if e.excerpt else "")
            + "</li>"
        )
    return "".join(out) + "</ol>"


def _draw(b: Block) -> str:
    if isinstance(b, Heading):
        return f"<h{b.level} id='{html.escape(b.id)}'>{html.escape(b.text)}</h{b.level}>"
    if isinstance(b, Paragraph):
        return f"<p>{_inline(b.text)}</p>"
    if isinstance(b, Table):
        return _table(b)
    if isinstance(b, Details):
        return f"<details><summary>{html.escape(b.summary)}</summary>{render_blocks(b.blocks)}</details>"
    if isinstance(b, Headline):
        return _headline(b)
    if isinstance(b, Examples):
        return _examples(b)
    if isinstance(b, BarChart):
        return bar_chart(b)
    if isinstance(b, LineChart):
        return line_chart(b)
    raise TypeError(f"no HTML for {type(b).__name__}")


def render_blocks(blocks: list[Block]) -> str:
    return "\n".join(x for x in map(_draw, blocks) if x)


def to_html(data: dict[str, Any]) -> str:
    from stallscan.report.layout import report_blocks

    blocks = report_blocks(data)
    toc = [b for b in blocks if isinstance(b, Heading) and b.level == 2]
    nav = (
        "<nav><strong>Contents</strong><ol>"
        + "".join(f"<li><a href='#{html.escape(b.id)}'>{html.escape(b.text)}</a></li>" for b in toc)
        + "</ol></nav>"
    )
    o = data.get("options") or {}
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'><title>stallscan report</title>"
        f"<style>{CSS}</style></head><body><header><h1>stallscan report</h1>"
        f"<p class='note'>Silent plan-as-answer endings, misread turns and the gap threshold, replayed from the "
        f"transcripts (threshold {num(o.get('threshold'))} s, retry bound {num(o.get('retry_bound'))}).</p></header>"
        f"<div class='wrap'>{nav}<main>{render_blocks(blocks)}</main></div></body></html>\n"
    )
