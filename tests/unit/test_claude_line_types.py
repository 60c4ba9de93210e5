"""The Claude parse's non-assistant events (user prompts, tool results, queue enqueues, system lines, a compaction
summary): each column as its line type gives it, in a run with temp tables and in one with the held Arrow tables
(queries/ingest/claude_code_events.sql, `fmt_events`: one pass over the event lines, each column by type)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from stallscan.ingest import batch
from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect

S: dict[str, Any] = {"sessionId": "s1", "version": "2.1.39"}
LINES: list[dict[str, Any]] = [
    {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "permissionMode": "default",
        "message": {"role": "user", "content": "hello"},
    },
    {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {
            "id": "m1",
            "role": "assistant",
            "model": "claude-x",
            "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
            "usage": {"input_tokens": 1, "output_tokens": 2},
        },
    },
    {
        "type": "user",
        "uuid": "u2",
        "parentUuid": "a1",
        "timestamp": "2026-01-01T00:00:02.000Z",
        "sourceToolAssistantUUID": "a1",
        "message": {
            "id": "mu2",
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "file.txt", "is_error": False}],
        },
    },
    {
        "type": "user",
        "uuid": "u3",
        "parentUuid": "u2",
        "timestamp": "2026-01-01T00:00:03.000Z",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": {"k": 1}}]},
    },
    {
        "type": "queue-operation",
        "operation": "enqueue",
        "timestamp": "2026-01-01T00:00:04.000Z",
        "content": "typed while busy",
    },
    {"type": "queue-operation", "operation": "dequeue", "timestamp": "2026-01-01T00:00:05.000Z"},
    {
        "type": "system",
        "subtype": "turn_duration",
        "uuid": "y1",
        "parentUuid": "u3",
        "isMeta": False,
        "timestamp": "2026-01-01T00:00:06.000Z",
        "durationMs": 6000,
    },
    {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "cb1",
        "parentUuid": None,
        "timestamp": "2026-01-01T00:00:07.000Z",
        "content": "Conversation compacted",
        "compactMetadata": {"trigger": "manual"},
    },
    {
        "type": "user",
        "uuid": "cs1",
        "parentUuid": "cb1",
        "isCompactSummary": True,
        "isMeta": False,
        "timestamp": "2026-01-01T00:00:08.000Z",
        "message": {"role": "user", "content": "This session is continued"},
    },
]
# (line, role, kind, text, tool_call_id, message_id, meta): written by hand from docs/formats.md §1
EXPECTED = [
    (
        1,
        "user",
        "message",
        "hello",
        None,
        None,
        {
            "isMeta": None,
            "isCompactSummary": None,
            "agentId": None,
            "permissionMode": "default",
            "version": "2.1.39",
            "is_error": None,
            "sourceToolAssistantUUID": None,
            "content_is_string": True,
            "compact_trigger": None,
        },
    ),
    (
        2,
        "assistant",
        "message",
        None,
        None,
        "m1",
        {"isMeta": None, "requestId": None, "block_types": ["tool_use"], "version": "2.1.39"},
    ),
    (
        3,
        "user",
        "tool_result",
        "file.txt",
        "t1",
        "mu2",
        {
            "isMeta": None,
            "isCompactSummary": None,
            "agentId": None,
            "permissionMode": None,
            "version": "2.1.39",
            "is_error": False,
            "sourceToolAssistantUUID": "a1",
            "content_is_string": False,
            "compact_trigger": None,
        },
    ),
    (
        4,
        "user",
        "tool_result",
        None,
        "t2",
        None,
        {
            "isMeta": None,
            "isCompactSummary": None,
            "agentId": None,
            "permissionMode": None,
            "version": "2.1.39",
            "is_error": None,
            "sourceToolAssistantUUID": None,
            "content_is_string": False,
            "compact_trigger": None,
        },
    ),
    (
        5,
        "user",
        "queued_input",
        "typed while busy",
        None,
        None,
        {"operation": "enqueue", "isMeta": None, "version": "2.1.39"},
    ),
    (
        7,
        "system",
        "turn_end",
        None,
        None,
        None,
        {"subtype": "turn_duration", "isMeta": False, "version": "2.1.39", "compact_trigger": None},
    ),
    (
        8,
        "system",
        "compaction",
        "Conversation compacted",
        None,
        None,
        {"subtype": "compact_boundary", "isMeta": None, "version": "2.1.39", "compact_trigger": "manual"},
    ),
    (
        9,
        "user",
        "message",
        "This session is continued",
        None,
        None,
        {
            "isMeta": False,
            "isCompactSummary": True,
            "agentId": None,
            "permissionMode": None,
            "version": "2.1.39",
            "is_error": None,
            "sourceToolAssistantUUID": None,
            "content_is_string": True,
            "compact_trigger": "manual",
        },
    ),
]


@pytest.mark.parametrize("hold_from", [1 << 62, 0], ids=["temp tables", "held as Arrow"])
def test_each_line_type_gives_its_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hold_from: int) -> None:
    monkeypatch.setattr(batch, "HOLD_FROM", hold_from)
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps({**line, **S}) + "\n" for line in LINES), encoding="utf-8")
    con = connect(":memory:")
    try:
        ingest_paths(con, [str(path)])
        rows = con.execute(
            "SELECT line, role, kind, text, tool_call_id, message_id, meta FROM events ORDER BY line"
        ).fetchall()
        skipped = con.execute("SELECT line, kind FROM skipped ORDER BY line").fetchall()
    finally:
        con.close()
    assert [(*r[:6], json.loads(r[6])) for r in rows] == EXPECTED
    assert skipped == [(6, "queue-operation:dequeue")]


def _number_guard() -> str:
    """The regex claude_code_events.sql tests a tool result's text with before it tries the cast to DOUBLE."""
    sql = (Path(__file__).parents[2] / "queries/ingest/claude_code_events.sql").read_text(encoding="utf-8")
    found = re.search(r"regexp_full_match\(b\.content, '([^']+)'\)", sql)
    assert found is not None
    return found.group(1)


