"""Hand-made edge cases: every line ends up an event, a counted skip, or a reject with file/line/reason."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pyarrow as pa

from stallscan.ingest.run import ingest_paths
from tests.helpers import claude_line, write_lines


def accounting(con, path):
    return con.execute(
        "SELECT n_lines, n_event_lines, n_skipped, n_rejects, n_events, status FROM files WHERE path = ?", [str(path)]
    ).fetchone()


def test_bad_lines_are_rejected_with_line_and_reason(con, tmp_path):
    f = tmp_path / "s.jsonl"
    raw = (
        "\n".join(
            [
                claude_line("user", 1),
                "",  # blank -> skipped
                "{not json",  # invalid JSON
                "[1, 2, 3]",  # not an object
                json.dumps({"uuid": "x"}),  # missing type
                json.dumps(
                    {"type": "user", "uuid": "y", "sessionId": "s1", "message": "oops"}
                ),  # wrong type for message
                claude_line("assistant", 2),
            ]
        ).encode()
        + b"\n"
        + b'{"type": "user", "bad": "\xff\xfe"}\n'
    )
    f.write_bytes(raw)
    res = ingest_paths(con, [str(f)])
    rejects = con.execute("SELECT line, reason FROM rejects ORDER BY line").fetchall()
    assert rejects == [
        (3, "invalid JSON"),
        (4, "not a JSON object"),
        (5, "missing field: type"),
        (6, "missing or malformed field: message"),
        (8, "invalid UTF-8"),
    ]
    assert con.execute("SELECT line, kind FROM skipped").fetchall() == [(2, "blank_line")]
    assert con.execute("SELECT line, role, text FROM events ORDER BY line").fetchall() == [
        (1, "user", "prompt 1"),
        (7, "assistant", "reply 2"),
    ]
    assert accounting(con, f) == (8, 2, 1, 5, 2, "ok")
    assert res.lines == 8 and res.rejects == 5
    excerpt = con.execute("SELECT excerpt FROM rejects WHERE line = 8").fetchone()[0]
    assert excerpt == '{"type": "user", "bad": "\\xFF\\xFE"}'


def test_wrong_field_types_become_nulls_not_crashes(con, tmp_path):
    rec = json.loads(claude_line("user", 1))
    rec["timestamp"] = {"nested": True}
    rec["isSidechain"] = [1]
    f = write_lines(tmp_path / "t.jsonl", [json.dumps(rec)])
    ingest_paths(con, [str(f)])
    assert con.execute("SELECT ts, is_sidechain, text FROM events").fetchall() == [(None, False, "prompt 1")]


def test_ten_megabyte_line(con, tmp_path):
    big = "x" * (10 * 1024 * 1024)
    rec = json.loads(claude_line("user", 1))
    rec["message"]["content"] = big
    f = write_lines(tmp_path / "big.jsonl", [json.dumps(rec), claude_line("assistant", 2)])
    ingest_paths(con, [str(f)])
    assert con.execute("SELECT line, length(text) FROM events ORDER BY line").fetchall() == [(1, len(big)), (2, 7)]


def test_zero_byte_file_is_listed_as_empty(con, tmp_path):
    f = tmp_path / "empty.jsonl"
    f.write_bytes(b"")
    res = ingest_paths(con, [str(f)])
    assert res.events == 0 and res.unrecognized == []
    assert con.execute("SELECT status, n_lines FROM files").fetchall() == [("empty", 0)]


def test_truncated_last_line_is_retried_not_rejected(con, tmp_path):
    f = tmp_path / "live.jsonl"
    full = claude_line("assistant", 2)
    f.write_text(claude_line("user", 1) + "\n" + full[:25], encoding="utf-8")
    res = ingest_paths(con, [str(f)])
    assert res.pending == 1 and res.rejects == 0
    assert con.execute("SELECT count(*) FROM events").fetchone()[0] == 1
    with open(f, "a", encoding="utf-8") as fh:
        fh.write(full[25:] + "\n")
    res2 = ingest_paths(con, [str(f)])
    assert res2.pending == 0
    assert con.execute("SELECT line, role FROM events ORDER BY line").fetchall() == [(1, "user"), (2, "assistant")]
    assert accounting(con, f)[:4] == (2, 2, 0, 0)


def test_last_line_without_newline_that_parses_is_kept(con, tmp_path):
    f = write_lines(tmp_path / "n.jsonl", [claude_line("user", 1), claude_line("assistant", 2)], newline_at_end=False)
    ingest_paths(con, [str(f)])
    assert con.execute("SELECT count(*) FROM events").fetchone()[0] == 2
    with open(f, "a", encoding="utf-8") as fh:  # the writer later adds the newline and a new record
        fh.write("\n" + claude_line("user", 3) + "\n")
    ingest_paths(con, [str(f)])
    assert con.execute("SELECT line FROM events ORDER BY line").fetchall() == [(1,), (2,), (3,)]
    assert con.execute("SELECT count(*) FROM skipped").fetchone()[0] == 0


def test_duplicated_lines_are_skipped_as_duplicates(con, tmp_path):
    a = claude_line("user", 1)
    f = write_lines(tmp_path / "d.jsonl", [a, claude_line("assistant", 2), a])
    ingest_paths(con, [str(f)])
    assert con.execute("SELECT line, kind FROM skipped").fetchall() == [(3, "duplicate_record")]
    assert con.execute("SELECT count(*) FROM events").fetchone()[0] == 2


def test_split_reply_merges_by_message_id(con, tmp_path):
    base: dict[str, Any] = {
        "type": "assistant",
        "sessionId": "s",
        "isSidechain": False,
        "message": {"id": "msg_X", "role": "assistant", "model": "claude-x", "stop_reason": None},
    }
    l1 = dict(base, uuid="a", timestamp="2026-01-01T00:00:01Z")
    l1["message"] = dict(base["message"], content=[{"type": "text", "text": "I'll read it."}])
    l2 = dict(base, uuid="b", timestamp="2026-01-01T00:00:02Z")
    l2["message"] = dict(
        base["message"],
        stop_reason="tool_use",
        content=[{"type": "tool_use", "id": "t1", "name": "Read", "input": {"p": "a.py"}}],
    )
    f = write_lines(tmp_path / "m.jsonl", [claude_line("user", 0, session="s"), json.dumps(l1), json.dumps(l2)])
    ingest_paths(con, [str(f)])
    row = con.execute(
        "SELECT line, last_line, n_records, text, tool_calls, finish_reason, finish_norm, "
        "epoch(ts_end - ts) FROM events WHERE role = 'assistant'"
    ).fetchone()
    assert row == (
        2,
        3,
        2,
        "I'll read it.",
        [{"id": "t1", "name": "Read", "arguments": '{"p":"a.py"}'}],
        "tool_use",
        "tool_calls",
        1.0,
    )


def test_tool_result_texts_of_every_content_shape(con, tmp_path):
    """A tool result's text: a string as it is; a block list joined by newlines from its strings and its objects'
    `text` (else `content`), other elements left out; any other JSON nothing. A line holding a list result is read
    by its own statement (claude_code_events.sql, cc_arr): these cases hold both paths to the same rule."""

    def result(n: int, *contents: Any, text: str | None = None) -> str:
        blocks: list[Any] = [
            {"type": "tool_result", "tool_use_id": f"t{n}_{i}", "content": c} for i, c in enumerate(contents)
        ]
        if text is not None:
            blocks.insert(1, {"type": "text", "text": text})
        rec = {
            "type": "user",
            "uuid": f"r{n}",
            "sessionId": "s",
            "timestamp": f"2026-01-01T00:01:{n:02d}Z",
            "isSidechain": False,
            "message": {"role": "user", "content": blocks},
        }
        return json.dumps(rec)

    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    lines = [
        claude_line("user", 0, session="s"),
        result(1, 'plain\nstring "quoted" [not a list]'),
        result(2, [{"type": "text", "text": "first"}, "bare string", image, {"type": "text", "text": "last"}]),
        result(3, [{"content": "from content"}, {"type": "text", "text": ""}, None, 5, ["nested"]]),
        result(4, [image]),  # nothing readable: no text
        result(5, "[1, 2]", [{"type": "text", "text": "listed"}], text="between"),  # a string that looks like a list
        result(6, {"text": "an object"}, 42, [], ""),  # neither a string nor a list, an empty list, an empty string
        result(7, ["a", "", "b"]),  # an empty element keeps its place inside one result
    ]
    ingest_paths(con, [str(write_lines(tmp_path / "r.jsonl", lines))])
    got = con.execute("SELECT line, kind, text, tool_call_id FROM events WHERE line > 1 ORDER BY line").fetchall()
    assert got == [
        (2, "tool_result", 'plain\nstring "quoted" [not a list]', "t1_0"),
        (3, "tool_result", "first\nbare string\nlast", "t2_0"),
        (4, "tool_result", "from content\n", "t3_0"),
        (5, "tool_result", None, "t4_0"),
        (6, "tool_result", "[1, 2]\nbetween\nlisted", "t5_0"),
        (7, "tool_result", None, "t6_0"),
        (8, "tool_result", "a\n\nb", "t7_0"),
    ]


def test_tool_result_texts_of_scalars_and_look_alike_strings(con, tmp_path):
    """The parse reads a result's content as text: a JSON string gives its text, but so do an object, a number and
    a boolean (their JSON). A line whose result text could be such a value (it starts with `[` or `{`, is `true` /
    `false`, or reads as a number) is read again by cc_arr with the content's JSON type; every other text is a
    string's. Either way the rule of test_tool_result_texts_of_every_content_shape holds: only strings and
    lists give text."""

    def result(n: int, *contents: Any) -> str:
        blocks = [{"type": "tool_result", "tool_use_id": f"t{n}_{i}", "content": c} for i, c in enumerate(contents)]
        rec = {"type": "user", "uuid": f"r{n}", "sessionId": "s", "timestamp": f"2026-01-01T00:01:{n:02d}Z",
               "message": {"role": "user", "content": blocks}}  # fmt: skip
        return json.dumps(rec)

    lines = [
        claude_line("user", 0, session="s"),
        result(1, {"text": "an object"}),
        result(2, 42),
        result(3, -1.5e3),
        result(4, True),
        result(5, False, "kept"),
        result(6, None),
        result(7, "true", "42", "-1e3", "{not json", "[not a list", " 7", "nan"),
        result(8, "plain", "", 'quoted "x"\\n'),
        result(9, {"a": [1]}, "after an object"),
    ]
    ingest_paths(con, [str(write_lines(tmp_path / "r.jsonl", lines))])
    got = con.execute("SELECT line, text FROM events WHERE line > 1 ORDER BY line").fetchall()
    assert got == [
        (2, None),
        (3, None),
        (4, None),
        (5, None),
        (6, "kept"),
        (7, None),
        (8, "true\n42\n-1e3\n{not json\n[not a list\n 7\nnan"),
        (9, 'plain\nquoted "x"\\n'),
        (10, "after an object"),
    ]


def test_gzip_and_zstd_files(con, tmp_path):
    body = (claude_line("user", 1) + "\n" + claude_line("assistant", 2) + "\n").encode()
    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(gzip.compress(body))
    zs = tmp_path / "b.jsonl.zst"
    with pa.CompressedOutputStream(str(zs), "zstd") as out:
        out.write(body.replace(b'"s1"', b'"s2"'))
    res = ingest_paths(con, [str(tmp_path)])
    assert res.events == 4
    assert con.execute("SELECT path LIKE '%.gz', compression FROM files ORDER BY path").fetchall() == [
        (True, "gzip"),
        (False, "zstd"),
    ]


def test_format_forced_and_unrecognised(con, tmp_path):
    f = write_lines(tmp_path / "notes.json", [json.dumps({"hello": "world"})])
    res = ingest_paths(con, [str(f)])
    assert res.unrecognized == [str(f)]
    assert con.execute("SELECT status FROM files").fetchone()[0] == "unrecognized"
    g = write_lines(tmp_path / "weird.log", [json.dumps({"role": "user", "content": "hi"})])
    ingest_paths(con, [str(g)], fmt="openai_chat")
    assert con.execute("SELECT source_format, role, text FROM events").fetchall() == [("openai_chat", "user", "hi")]


def test_naive_timestamps_read_in_the_given_zone(con, tmp_path):
    f = write_lines(
        tmp_path / "h.jsonl",
        [
            json.dumps({"role": "user", "content": "hi", "timestamp": "2026-04-22T09:00:00"}),
            json.dumps({"role": "assistant", "content": "yo", "timestamp": "2026-04-22T09:00:05+02:00"}),
        ],
    )
    ingest_paths(con, [str(f)], naive_tz="Europe/Berlin")
    got = con.execute("SELECT role, strftime(ts, '%H:%M:%S'), meta->>'ts_naive' FROM events ORDER BY line").fetchall()
    assert got == [("user", "07:00:00", "true"), ("assistant", "07:00:05", "false")]


def test_last_commit_checkpoints_only_with_room_on_the_disk(tmp_path, monkeypatch):
    """The run's last COMMIT is a checkpoint only when the disk holds twice the transaction's bytes and the
    WAL, plus 64 MB (a checkpoint that fails on a full disk leaves the file grown); never for a database in
    memory."""
    import os

    from stallscan.ingest.tx import checkpoint_on_commit
    from stallscan.store.db import connect

    free = {"bytes": 0}

    class Fs:
        f_frsize = 4096

        @property
        def f_bavail(self):
            return free["bytes"] // 4096

    monkeypatch.setattr(os, "statvfs", lambda _path: Fs())
    db = connect(tmp_path / "x.duckdb")
    try:
        wal = tmp_path / "x.duckdb.wal"
        wal_bytes = wal.stat().st_size if wal.exists() else 0
        need = 2 * (10 << 20) + 2 * wal_bytes + (64 << 20)
        free["bytes"] = need + 4096
        assert checkpoint_on_commit(db, 10 << 20)
        free["bytes"] = need - 4096
        assert not checkpoint_on_commit(db, 10 << 20)
    finally:
        db.close()
    mem = connect(":memory:")
    try:
        free["bytes"] = 1 << 40
        assert not checkpoint_on_commit(mem, 0)
    finally:
        mem.close()


def test_a_small_run_leaves_its_rows_in_the_wal_and_the_settings_as_they_were(tmp_path, monkeypatch):
    """A run reading under SMALL_RUN_BYTES: no checkpoint at its COMMIT nor after it (the rows are in the WAL
    until the database closes, then in the file), and the connection's memory limit and checkpoint threshold
    untouched; a larger run checkpoints as before. The same rows either way."""
    from stallscan.ingest import run
    from stallscan.store.db import connect

    f = tmp_path / "s.jsonl"
    write_lines(f, [claude_line("user", 1), claude_line("assistant", 2)])
    counts = []
    for small in (True, False):
        if not small:
            monkeypatch.setattr(run, "SMALL_RUN_BYTES", 0)
        path = tmp_path / f"{small}.duckdb"
        con = connect(path)
        settings = "SELECT current_setting('memory_limit'), current_setting('checkpoint_threshold')"
        con.execute("SET checkpoint_threshold = '1GB'")  # (no automatic checkpoint at this run's size)
        before = con.execute(settings).fetchone()
        ingest_paths(con, [str(f)])
        wal = tmp_path / f"{small}.duckdb.wal"
        assert (wal.exists() and wal.stat().st_size > 0) is small
        if small:  # (a larger run restores them from their printed values, as before)
            assert con.execute(settings).fetchone() == before
        con.close()
        assert not wal.exists()
        con = connect(path, read_only=True)
        counts.append(con.execute("SELECT count(*), count(DISTINCT session_id) FROM events").fetchone())
        con.close()
    assert counts[0] == counts[1] and counts[0][0] > 0


def test_records_logged_again_in_a_later_ingest_are_duplicates_of_their_session_only(con, tmp_path):
    """A record whose uuid an earlier ingest of the file wrote as an event in the same session (the part of the
    event's session id before any '/agent-...') is a duplicate; the same uuid in another session, in a session id
    holding a '/', or without a session id is not (claude_code_events.sql, cc_dups: the prefix test)."""

    def rec(n: int, uuid: str, sid: str | None, **extra: Any) -> str:
        return claude_line("user", n, uuid=uuid, sessionId=sid, **extra)

    side = {"isSidechain": True, "agentId": "a1"}
    first = [
        rec(1, "k1", "s"),  # logged again in "s": a duplicate
        rec(2, "k2", "s", **side),  # session "s/agent-a1", logged again in "s" (a sidechain): a duplicate
        rec(3, "k3", "s/x"),  # a session id holding '/': split at '/' it is "s", never "s/x"
        rec(4, "k4", "s"),  # logged again in "t": not a duplicate
        rec(5, "k5", None),  # no session id (the file's stem): not a duplicate
        rec(6, "k6", ""),  # an empty session id: a duplicate
        rec(7, "k7", "sx"),  # logged again in "s", a prefix of "sx" without '/': not a duplicate
    ]
    f = write_lines(tmp_path / "r.jsonl", first)
    ingest_paths(con, [str(f)])
    again = [
        rec(8, "k1", "s"),
        rec(9, "k2", "s", **side),
        rec(10, "k3", "s/x"),
        rec(11, "k4", "t"),
        rec(12, "k5", None),
        rec(13, "k6", ""),
        rec(14, "k7", "s"),
    ]
    with open(f, "a", encoding="utf-8") as fh:
        fh.write("\n".join(again) + "\n")
    ingest_paths(con, [str(f)])
    assert con.execute("SELECT line, kind FROM skipped ORDER BY line").fetchall() == [
        (8, "duplicate_record"),
        (9, "duplicate_record"),
        (13, "duplicate_record"),
    ]
    lines = [r[0] for r in con.execute("SELECT line FROM events ORDER BY line").fetchall()]
    assert lines == [*range(1, 8), 10, 11, 12, 14]


def test_a_session_in_several_files_of_one_batch_is_numbered_by_first_time_then_path(con, tmp_path):
    """seq (ingest_commit.sql, batch_seq): a session's rows in file order, its files by their first timestamp and,
    where that ties or is missing, by path; the rows without a time go after the files that have one."""
    s = "shared"
    early = [claude_line("user", 1, session=s), claude_line("assistant", 2, session=s)]
    files = {
        "c.jsonl": [claude_line("user", 30, session=s, uuid="c1"), claude_line("assistant", 31, session=s, uuid="c2")],
        "b.jsonl": [claude_line("user", 10, session=s, uuid="b1")],
        "a.jsonl": [claude_line("user", 10, session=s, uuid="a1"), claude_line("assistant", 11, session=s, uuid="a2")],
        "z.jsonl": early,
        "n.jsonl": [claude_line("user", 5, session=s, uuid="n1", timestamp=None)],
    }
    paths = [write_lines(tmp_path / name, lines) for name, lines in files.items()]
    ingest_paths(con, [str(p) for p in paths])
    got = con.execute("SELECT file, line, seq FROM events WHERE session_id = ? ORDER BY seq", [s]).fetchall()
    names = [(str(f).rsplit("/", 1)[1], line, seq) for f, line, seq in got]
    assert names == [
        ("z.jsonl", 1, 1),
        ("z.jsonl", 2, 2),
        ("a.jsonl", 1, 3),
        ("a.jsonl", 2, 4),
        ("b.jsonl", 1, 5),
        ("c.jsonl", 1, 6),
        ("c.jsonl", 2, 7),
        ("n.jsonl", 1, 8),
    ]


def test_a_record_repeated_in_one_batch_is_a_duplicate_in_its_session_or_without_one(con, tmp_path):
    """In one batch (claude_code_events.sql, cc_dups): a uuid seen again in the same session, or again without a
    session id, is a duplicate from its second line on; the same uuid in another session is not."""

    def rec(n: int, uuid: str, sid: str | None) -> str:
        return claude_line("user", n, uuid=uuid, sessionId=sid)

    lines = [rec(1, "k", "s"), rec(2, "k", None), rec(3, "k", "t"), rec(4, "k", "s"), rec(5, "k", None)]
    lines += [rec(6, "k", "s")]
    f = write_lines(tmp_path / "one.jsonl", lines)
    ingest_paths(con, [str(f)])
    assert con.execute("SELECT line, kind FROM skipped ORDER BY line").fetchall() == [
        (4, "duplicate_record"),
        (5, "duplicate_record"),
        (6, "duplicate_record"),
    ]


def test_a_split_reply_takes_each_field_from_its_last_line_that_has_it(con, tmp_path):
    """A reply over several lines (cc_reply's arg_max over the lines, which leaves out a NULL): its stop reason,
    model and token counts are those of the last line that has them, not NULL when its last line lacks them."""

    def line(uuid: str, sec: int, **message: Any) -> str:
        msg = {"id": "msg_Y", "role": "assistant", "content": [{"type": "text", "text": uuid}], **message}
        rec = {"type": "assistant", "uuid": uuid, "sessionId": "s", "isSidechain": False, "message": msg}
        return json.dumps(dict(rec, timestamp=f"2026-01-01T00:00:0{sec}Z"))

    usage = {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 5}
    lines = [
        claude_line("user", 0, session="s"),
        line("a", 1, model="m-old", stop_reason="end_turn", usage=usage),
        line("b", 2, model="m-new"),
        line("c", 3),
    ]
    f = write_lines(tmp_path / "y.jsonl", lines)
    ingest_paths(con, [str(f)])
    assert con.execute(
        "SELECT line, last_line, n_records, text, finish_reason, model, tokens_in, tokens_out, record_id "
        "FROM events WHERE role = 'assistant'"
    ).fetchall() == [(2, 4, 3, "a\nb\nc", "end_turn", "m-new", 8, 4, "a")]


def test_a_split_reply_text_joins_its_lines_texts_leaving_out_lines_without_text(con, tmp_path):
    """cc_reply's text: its lines' texts joined by newlines, a line without text (a tool call only) left out, an empty
    text kept; NULL when no line has text."""

    def line(mid: str, uuid: str, content: Any) -> str:
        msg = {"id": mid, "role": "assistant", "content": content}
        return json.dumps({"type": "assistant", "uuid": uuid, "sessionId": "s", "isSidechain": False, "message": msg})

    def call(n: int) -> list[dict[str, Any]]:
        return [{"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {}}]

    def text(t: str) -> list[dict[str, Any]]:
        return [{"type": "text", "text": t}]

    lines = [claude_line("user", 0, session="s")]
    lines += [line("A", "a1", call(1)), line("A", "a2", call(2))]
    lines += [line("B", "b1", call(3)), line("B", "b2", "")]
    lines += [line("C", "c1", text("x")), line("C", "c2", call(4)), line("C", "c3", text("y"))]
    f = write_lines(tmp_path / "t.jsonl", lines)
    ingest_paths(con, [str(f)])
    assert con.execute("SELECT message_id, text FROM events WHERE role = 'assistant' ORDER BY line").fetchall() == [
        ("A", None),
        ("B", ""),
        ("C", "x\ny"),
    ]
