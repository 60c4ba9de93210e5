"""Hand-made edge cases for the issue-6 formats: broken documents are rejected with a reason, wrong types
do not crash, empty documents are empty, and every record is accounted (event, skip or reject)."""

from __future__ import annotations

import json

import pytest

from stallscan.ingest.detect import detect_format
from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect
from tests.helpers import SAMPLES


def acct(con, path):
    return con.execute(
        "SELECT n_lines, n_event_lines, n_skipped, n_rejects, n_events, status FROM files WHERE path = ?", [str(path)]
    ).fetchone()


def rejects(con, path):
    return con.execute("SELECT line, reason FROM rejects WHERE file = ? ORDER BY line", [str(path)]).fetchall()


CLINE_MSG = {"role": "user", "content": [{"type": "text", "text": "<task>\nhi\n</task>"}], "ts": 1777073160794}


def test_cline_truncated_array_is_one_reject(con, tmp_path):
    d = tmp_path / "task1"
    d.mkdir()
    f = d / "api_conversation_history.json"
    f.write_text(json.dumps([CLINE_MSG, CLINE_MSG])[:-20])  # cut while being rewritten
    assert detect_format(f) == "cline_api"
    ingest_paths(con, [str(f)])
    assert rejects(con, f) == [(1, "invalid JSON (truncated or malformed document)")]
    assert acct(con, f) == (1, 0, 0, 1, 0, "ok")


def test_cline_wrong_types_and_bad_elements(con, tmp_path):
    d = tmp_path / "task2"
    d.mkdir()
    f = d / "api_conversation_history.json"
    f.write_text(
        json.dumps(
            [
                CLINE_MSG,
                42,
                {"content": "no role"},
                {"role": "user", "content": 5, "ts": "soon"},
                {"role": "assistant", "content": "plain text reply", "ts": 1777073162000},
            ]
        )
    )
    ingest_paths(con, [str(f)])
    assert rejects(con, f) == [(2, "not a JSON object"), (3, "missing field: role")]
    got = con.execute("SELECT line, role, text, ts IS NULL, session_id FROM events ORDER BY line").fetchall()
    assert got == [
        (1, "user", "<task>\nhi\n</task>", False, "task2"),
        (4, "user", None, True, "task2"),
        (5, "assistant", "plain text reply", False, "task2"),
    ]
    assert acct(con, f) == (5, 3, 0, 2, 3, "ok")


def test_empty_arrays_are_empty_files(con, tmp_path):
    for name in ("api_conversation_history.json", "ui_messages.json"):
        f = tmp_path / name
        f.write_text("[]")
        ingest_paths(con, [str(f)])
        assert acct(con, f) == (0, 0, 0, 0, 0, "empty"), name


def test_openhands_truncated_and_not_array(con, tmp_path):
    f = tmp_path / "traj.json"
    f.write_text(
        '[\n  {\n    "id": 0,\n    "timestamp": "2025-01-27T22:44:56.900854",\n    "source": "user",\n    "message": "hi", "action": "mess'
    )
    assert detect_format(f) == "openhands"
    ingest_paths(con, [str(f)])
    assert rejects(con, f) == [(1, "invalid JSON (truncated or malformed document)")]


def test_openhands_naive_time_zone_variable(con, tmp_path):
    f = tmp_path / "t.json"
    f.write_text(
        json.dumps(
            [
                {
                    "id": 0,
                    "timestamp": "2025-01-27T22:44:56",
                    "source": "user",
                    "message": "hi",
                    "action": "message",
                    "args": {"content": "hi"},
                }
            ]
        )
    )
    con.execute("SET VARIABLE naive_tz = 'Europe/Berlin'")
    try:
        ingest_paths(con, [str(f)])
    finally:
        con.execute("RESET VARIABLE naive_tz")
    ts, zone = con.execute("SELECT ts::VARCHAR, meta->>'ts_zone' FROM events").fetchone()
    assert ts.startswith("2025-01-27 21:44:56") and zone == "Europe/Berlin"


