"""`opencode run --format json` event streams (issue 25), read as their own shape of the opencode format.

sample_logs/opencode-run/run.log is hand-made in the shape sst/opencode packages/opencode/src/cli/cmd/run.ts
writes (emit(type, {part}) per finished part: step_start, text, tool_use, step_finish; plain-text start-up
and permission lines around them). Expected rows come from reading that file (sample_logs/README.md), not
from the code under test."""

from __future__ import annotations

import json
import shutil

from stallscan.ingest.detect import detect_format
from stallscan.ingest.run import ingest_paths
from tests.helpers import SAMPLES
from tests.hostile import accounting_errors

RUN = SAMPLES / "opencode-run" / "run.log"
SID = "ses_3b9e2d71cffeVq8Lr2NsTbX4aK"


def _acct(con, path):
    return con.execute(
        "SELECT n_lines, n_event_lines, n_skipped, n_rejects, n_events, status FROM files WHERE path = ?", [str(path)]
    ).fetchone()


def test_sample_events(con):
    ingest_paths(con, [str(RUN)])
    rows = con.execute(
        "SELECT line, last_line, part, role, kind, finish_norm, n_tool_calls, tool_call_id, meta->>'is_error', "
        "session_id FROM events ORDER BY seq"
    ).fetchall()
    assert rows == [
        (4, 7, 0, "assistant", "message", "tool_calls", 1, None, None, SID),
        (6, 6, 1, "tool", "tool_result", None, 0, "toolu_01JqT6mRkP3", "false", SID),
        (9, 12, 0, "assistant", "message", "tool_calls", 2, None, None, SID),
        (10, 10, 1, "tool", "tool_result", None, 0, "toolu_01VbX2cLw9Q", "true", SID),
        (11, 11, 1, "tool", "tool_result", None, 0, "toolu_01HsN4dYe7R", "false", SID),
        (13, 15, 0, "assistant", "message", "stop", 0, None, None, SID),
    ]
    texts = [r[0] for r in con.execute("SELECT text FROM events WHERE role = 'assistant' ORDER BY seq").fetchall()]
    assert texts[0] == "Running the failing test to see the error." and texts[1] is None
    assert texts[2].startswith("Fixed: slugify()")
    # tokens from the step_finish part: input + cache read
    assert con.execute("SELECT tokens_in, tokens_out FROM events WHERE line = 13").fetchone() == (1802 + 12288, 58)
    assert con.execute("SELECT line, kind FROM skipped ORDER BY line").fetchall() == [
        (1, "startup_text"),
        (2, "startup_text"),
        (3, "startup_text"),
        (8, "interleaved_text"),
    ]
    assert _acct(con, RUN) == (15, 11, 4, 0, 6, "ok")
    assert accounting_errors(con) == []


def test_folder_walk_finds_the_log_and_counts_what_it_left_out(con, tmp_path):
    """A folder of .log captures: the stream is found by content; a plain log and a README are left out by
    name and counted (before: 0 files, exit 0)."""
    shutil.copy(RUN, tmp_path / "task-17.log")
    (tmp_path / "harness.log").write_text("2026-07-29 08:00:00 INFO starting 3 tasks\n{not json}\n")
    (tmp_path / "README.md").write_text("# runs\n")
    res = ingest_paths(con, [str(tmp_path)])
    assert res.files == 1 and res.unrecognized == [] and res.events == 6
    assert res.left_out == {".log": 1, ".md": 1}
    assert res.as_dict()["left_out_by_suffix"] == {".log": 1, ".md": 1}


def test_named_and_forced(con, tmp_path):
    """A named file is detected by content; --input-format opencode reads it in the stream shape (before: one
    reject), and so does a .jsonl copy."""
    f = tmp_path / "out.txt"
    shutil.copy(RUN, f)
    assert detect_format(f) == "opencode_run"
    res = ingest_paths(con, [str(f)], fmt="opencode")
    assert res.rejects == 0 and res.events == 6
    assert con.execute("SELECT DISTINCT source_format FROM events").fetchall() == [("opencode_run",)]


def _line(t, **d):
    return json.dumps({"type": t, "timestamp": 1785312000000, "sessionID": "ses_x", **d})


def test_damaged_and_unknown_lines(con, tmp_path):
    f = tmp_path / "run.jsonl"
    f.write_text(
        "\n".join(
            [
                _line("step_start", part={"type": "step-start", "messageID": "m1"}),  # 1
                _line("text", part={"type": "text", "messageID": "m1", "text": "I'll patch the parser now."}),  # 2
                "",  # 3
                "{broken",  # 4
                _line("tool_use"),  # 5: no part
                json.dumps({"timestamp": 1, "sessionID": "ses_x", "part": {}}),  # 6: no type
                _line("subagent_progress", part={"type": "x"}),  # 7: a type this reader does not know
                _line("step_finish", part={"type": "step-finish", "messageID": "m1", "reason": "tool-calls"}),  # 8
                _line("error", error={"name": "APIError", "data": {"message": "rate limited"}}),  # 9
                "[1, 2]",  # 10: text, not a record
            ]
        )
        + "\n"
    )
    ingest_paths(con, [str(f)])
    assert con.execute("SELECT line, reason FROM rejects ORDER BY line").fetchall() == [
        (4, "invalid JSON"),
        (5, "missing field: part"),
        (6, "missing field: type"),
    ]
    assert con.execute("SELECT line, kind FROM skipped ORDER BY line").fetchall() == [
        (3, "blank_line"),
        (7, "unknown_shape:type subagent_progress"),
        (10, "interleaved_text"),
    ]
    # the dropped call: finish tool-calls, text, no tool_use part; then the session error
    assert con.execute(
        "SELECT line, last_line, role, finish_norm, n_tool_calls, text FROM events ORDER BY seq"
    ).fetchall() == [
        (1, 8, "assistant", "tool_calls", 0, "I'll patch the parser now."),
        (9, 9, "system", "error", 0, "rate limited"),
    ]
    assert _acct(con, f) == (10, 4, 3, 3, 2, "ok")
    assert accounting_errors(con) == []
