"""The staged lines as Arrow strings (ingest/staged.as_text, queries/ingest/stage_lines_text.sql) give the same rows
as the line-by-line decode (stage_lines.sql): a batch with an invalid UTF-8 line falls back to the decode, and blank
lines, a byte-order mark, CRLF line ends and a NUL inside a string come out the same either way."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from stallscan.ingest import batch, staged
from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect


def _line(i: int, text: str, kind: str = "user") -> bytes:
    rec = {
        "type": kind,
        "uuid": f"u{i}",
        "sessionId": "s1",
        "timestamp": f"2026-01-01T00:00:{i:02d}.000Z",
        "message": {"role": kind, "content": text},
    }
    if kind == "assistant":
        rec["message"] = {"id": f"m{i}", "role": "assistant", "content": [{"type": "text", "text": text}]}
    return json.dumps(rec, ensure_ascii=False).encode()


def _corpus(root: Path) -> list[Path]:
    clean = root / "clean.jsonl"  # a byte-order mark, blank lines, CRLF ends, a NUL escaped in a string
    clean.write_bytes(
        b"\xef\xbb\xbf"
        + _line(1, "caf\u00e9 \U0001f680")
        + b"\r\n\n   \n"
        + _line(2, "a\u0000b", "assistant")
        + b"\r\n"
        + _line(3, "last")
        + b"\n"
    )
    bad = root / "bad.jsonl"  # an invalid UTF-8 line between good ones, and a line that is no JSON
    bad.write_bytes(
        _line(1, "one") + b"\n" + b'{"type":"user","x":"\xff\xfe"}\n' + b"{not json\n" + _line(4, "four") + b"\n"
    )
    return [clean, bad]


def _rows(paths: list[Path]) -> dict[str, list[tuple]]:
    con = connect(":memory:")
    try:
        ingest_paths(con, [str(p) for p in paths])
        return {
            t: con.execute(f"SELECT * EXCLUDE (ingested_at) FROM {t} ORDER BY ALL").fetchall()
            if t == "files"
            else con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
            for t in ("events", "skipped", "rejects", "files")
        }
    finally:
        con.close()


@pytest.mark.parametrize("hold_from", [1 << 62, 0], ids=["temp tables", "held as Arrow"])
def test_text_staging_gives_the_decoded_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hold_from: int) -> None:
    monkeypatch.setattr(batch, "HOLD_FROM", hold_from)
    paths = _corpus(tmp_path)
    taken: list[bool] = []
    as_text = staged.as_text

    def spy(lines: pa.Table) -> pa.Table | None:
        out = as_text(lines)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(staged, "as_text", spy)
    fast = {str(p.name): _rows([p]) for p in paths}
    assert taken == [True, False]  # the clean file as text, the one with an invalid line decoded
    monkeypatch.setattr(staged, "as_text", lambda lines: None)
    slow = {str(p.name): _rows([p]) for p in paths}
    assert fast == slow
    # (as the decode gives them: the line after the byte-order mark is a reject, "invalid JSON", on either path)
    assert [(r[3], r[12]) for r in sorted(fast["clean.jsonl"]["events"], key=lambda r: r[3])] == [
        (4, "assistant"),
        (5, "user"),
    ]
    assert [r[1:] for r in fast["clean.jsonl"]["skipped"]] == [(2, "blank_line"), (3, "blank_line")]
    assert [r[1:3] for r in fast["clean.jsonl"]["rejects"]] == [(1, "invalid JSON")]
    assert [r[1:3] for r in fast["bad.jsonl"]["rejects"]] == [(2, "invalid UTF-8"), (3, "invalid JSON")]