def test_every_text_that_casts_to_a_number_passes_the_guard_before_the_cast() -> None:
    """The parse casts a tool result's text to DOUBLE (is it a number's JSON?) only when the guard's regex matches:
    the guard may let through texts that are no number, never one that is (else such a line's text would be the
    number's JSON instead of NULL). Every first, middle and last character up to U+2FFF in number-like shapes."""
    con = connect(":memory:")
    try:
        missed = con.execute(
            """WITH c AS (SELECT chr(i::INTEGER) AS x FROM range(1, 12288) t(i)),
                    shape AS (SELECT unnest(['{x}', '{x}1', '1{x}', '1{x}5', '-{x}5', '{x}{x}1', '1.{x}5', '1e{x}5',
                                             '{x}inf', 'in{x}', ' {x}1', '1 {x}', '{x}.5', '0{x}10', '{x}nan']) AS s),
                    t AS (SELECT replace(s, '{x}', x) AS v FROM c, shape)
               SELECT v FROM t WHERE TRY_CAST(v AS DOUBLE) IS NOT NULL AND NOT regexp_full_match(v, ?)""",
            [_number_guard()],
        ).fetchall()
    finally:
        con.close()
    assert missed == []


@pytest.mark.parametrize("hold_from", [1 << 62, 0], ids=["temp tables", "held as Arrow"])
def test_tool_results_that_read_as_numbers_or_almost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hold_from: int
) -> None:
    """A number's JSON gives no text; a string that reads as a number (padded by any whitespace DuckDB trims, with
    underscores, inf / nan) and one that only starts like one (a file listing's line numbers) give their text."""
    monkeypatch.setattr(batch, "HOLD_FROM", hold_from)
    strings = [
        " 12 ",
        "\t5\n",
        "\x0b5\x0c\r",
        "1_000",
        "-Infinity",
        "NaN",
        "+.5e-3",
        "     1\tline one\n     2\tline two",
    ]
    contents: list[Any] = [7, 1e5, -0.25, *strings]
    lines = [
        {
            "type": "user",
            "uuid": f"r{i}",
            "timestamp": f"2026-01-01T00:00:{i:02d}.000Z",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": c}]},
        }
        for i, c in enumerate(contents)
    ]
    path = tmp_path / "s1.jsonl"
    path.write_text("".join(json.dumps({**line, **S}) + "\n" for line in lines), encoding="utf-8")
    con = connect(":memory:")
    try:
        ingest_paths(con, [str(path)])
        texts = [r[0] for r in con.execute("SELECT text FROM events ORDER BY line").fetchall()]
    finally:
        con.close()
    assert texts == [None, None, None, *strings]