def test_swe_agent_missing_history_and_bad_messages(con, tmp_path):
    f = tmp_path / "a.traj"
    f.write_text(json.dumps({"environment": "x", "trajectory": []}))
    g = tmp_path / "b.traj"
    g.write_text(
        json.dumps(
            {
                "history": [
                    {"role": "system", "content": "s"},
                    "oops",
                    {"content": "no role"},
                    {"role": "assistant", "content": "ok", "action": 7},
                ]
            }
        )
    )
    ingest_paths(con, [str(f), str(g)])
    assert rejects(con, f) == [(1, "missing or malformed field: history")]
    assert rejects(con, g) == [(2, "not a JSON object"), (3, "missing field: role")]
    assert acct(con, g) == (4, 2, 0, 2, 2, "ok")


def test_gemini_json_truncated(con, tmp_path):
    f = tmp_path / "session-2026-01-30T06-08-x.json"
    f.write_text(
        '{\n  "sessionId": "s",\n  "projectHash": "p",\n  "messages": [\n    {"id": "a", "type": "user", "content": "hi"'
    )
    assert detect_format(f) == "gemini_cli_json"
    ingest_paths(con, [str(f)])
    assert rejects(con, f) == [(1, "invalid JSON (truncated or malformed document)")]


@pytest.mark.parametrize(
    "fmt, doc, reason",
    [
        ("cline_api", {"role": "user"}, "not a JSON array"),
        ("cline_ui", "text", "not a JSON array"),
        ("gemini_cli_json", [1, 2], "not a JSON object"),
        ("gemini_cli_json", {"sessionId": "s", "messages": {"id": "a"}}, "missing or malformed field: messages"),
        ("swe_agent", "text", "not a JSON object"),
    ],
)
def test_document_without_its_record_list_is_one_reject(con, tmp_path, fmt, doc, reason):
    """A readable document of the wrong shape (forced format): the document is line 1, rejected, no events."""
    f = tmp_path / "doc.json"
    f.write_text(json.dumps(doc))
    ingest_paths(con, [str(f)], fmt=fmt)
    assert rejects(con, f) == [(1, reason)]
    assert acct(con, f) == (1, 0, 0, 1, 0, "ok")


def test_gemini_jsonl_bad_lines(con, tmp_path):
    f = tmp_path / "chat.jsonl"
    f.write_text(
        "\n".join(
            [
                json.dumps({"sessionId": "s1", "projectHash": "p", "startTime": "2026-04-23T12:52:52.759Z"}),
                json.dumps(
                    {"id": "u1", "timestamp": "2026-04-23T12:53:05Z", "type": "user", "content": [{"text": "hi"}]}
                ),
                "{broken",
                json.dumps({"timestamp": "2026-04-23T12:53:06Z", "type": "gemini", "content": "no id"}),
                json.dumps(
                    {"id": "u1", "timestamp": "2026-04-23T12:53:05Z", "type": "user", "content": [{"text": "hi again"}]}
                ),
            ]
        )
        + "\n"
    )
    ingest_paths(con, [str(f)])
    assert rejects(con, f) == [(3, "invalid JSON"), (4, "missing field: id")]
    assert con.execute("SELECT line, last_line, n_records, text, session_id FROM events").fetchall() == [
        (2, 5, 2, "hi again", "s1")
    ]
    assert acct(con, f) == (5, 2, 1, 2, 1, "ok")


def test_hermes_traj_bad_lines(con, tmp_path):
    f = tmp_path / "trajectory_samples.jsonl"
    f.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "conversations": [
                            {"from": "human", "value": "hi"},
                            {"from": "gpt", "value": "<tool_call>\n{not json}\n</tool_call>"},
                        ],
                        "timestamp": "2026-04-07T15:43:22.800478",
                    }
                ),
                json.dumps({"conversations": "nope"}),
                json.dumps({"conversations": []}),
                "",
            ]
        )
        + "\n"
    )
    ingest_paths(con, [str(f)])
    assert rejects(con, f) == [(2, "missing or malformed field: conversations")]
    rows = con.execute(
        "SELECT part, n_records, role, n_tool_calls, tool_calls[1].arguments, meta->>'bad_tool_calls' "
        "FROM events ORDER BY part"
    ).fetchall()
    assert rows == [(1, 1, "user", 0, None, "0"), (2, 0, "assistant", 1, "{not json}", "1")]
    assert acct(con, f) == (4, 1, 2, 1, 2, "ok")


