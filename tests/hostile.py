"""Helpers for the fault and hostile-input tests: the line-accounting invariant, checked
against the tables and against an independent count of the file's lines."""

from __future__ import annotations

import json
from pathlib import Path

from stallscan.ingest.detect import SPECS

# formats whose file is one JSON object: the list inside it whose elements are numbered as lines
RECORD_LISTS = {
    "opencode": "messages",
    "swe_agent": "history",
    "gemini_cli_json": "messages",
    "gemini_cli_history": "history",
}

TABLE_ORDER = {"events": "file, line, part", "skipped": "file, line", "rejects": "file, line"}


def snapshot(con):
    """Ordered checksums of every row of the content tables (same as tests/functional/test_incremental.py)."""
    out = {}
    for table, order in TABLE_ORDER.items():
        out[table] = con.execute(
            f"SELECT count(*), md5(string_agg(t::VARCHAR, '|' ORDER BY {order})) FROM {table} t"
        ).fetchone()
    return out


def _elements(data: bytes, otherwise: int) -> int:
    """The element count of a file that is one JSON array (read element by element), else `otherwise`."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return otherwise
    return len(doc) if isinstance(doc, list) else otherwise


def physical_lines(data: bytes) -> int:
    """Lines in a file counted the plain way: newlines, plus an unterminated last fragment."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def accounting_errors(con, check_files: bool = True, only: str | None = None) -> list[str]:
    """Every way the tables break 'lines in = events' records + skipped + rejects'; [] when they hold.

    - per `files` row: n_lines (and its parts) equal the rows really present in events/skipped/rejects;
    - no events/skipped/rejects row belongs to a file without a `files` row (nothing half-ingested);
    - a line is at most one of: an event's first line, a skip, a reject;
    - with check_files: for a fully read (status ok) line-based file, n_lines (+1 when a truncated last
      line is pending) equals its newline count read independently from disk; whole-document files
      equal their element count.
    """
    errors = []
    rows = con.execute(
        """
        WITH ev AS (SELECT file, coalesce(sum(n_records) FILTER (WHERE part = 0), 0)
                                 + count(DISTINCT line) FILTER (WHERE part > 0) AS n, count(*) AS k
                    FROM events GROUP BY file),
             sk AS (SELECT file, count(*) AS n FROM skipped GROUP BY file),
             rj AS (SELECT file, count(*) AS n FROM rejects GROUP BY file)
        SELECT f.path, f.status, f.source_format, f.n_lines, f.n_event_lines, f.n_skipped, f.n_rejects, f.n_events,
               coalesce(ev.n, 0), coalesce(sk.n, 0), coalesce(rj.n, 0), coalesce(ev.k, 0),
               f.consumed_lines, f.consumed_bytes, f.pending_bytes, f.size, f.compression
        FROM files f LEFT JOIN ev ON ev.file = f.path LEFT JOIN sk ON sk.file = f.path LEFT JOIN rj ON rj.file = f.path
        WHERE $only IS NULL OR f.path = $only
    """,
        {"only": only},
    ).fetchall()
    for (
        path,
        status,
        fmt,
        n_lines,
        n_ev,
        n_sk,
        n_rj,
        n_events,
        ev,
        sk,
        rj,
        k,
        consumed_lines,
        consumed_bytes,
        pending,
        _size,
        compression,
    ) in rows:
        if status in ("unrecognized", "empty"):
            if ev or sk or rj:
                errors.append(f"{path}: {status} but has rows ({ev}, {sk}, {rj})")
            continue
        if (n_lines, n_ev, n_sk, n_rj, n_events) != (ev + sk + rj, ev, sk, rj, k):
            errors.append(
                f"{path}: files says {(n_lines, n_ev, n_sk, n_rj, n_events)}, tables hold {(ev + sk + rj, ev, sk, rj, k)}"
            )
        if fmt and not SPECS[fmt].whole_file and consumed_lines != n_lines:
            errors.append(f"{path}: consumed {consumed_lines} lines, accounted {n_lines}")
        if check_files and status == "ok" and compression == "none" and Path(path).exists():
            data = Path(path).read_bytes()
            if fmt and SPECS[fmt].whole_file:
                try:
                    doc = json.loads(data)
                    expect = len(doc) if isinstance(doc, list) else 1
                    inner = RECORD_LISTS.get(fmt)
                    if inner and isinstance(doc, dict) and isinstance(doc.get(inner), list):
                        expect = len(doc[inner])  # a single-object document: its record list holds the lines
                except (ValueError, RecursionError):
                    expect = None
                if expect is not None and expect != n_lines:
                    errors.append(f"{path}: {expect} elements, accounted {n_lines}")
            else:
                expect = physical_lines(data)
                got = n_lines + (1 if pending else 0)
                if data.lstrip()[:1] == b"[" and expect != got:
                    expect = _elements(data, expect)  # a line format's records saved as one JSON array
                if expect != got:
                    errors.append(f"{path}: {expect} lines on disk, accounted {n_lines} + pending {bool(pending)}")
                if consumed_bytes + (pending or 0) != len(data):
                    errors.append(f"{path}: consumed {consumed_bytes} + pending {pending} of {len(data)} bytes")
    orphans = con.execute("""
        SELECT t, file, count(*) FROM (
            SELECT 'events' AS t, file FROM events UNION ALL SELECT 'skipped', file FROM skipped
            UNION ALL SELECT 'rejects', file FROM rejects)
        WHERE file NOT IN (SELECT path FROM files) GROUP BY ALL""").fetchall()
    errors += [f"{f}: {n} {t} rows without a files row" for t, f, n in orphans]
    dup = con.execute("""
        SELECT file, line, count(*) FROM (
            SELECT DISTINCT file, line, 'e' FROM events UNION ALL SELECT file, line, 's' FROM skipped
            UNION ALL SELECT file, line, 'r' FROM rejects)
        GROUP BY ALL HAVING count(*) > 1 LIMIT 5""").fetchall()
    errors += [f"{f}: line {l} accounted {n} times" for f, l, n in dup]
    return errors
