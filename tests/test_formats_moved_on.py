"""Issue 25, "formats that moved on": the Gemini CLI session shapes (every record chatRecordingService.ts
writes, the single-document layout in any key order) and records of a known format in a shape no reader
knows (drift), which are counted, never dropped silently.

Expected rows come from reading the hand-written inputs (sample_logs/gemini-cli-doc/ and the records
below, shaped after google-gemini/gemini-cli packages/core/src/services/chatRecordingService.ts), not from
the code under test."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from stallscan.ingest.detect import detect_format
from stallscan.ingest.run import ingest_paths
from tests.helpers import SAMPLES
from tests.hostile import accounting_errors

GEMINI_DOC = SAMPLES / "gemini-cli-doc" / "session-2026-08-03T09-13-5d0e9b7c.json"
DOC = json.loads(GEMINI_DOC.read_text(encoding="utf-8"))


def _acct(con, path):
    return con.execute(
        "SELECT n_lines, n_event_lines, n_skipped, n_rejects, n_events, status FROM files WHERE path = ?", [str(path)]
    ).fetchone()


def _skips(con, path):
    return con.execute("SELECT line, kind FROM skipped WHERE file = ? ORDER BY line", [str(path)]).fetchall()


def test_gemini_document_any_key_order_is_detected(tmp_path):
    assert detect_format(GEMINI_DOC) == "gemini_cli_json"  # pretty-printed, `kind` then `messages` first
    mini = tmp_path / "mini.json"
    mini.write_text(json.dumps(DOC, separators=(",", ":")))
    bare = tmp_path / "bare.json"  # no sessionId / projectHash at all
    bare.write_text(json.dumps({"kind": DOC["kind"], "messages": DOC["messages"]}))
    bare_pretty = tmp_path / "bare_pretty.json"
    bare_pretty.write_text(json.dumps({"messages": DOC["messages"]}, indent=2))  # only the gemini-typed messages
    for f in (mini, bare, bare_pretty):
        assert detect_format(f) == "gemini_cli_json", f.name
    chat = tmp_path / "chat.json"  # an OpenAI-style document is not taken for Gemini
    chat.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}, indent=2))
    assert detect_format(chat) != "gemini_cli_json"


def test_gemini_document_sample_events(con):
    ingest_paths(con, [str(GEMINI_DOC)])
    rows = con.execute(
        "SELECT line, role, kind, n_tool_calls, session_id, text IS NOT NULL, meta->>'gemini_type' FROM events ORDER BY seq"
    ).fetchall()
    sid = "5d0e9b7c-3f1a-4c2e-9a41-2b7f8e6d1c05"
    assert rows == [
        (1, "user", "message", 0, sid, True, "user"),  # string content
        (2, "assistant", "message", 1, sid, False, "gemini"),  # a tool call, no text
        (3, "assistant", "message", 0, sid, True, "gemini"),
        (4, "user", "message", 0, sid, True, "user"),  # part-list content
        (5, "system", "system", 0, sid, True, "error"),
        (6, "system", "system", 0, sid, True, "info"),
    ]
    assert _acct(con, GEMINI_DOC) == (6, 6, 0, 0, 6, "ok")
    assert accounting_errors(con) == []


def test_gemini_document_truncated_and_unknown_type(con, tmp_path):
    cut = tmp_path / "session-cut.json"
    cut.write_text(GEMINI_DOC.read_text(encoding="utf-8")[:900])  # written while the CLI was saving
    assert detect_format(cut) == "gemini_cli_json"
    drift = tmp_path / "session-drift.json"
    drift.write_text(
        json.dumps({**DOC, "messages": [*DOC["messages"], {"id": "n1", "type": "compression", "content": "x"}]})
    )
    ingest_paths(con, [str(cut), str(drift)])
    assert con.execute("SELECT line, reason FROM rejects WHERE file = ?", [str(cut)]).fetchall() == [
        (1, "invalid JSON (truncated or malformed document)")
    ]
    assert _skips(con, drift) == [(7, "unknown_shape:type compression")]
    assert _acct(con, drift) == (7, 6, 1, 0, 6, "ok")
    assert accounting_errors(con) == []


def _line(**rec):
    return json.dumps(rec)


def test_gemini_jsonl_every_record_kind(con, tmp_path):
    """The JSONL log (chatRecordingService.appendRecord): header, messages (re-written ids), $set patches, a
    $set.messages checkpoint (updateMessagesFromHistory) holding one message no bare record wrote, a
    $rewindTo, error / warning notices and a type no reader knows."""
    u1 = {"id": "u1", "timestamp": "2026-08-03T10:00:00.000Z", "type": "user", "content": "Rename the flag"}
    g1 = {"id": "g1", "timestamp": "2026-08-03T10:00:04.000Z", "type": "gemini", "content": "", "model": "m"}
    g1_calls = {**g1, "toolCalls": [{"id": "c1", "name": "replace", "args": {}, "status": "success"}]}
    summary = {"id": "s1", "timestamp": "2026-08-03T10:02:00.000Z", "type": "user", "content": [{"text": "summary"}]}
    f = tmp_path / "session-2026-08-03T10-00-abcd1234.jsonl"
    f.write_text(
        "\n".join(
            [
                _line(sessionId="abcd1234-x", projectHash="p", startTime="t", lastUpdated="t", kind="main"),  # 1
                json.dumps(u1),  # 2
                _line(**{"$set": {"lastUpdated": "2026-08-03T10:00:00.000Z"}}),  # 3
                json.dumps(g1),  # 4
                json.dumps(g1_calls),  # 5: same id re-written with its calls
                _line(**{"$set": {"messages": [u1, g1_calls, summary], "lastUpdated": "x"}}),  # 6: checkpoint
                _line(**{"$set": {"messages": [u1, g1_calls, summary]}}),  # 7: restates known messages only
                _line(**{"$rewindTo": "g1"}),  # 8
                _line(id="w1", timestamp="2026-08-03T10:03:00.000Z", type="warning", content="Loop detected"),  # 9
                _line(id="z1", timestamp="2026-08-03T10:03:01.000Z", type="hook", content="?"),  # 10
            ]
        )
        + "\n"
    )
    assert detect_format(f) == "gemini_cli"
    ingest_paths(con, [str(f)])
    assert con.execute(
        "SELECT line, last_line, part, role, n_tool_calls, text FROM events ORDER BY seq"
    ).fetchall() == [
        (2, 2, 0, "user", 0, "Rename the flag"),
        (4, 5, 0, "assistant", 1, None),
        (6, 6, 3, "user", 0, "summary"),
        (9, 9, 0, "system", 0, "Loop detected"),
    ]
    assert _skips(con, f) == [
        (1, "session_header"),
        (3, "$set"),
        (7, "$set:messages"),
        (8, "rewind"),
        (10, "unknown_shape:type hook"),
    ]
    assert _acct(con, f) == (10, 5, 5, 0, 4, "ok")
    assert accounting_errors(con) == []


CHECKPOINT = SAMPLES / "gemini-cli-checkpoint" / "checkpoint-dst-bug.json"
PROMPT_LOG = SAMPLES / "gemini-cli-checkpoint" / "logs.json"


def test_gemini_checkpoint_and_prompt_log(con, tmp_path):
    """logger.ts files: a /chat save checkpoint in each of its shapes, and logs.json (skipped knowingly)."""
    cp = json.loads(CHECKPOINT.read_text(encoding="utf-8"))
    bare = tmp_path / "checkpoint-bare.json"  # the older shape: the Content list itself
    bare.write_text(json.dumps(cp["history"], indent=2))
    mini = tmp_path / "checkpoint-mini.json"
    mini.write_text(json.dumps(cp))
    for f in (CHECKPOINT, PROMPT_LOG, bare, mini):
        assert detect_format(f) == "gemini_cli_history", f.name
    ingest_paths(con, [str(CHECKPOINT), str(PROMPT_LOG)])
    rows = con.execute(
        "SELECT line, part, role, kind, n_tool_calls, tool_call_id, ts_quality FROM events ORDER BY seq"
    ).fetchall()
    assert rows == [
        (1, 1, "user", "message", 0, None, "none"),
        (2, 1, "assistant", "message", 0, None, "none"),
        (3, 1, "user", "message", 0, None, "none"),
        (4, 1, "assistant", "message", 1, None, "none"),  # the thought part is not its text
        (5, 1, "tool", "tool_result", 0, "run_shell_command-1754212447904-0", "none"),
        (6, 1, "assistant", "message", 0, None, "none"),
    ]
    assert con.execute("SELECT text FROM events WHERE line = 4").fetchone() == (None,)
    assert _skips(con, PROMPT_LOG) == [(1, "prompt_log"), (2, "prompt_log")]
    assert _acct(con, CHECKPOINT) == (6, 6, 0, 0, 6, "ok")
    assert accounting_errors(con) == []


def test_gemini_environment_context_is_automatic(con):
    from stallscan.replay.boundaries import replay_boundaries

    ingest_paths(con, [str(CHECKPOINT)])
    replay_boundaries(con, relabel=True)
    got = con.execute(
        "SELECT e.line, l.origin, l.origin_rule, l.starts_request FROM events e JOIN user_labels l USING (event_id) "
        "WHERE e.role = 'user' ORDER BY e.seq"
    ).fetchall()
    assert got == [(1, "automatic", "gemini.session_context", False), (3, "human", "default_human", True)]


def test_drift_shows_in_ingest_and_report_and_fails_strict(tmp_path):
    """Claude Code records of a type no reader knows: skipped as unknown_shape with the writer's version,
    listed in the ingest summary (terminal and JSON) and the report's corpus section; --strict exits 1."""
    from typer.testing import CliRunner

    from stallscan.cli import app

    def run(*args):  # the command in this process (its output and exit code are the subject, not the process)
        r = CliRunner().invoke(app, list(args), prog_name="stallscan", env={"COLUMNS": "120", "STALLSCAN_CONFIG": None})
        return SimpleNamespace(returncode=r.exit_code, stdout=r.stdout, stderr=r.stderr)

    logs = tmp_path / "logs"
    logs.mkdir()
    base: dict[str, Any] = {"sessionId": "d1", "version": "2.1.180", "isSidechain": False}
    (logs / "s.jsonl").write_text(
        "\n".join(
            json.dumps(base | rec)  # type: ignore[operator]
            for rec in [
                {
                    "type": "user",
                    "uuid": "u1",
                    "timestamp": "2026-09-01T10:00:00Z",
                    "message": {"role": "user", "content": "hi"},
                },
                {"type": "task-ledger", "uuid": "t1", "timestamp": "2026-09-01T10:00:01Z", "entries": []},
                {"type": "task-ledger", "uuid": "t2", "timestamp": "2026-09-01T10:00:02Z", "entries": []},
                {"type": "progress", "uuid": "p1", "timestamp": "2026-09-01T10:00:03Z", "data": {}},
            ]
        )
        + "\n"
    )
    db = str(tmp_path / "d.duckdb")
    p = run("ingest", str(logs), "--db", db, "--json")
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    assert got["skipped"] == {"progress": 1, "unknown_shape:type task-ledger @2.1.180": 2}
    assert got["unknown_shapes"] == [
        {"format": "claude_code", "version": "2.1.180", "shape": "type task-ledger", "records": 2, "files": 1}
    ]
    line = "2 records of unknown shape in claude_code 2.1.180: type `task-ledger`"
    p = run("ingest", str(logs), "--db", str(tmp_path / "t.duckdb"))
    assert p.returncode == 0 and line in p.stderr
    p = run("ingest", str(logs), "--db", str(tmp_path / "s.duckdb"), "--strict")
    assert p.returncode == 1 and "unknown shape" in p.stderr.splitlines()[-1]
    rep = run("report", "--db", db, "--format", "json")
    assert rep.returncode == 0, rep.stderr
    assert json.loads(rep.stdout)["corpus"]["unknown_shapes"] == got["unknown_shapes"]
    assert line in run("report", "--db", db).stdout
    assert line in run("report", "--db", db, "--format", "markdown").stdout


def test_codex_drift_carries_cli_version(con, tmp_path):
    ts = "2026-09-01T10:00:00.000Z"
    f = tmp_path / "rollout-2026-09-01T10-00-00-x.jsonl"
    f.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"timestamp": ts, "type": "session_meta", "payload": {"id": "c1", "cli_version": "0.140.0"}},
                {
                    "timestamp": ts,
                    "type": "response_item",
                    "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                },
                {"timestamp": ts, "type": "response_item", "payload": {"type": "agent_handoff", "to": "x"}},
                {"timestamp": ts, "type": "event_msg", "payload": {"type": "brand_new_ui_event"}},
                {"timestamp": ts, "type": "thread_note", "payload": {"text": "x"}},
            ]
        )
        + "\n"
    )
    ingest_paths(con, [str(f)])
    assert _skips(con, f) == [
        (1, "session_meta"),
        (3, "unknown_shape:type response_item:agent_handoff @0.140.0"),
        (4, "event_msg:brand_new_ui_event"),  # a UI event: skipped by type, not drift
        (5, "unknown_shape:type thread_note @0.140.0"),  # a record type of its own (no payload.type)
    ]
    assert accounting_errors(con) == []