def test_copilot_unknown_and_bad_lines(con, tmp_path):
    f = tmp_path / "events.jsonl"
    f.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "type": "session.start",
                        "data": {"sessionId": "S"},
                        "id": "1",
                        "timestamp": "2026-04-23T17:08:08Z",
                    }
                ),
                json.dumps(
                    {
                        "type": "user.message",
                        "data": {"content": ["odd", "list"]},
                        "id": "2",
                        "timestamp": "2026-04-23T17:08:09Z",
                    }
                ),
                json.dumps({"data": {}, "id": "3"}),
                json.dumps({"type": "hook.something", "data": {}, "id": "4", "timestamp": "2026-04-23T17:08:10Z"}),
            ]
        )
        + "\n"
    )
    assert detect_format(f) == "copilot_cli"
    ingest_paths(con, [str(f)])
    assert rejects(con, f) == [(3, "missing field: type")]
    assert con.execute("SELECT line, role, text, session_id FROM events").fetchall() == [(2, "user", "odd\nlist", "S")]
    assert acct(con, f) == (4, 1, 2, 1, 1, "ok")


def test_aider_without_input_history_and_bad_bytes(con, tmp_path):
    f = tmp_path / ".aider.chat.history.md"
    f.write_bytes(
        b"# aider chat started at 2025-12-03 14:43:45\n\n#### hello\n\nHi there.\n\n> Tokens: 1.2k sent, 3 received.\n\xff\xfe\n"
    )
    ingest_paths(con, [str(f)])
    assert rejects(con, f) == [(8, "invalid UTF-8")]
    got = con.execute("SELECT line, role, ts_quality, tokens_in, tokens_out FROM events ORDER BY line").fetchall()
    assert got == [
        (1, "system", "per_message", None, None),
        (3, "user", "per_session", None, None),
        (5, "assistant", "per_session", 1200, 3),
        (7, "system", "per_session", None, None),
    ]
    assert acct(con, f) == (8, 4, 3, 1, 4, "ok")


SAMPLE_FORMATS = [
    ("cline/1777073160794", None),
    ("gemini-cli", "gemini_cli"),
    ("gemini-cli-doc", "gemini_cli_json"),
    ("gemini-cli-checkpoint", "gemini_cli_history"),
    ("copilot-cli", "copilot_cli"),
    ("openhands", "openhands"),
    ("swe-agent", "swe_agent"),
    ("hermes-trajectory", "hermes_traj"),
    ("aider", None),
    ("opencode", "opencode"),
    ("otlp", "otlp"),
    ("litellm", "litellm"),
    ("phoenix", "phoenix_spans"),
    ("opencode-run", "opencode_run"),
]


@pytest.fixture(scope="module")
def samples(sample_ingested_file):
    """sample_logs/ as `stallscan ingest sample_logs` leaves it (the session's shared ingest; each file is detected
    and accounted on its own), opened read-only."""
    con = connect(str(sample_ingested_file), read_only=True)
    yield con
    con.close()


@pytest.mark.parametrize("sub, fmt", SAMPLE_FORMATS)
def test_samples_ingest_cleanly(samples, sub, fmt):
    d = SAMPLES / sub
    assert samples.execute("SELECT count(*) FROM rejects WHERE starts_with(file, ?)", [f"{d}/"]).fetchone() == (0,)
    files = samples.execute(
        "SELECT path, status, n_lines, n_event_lines, n_skipped, n_rejects, source_format FROM files "
        "WHERE starts_with(path, ?)",
        [f"{d}/"],
    ).fetchall()
    assert sorted(f[0] for f in files) == sorted(str(p) for p in d.iterdir() if p.is_file())
    for path, status, n_lines, n_ev, n_sk, n_rj, f in files:
        assert status == "ok", path  # (an unrecognised file is listed with status 'unrecognized')
        assert n_lines == n_ev + n_sk + n_rj and n_lines > 0, path
        if fmt:
            assert f == fmt


def test_sample_aider_reflection_and_input_times(samples):
    rows = samples.execute(
        "SELECT line, role, meta->>'aider_block', ts::VARCHAR, ts_quality FROM events WHERE role = 'user' "
        "AND starts_with(file, ?) ORDER BY line",
        [f"{SAMPLES / 'aider'}/"],
    ).fetchall()
    assert rows == [
        (7, "user", "human", "2025-12-03 14:44:06.503685+00", "per_message"),
        (21, "user", "reflection", "2025-12-03 14:43:45+00", "per_session"),
        (39, "user", "human", "2025-12-03 14:46:30.1+00", "per_message"),
    ]
