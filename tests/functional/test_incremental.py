"""Re-ingest is incremental and idempotent: unchanged files skipped, grown files read from where they
stopped, rewritten files replaced; the tables end identical to a one-shot ingest."""

from __future__ import annotations

import json
import os
from typing import Any

from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect
from tests.helpers import SAMPLES, claude_line, memory_copy, write_lines

TABLE_ORDER = {"events": "file, line, part", "skipped": "file, line", "rejects": "file, line"}


def snapshot(con):
    """Ordered checksums of every row of the content tables (not the per-run bookkeeping)."""
    out = {}
    for table, order in TABLE_ORDER.items():
        out[table] = con.execute(
            f"SELECT count(*), md5(string_agg(t::VARCHAR, '|' ORDER BY {order})) FROM {table} t"
        ).fetchone()
    return out


def test_twice_is_identical_and_second_run_reads_nothing(sample_ingested_file):
    con = memory_copy(sample_ingested_file)  # the first run: the session's ingest of sample_logs
    first = snapshot(con)
    n_files = con.execute("SELECT count(*) FROM files WHERE status = 'ok'").fetchone()[0]
    assert first["events"][0] > 0 and n_files > 0
    res2 = ingest_paths(con, [str(SAMPLES)])
    assert res2.ingested == 0 and res2.unchanged == n_files and res2.events == 0 and res2.bytes == 0
    assert snapshot(con) == first
    con.close()


def test_grown_file_reads_only_new_lines_and_matches_one_shot(tmp_path):
    lines = [claude_line("user", 1), claude_line("assistant", 2), claude_line("user", 3), claude_line("assistant", 4)]
    f = tmp_path / "grow.jsonl"
    write_lines(f, lines[:2])
    con = connect(":memory:")
    ingest_paths(con, [str(f)])
    with open(f, "a", encoding="utf-8") as fh:
        fh.write("\n".join(lines[2:]) + "\n")
    res = ingest_paths(con, [str(f)])
    # only the tail was read: the last reply (resume point) and the two new lines
    assert res.lines == 3, res.as_dict()
    one_shot = connect(":memory:")
    ingest_paths(one_shot, [str(f)])
    assert snapshot(con) == snapshot(one_shot)
    assert con.execute("SELECT seq, line FROM events ORDER BY seq").fetchall() == [(1, 1), (2, 2), (3, 3), (4, 4)]


def test_reply_split_across_two_ingests_still_merges(tmp_path):
    """A live log read mid-reply: the second block of the reply arrives after the first ingest."""
    part: dict[str, Any] = {
        "type": "assistant",
        "sessionId": "s1",
        "isSidechain": False,
        "message": {"id": "msg_9", "role": "assistant", "stop_reason": None},
    }
    b1 = dict(part, uuid="b1", timestamp="2026-01-01T00:00:05Z")
    b1["message"] = dict(part["message"], content=[{"type": "text", "text": "Reading."}])
    b2 = dict(part, uuid="b2", timestamp="2026-01-01T00:00:06Z")
    b2["message"] = dict(part["message"], content=[{"type": "tool_use", "id": "t", "name": "Read", "input": {}}])
    f = tmp_path / "live.jsonl"
    write_lines(f, [claude_line("user", 1), json.dumps(b1)])
    con = connect(":memory:")
    ingest_paths(con, [str(f)])
    with open(f, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(b2) + "\n")
    ingest_paths(con, [str(f)])
    assert con.execute(
        "SELECT line, last_line, n_records, n_tool_calls FROM events WHERE role = 'assistant'"
    ).fetchall() == [(2, 3, 2, 1)]


def test_rewritten_file_is_replaced(tmp_path):
    f = tmp_path / "r.jsonl"
    write_lines(f, [claude_line("user", 1), claude_line("assistant", 2), claude_line("user", 3)])
    con = connect(":memory:")
    ingest_paths(con, [str(f)])
    write_lines(f, [claude_line("user", 7)])  # rotated / truncated: shorter, different bytes
    os.utime(f, (1, 1))
    ingest_paths(con, [str(f)])
    assert con.execute("SELECT line, text FROM events").fetchall() == [(1, "prompt 7")]
    assert con.execute("SELECT n_lines FROM files").fetchone()[0] == 1


def test_grown_codex_and_hermes_files_match_one_shot(tmp_path):
    for name in ("codex/rollout.jsonl", "hermes/narration_nudged_exhausted.jsonl"):
        src = SAMPLES / name
        lines = src.read_text(encoding="utf-8").splitlines()
        f = tmp_path / src.name  # (one path for every cut: each cut starts a new database)
        write_lines(f, lines)
        ref = connect(":memory:")  # the whole file in one ingest
        ingest_paths(ref, [str(f)])
        want = snapshot(ref)
        for cut in sorted(set(range(1, len(lines), 3)) | {len(lines) - 1}):  # every 3rd cut and the last
            write_lines(f, lines[:cut])
            con = connect(":memory:")
            ingest_paths(con, [str(f)])
            write_lines(f, lines)
            ingest_paths(con, [str(f)])
            assert snapshot(con) == want, (name, cut)
            con.close()


def test_big_files_are_read_in_chunks_with_the_same_result(tmp_path, monkeypatch):
    """A file larger than one batch is ingested chunk by chunk (bounded memory), same tables as one pass."""
    import stallscan.ingest.run as ing

    corpus = [
        SAMPLES / "claude-code" / "session.jsonl",
        SAMPLES / "codex" / "rollout.jsonl",
        SAMPLES / "hermes" / "narration_nudged_exhausted.jsonl",
    ]
    ref = connect(":memory:")
    ingest_paths(ref, [str(p) for p in corpus])
    monkeypatch.setattr(ing, "BATCH_BYTES", 700)  # a few lines per chunk
    chunked = connect(":memory:")
    res = ingest_paths(chunked, [str(p) for p in corpus])
    assert snapshot(chunked) == snapshot(ref)
    assert res.ingested == 3 and res.lines == sum(len(p.read_text().splitlines()) for p in corpus)
    assert chunked.execute("SELECT count(*) FROM files WHERE status <> 'ok' OR size < 0").fetchone()[0] == 0
