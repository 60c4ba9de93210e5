"""Build rich renderables from core results (the CLI prints them; nothing here prints)."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from stallscan.ingest.result import IngestResult


def ingest_summary(res: IngestResult, verbose: bool = False) -> Group:
    """The ingest summary. The skipped records by kind (dozens of kinds on a real corpus) only when
    `verbose`; else one line with their total and how to list them."""
    t = Table(title="stallscan ingest", show_header=False, box=None, pad_edge=False)
    t.add_column(style="bold")
    t.add_column(justify="right")
    # each count names its population (issue 23); files found = read this run + unchanged + empty +
    # unrecognised + unreadable, and "with events" is the report corpus line's "events from N files"
    t.add_row("files found", f"{res.files:,}")
    t.add_row("  read this run", f"{res.ingested:,}")
    t.add_row("    with events", f"{res.files_with_events:,}")
    t.add_row("  unchanged since last ingest", f"{res.unchanged:,}")
    if res.empty:
        t.add_row("  empty", f"{res.empty:,}")
    if res.unrecognized:
        t.add_row("  unrecognised", f"{len(res.unrecognized):,}")
    if res.unreadable:
        t.add_row("  unreadable", f"{len(res.unreadable):,}")
    if res.emptied:
        t.add_row("    read before: rows removed", f"{len(res.emptied):,}")
    if res.left_out:
        t.add_row("files left out (see the note)", f"{sum(res.left_out.values()):,}")
    t.add_row("sessions touched", f"{res.sessions:,}")
    t.add_row("lines read", f"{res.lines:,}")
    t.add_row("  skipped knowingly", f"{sum(res.skipped.values()):,}")
    t.add_row("  rejected", f"{res.rejects:,}")
    t.add_row("events written", f"{res.events:,}")
    if res.pending:
        t.add_row("pending", f"{res.pending:,} truncated last line(s), retried next ingest")
    t.add_row("seconds", f"{res.seconds:.2f}")
    t.add_row("MB/s", f"{res.mb_per_s:.1f}")
    parts: list[RenderableType] = [t]
    if res.skipped and not verbose:
        n, kinds = sum(res.skipped.values()), len(res.skipped)
        parts.append(
            Text(
                f"{n:,} record(s) skipped knowingly, of {kinds} kind(s): --verbose lists the kinds",
                style="dim",
            )
        )
    elif res.skipped:
        s = Table(title="skipped by kind", box=None)
        s.add_column("kind")
        s.add_column("lines", justify="right")
        for kind, n in sorted(res.skipped.items(), key=lambda kv: (-kv[1], kv[0])):
            s.add_row(kind, f"{n:,}")
        parts.append(s)
    for row in res.unknown_shapes:
        parts.append(Text(unknown_shape_line(row), style="yellow"))
    for path in res.unrecognized[:10]:
        parts.append(Text(f"unrecognised format: {path}", style="yellow"))
    if len(res.unrecognized) > 10:
        parts.append(Text(f"... and {len(res.unrecognized) - 10} more unrecognised files", style="yellow"))
    for path, status, n in res.emptied:
        now = "empty" if status == "empty" else "in no format stallscan reads"
        parts.append(Text(f"now {now}, its {n:,} earlier row(s) removed: {path}", style="yellow"))
    for path, why in res.unreadable:
        parts.append(Text(f"unreadable: {path} ({why})", style="red"))
    return Group(*parts)


def unknown_shape_line(row: dict[str, Any]) -> str:
    """'412 records of unknown shape in claude_code 2.1.180: type `x`' (drift: see docs/formats.md)."""
    what, _, name = str(row["shape"]).partition(" ")
    shape = f"{what} `{name}`" if name else f"`{what}`"
    version = f" {row['version']}" if row.get("version") else ""
    n = int(row["records"])
    return f"{n:,} record{'s' if n != 1 else ''} of unknown shape in {row['format']}{version}: {shape}"


def table_from_rows(columns: list[str], rows: list[tuple[Any, ...]], title: str | None = None) -> Table:
    t = Table(title=title)
    for c in columns:
        t.add_column(c)
    for r in rows:
        t.add_row(*["" if v is None else str(v) for v in r])
    return t
