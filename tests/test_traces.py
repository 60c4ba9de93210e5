"""Issue 22: traces captured from the real openai client, instrumented by the real GenAI instrumentations and
exported by the real SDK exporter (tests/trace_capture.py), ingest with every span accounted, and the replay
finds exactly the scripted dropped call, narration and timing. Expected values come from trace_capture.SCRIPT
and SCHEDULE (what the stub answered and when), never from stallscan's output."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from stallscan.ingest.run import ingest_paths
from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.labels import label_events
from stallscan.replay.stalls import replay_stalls
from stallscan.store.db import connect
from tests import trace_capture as tc
from tests.helpers import SAMPLES
from tests.hostile import accounting_errors

N_REQ = len(tc.SCRIPT)
# events: the first request's two new messages (system, user), one new message for each later request, and
# one reply per request
N_EVENTS = 2 + (N_REQ - 1) + N_REQ


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    # only the captures need the traces extra (trace_capture.py imports them when it runs)
    for mod in ("openai", "httpx", "opentelemetry.sdk", "opentelemetry.exporter.otlp.json.file"):
        pytest.importorskip(mod, reason=f"{mod} missing: pip install -e '.[traces]'")
    out = tmp_path_factory.mktemp("traces")
    args = []
    for mode, module in (
        ("genai", "opentelemetry.instrumentation.openai_v2"),
        ("openinference", "openinference.instrumentation.openai"),
    ):
        pytest.importorskip(module, reason=f"{module} missing: pip install -e '.[traces]'")
        args += [mode, str(out / f"{mode}.jsonl")]
    # both captures in one process (one start-up, the client and SDK imported once; each capture
    # uninstruments the client after itself)
    subprocess.run([sys.executable, str(Path(__file__).parent / "trace_capture.py"), *args], check=True, timeout=120)
    return out


@cache  # the tests only read the result: one ingest and replay per file and attribute in the module
def _replay(path: Path, conversation_attr: str | None = None):
    con = connect(":memory:")
    res = ingest_paths(con, [str(path)], conversation_attr=conversation_attr)
    label_events(con, config={})
    replay_stalls(con, segmentation="labels")
    replay_boundaries(con, 2.0)
    return con, res


def _spans(path: Path) -> list[dict]:
    return [
        sp
        for raw in path.read_text().splitlines()
        for rs in json.loads(raw)["resourceSpans"]
        for ss in rs["scopeSpans"]
        for sp in ss["spans"]
    ]


@pytest.mark.parametrize("mode", ["genai", "openinference"])
def test_captured_trace_conserves_every_span(captured, mode):
    path = captured / f"{mode}.jsonl"
    spans = _spans(path)
    assert len(spans) == N_REQ + 1  # the requests and the agent's parent span
    con, res = _replay(path)
    assert accounting_errors(con) == []
    assert res.rejects == 0 and res.skipped == {"span:invoke_agent": 1}
    n_lines, n_ev, n_sk, n_rj, fmt = con.execute(
        "SELECT n_lines, n_event_lines, n_skipped, n_rejects, source_format FROM files"
    ).fetchone()
    assert (fmt, n_lines, n_ev, n_sk, n_rj) == ("otlp", len(spans), N_REQ, 1, 0)
    assert res.events == N_EVENTS
    # one reply per request, each with the stub's finish reason and calls, at the span's end
    replies = con.execute(
        "SELECT finish_reason, n_tool_calls, text, ts FROM events WHERE role = 'assistant' ORDER BY seq"
    ).fetchall()
    sched = tc.schedule()
    for (finish, n_calls, text, ts), (_, _, _, want), (_, end) in zip(replies, tc.SCRIPT, sched):
        assert finish == want["finish_reason"]
        assert n_calls == len(want["tool_calls"] or [])
        assert (text or None) == (want["content"] or None)
        assert ts == datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=end // 1000)
    # the re-sent history became no event: each new message once, in the order the client added them
    sent = [m for added, *_ in tc.SCRIPT for m in added]
    got = con.execute("SELECT role, text, tool_call_id FROM events WHERE role <> 'assistant' ORDER BY seq").fetchall()
    assert got == [(m["role"], m["content"], m.get("tool_call_id")) for m in sent]


@pytest.mark.parametrize("mode", ["genai", "openinference"])
def test_dropped_call_and_narration_are_flagged(captured, mode):
    con, _ = _replay(captured / f"{mode}.jsonl")
    stalls = con.execute(
        "SELECT e.line, s.round_kind, s.nudged, s.outcome FROM stalls s JOIN events e USING (event_id) ORDER BY e.line"
    ).fetchall()
    # request 2: finish tool_calls, no call (nudged by request 3); request 4: narration (nudged by request 5)
    assert stalls == [(2, "dropped_tool_call", True, "recovered"), (4, "narrated_intent", True, "recovered")]


def test_boundary_replay_agrees_with_the_scripted_timing(captured):
    con, _ = _replay(captured / "genai.jsonl")
    rows = con.execute(
        "SELECT e.line, t.role, t.decided_by, t.decision, round(t.gap_s, 6), t.origin FROM turn_boundaries t "
        "JOIN events e USING (event_id) ORDER BY t.seq"
    ).fetchall()
    gaps = [None] + [g / 1e9 for _, _, g, _ in tc.SCRIPT[1:]]
    assert [r[4] for r in rows] == gaps
    assert [r[2] for r in rows] == ["first", "completion", "gap", "completion", "gap", "completion", "gap"]
    # the person's message 1.2 s after a final reply: under the 2 s gap, the router takes it for a continuation
    assert rows[-1][1:] == ("user", "gap", "continuation", 1.2, "human")
    assert [r[5] for r in rows[2:5:2]] == ["automatic", "automatic"]  # the two nudges


def test_gateway_header_and_named_conversation(captured):
    path = captured / "openinference.jsonl"
    con, _ = _replay(path, conversation_attr="session.id")
    rows = con.execute("SELECT DISTINCT session_id, meta->>'conversation_by' FROM events").fetchall()
    assert rows == [("sess-1", "attr:session.id")]
    got = con.execute("SELECT initiator, decided_by, decision FROM turn_boundaries ORDER BY seq").fetchall()
    want = [(who, "header", "human" if who == "user" else "continuation") for _, who, _, _ in tc.SCRIPT]
    assert got == want
    con2, _ = _replay(path)  # no attribute named: the trace is the conversation
    assert con2.execute("SELECT DISTINCT session_id, meta->>'conversation_by' FROM events").fetchall() == [
        (_spans(path)[0]["traceId"], "trace")
    ]


def test_appended_spans_read_incrementally_and_gzip(captured, tmp_path):
    lines = (captured / "genai.jsonl").read_text().splitlines(keepends=True)
    grown = tmp_path / "grown.jsonl"
    con = connect(":memory:")
    for cut in (3, 5, len(lines)):
        grown.write_text("".join(lines[:cut]))
        ingest_paths(con, [str(grown)])
    z = tmp_path / "whole.jsonl.gz"
    z.write_bytes(gzip.compress("".join(lines).encode()))
    full = connect(":memory:")
    ingest_paths(full, [str(z)])
    q = "SELECT line, part, session_id, role, text, n_tool_calls, finish_reason, ts, seq FROM events ORDER BY line, part"
    assert con.execute(q).fetchall() == full.execute(q).fetchall()
    assert len(con.execute(q).fetchall()) == N_EVENTS


def test_one_pretty_printed_export_and_damaged_spans(tmp_path):
    span: dict[str, Any] = {
        "traceId": "ab" * 16,
        "spanId": "cd" * 8,
        "name": "chat m",
        "kind": 3,
        "startTimeUnixNano": "1780308000000000000",
        "endTimeUnixNano": "1780308002000000000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {
                "key": "gen_ai.input.messages",
                "value": {"stringValue": '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]'},
            },
            {"key": "gen_ai.response.finish_reasons", "value": {"arrayValue": {"values": [{"stringValue": "stop"}]}}},
        ],
    }
    broken = dict(
        span,
        spanId="ef" * 8,
        attributes=span["attributes"][:1] + [{"key": "gen_ai.input.messages", "value": {"stringValue": "[{"}}],
    )
    tool = {
        "traceId": "ab" * 16,
        "spanId": "01" * 8,
        "name": "execute_tool x",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}}],
    }
    doc = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "s"}, "spans": [span, broken, tool]}]}]}
    f = tmp_path / "export.json"
    f.write_text(json.dumps(doc, indent=2))
    con = connect(":memory:")
    res = ingest_paths(con, [str(f)])
    # the document is one record holding three spans: an event line whose first event tallies them
    assert con.execute("SELECT source_format, n_lines, n_event_lines, n_skipped, n_rejects FROM files").fetchone() == (
        "otlp_doc",
        1,
        1,
        0,
        0,
    )
    assert res.rejects == 0 and res.skipped == {}
    tally = json.loads(con.execute("SELECT meta->'spans' FROM events WHERE part = 1").fetchone()[0])
    assert tally == {
        "llm": 1,
        "skipped": 1,
        "rejected": 1,
        "skipped_kinds": ["execute_tool"],
        "rejected_reasons": ["invalid JSON in gen_ai.input.messages"],
    }
    assert con.execute("SELECT role, text, finish_reason FROM events ORDER BY part").fetchall() == [
        ("user", "hi", None),
        ("assistant", None, "stop"),
    ]
    # the same spans one export a line: each span's fate is its line's
    f2 = tmp_path / "lines.jsonl"
    f2.write_text(
        "".join(
            json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [sp]}]}]}) + "\n" for sp in (span, broken, tool)
        )
        + '{"resourceSpans": "x"}\n{"resourceSpans": [\n'
    )
    con2 = connect(":memory:")
    ingest_paths(con2, [str(f2)])
    assert con2.execute("SELECT line, kind FROM skipped").fetchall() == [(3, "span:execute_tool")]
    assert con2.execute("SELECT line, reason FROM rejects ORDER BY line").fetchall() == [
        (2, "invalid JSON in gen_ai.input.messages"),
        (4, "malformed resourceSpans"),
        (5, "invalid JSON"),
    ]
    assert accounting_errors(con) == [] and accounting_errors(con2) == []


def test_batched_export_lines_read_like_one_span_a_line(captured, tmp_path):
    """A BatchSpanProcessor or a collector writes many spans on one line: same events, every span tallied."""
    path = captured / "genai.jsonl"
    spans = _spans(path)
    batched = tmp_path / "batched.jsonl"
    halves = (spans[:4], spans[4:])
    batched.write_text(
        "".join(
            json.dumps({"resourceSpans": [{"scopeSpans": [{"scope": {"name": "x"}, "spans": h}]}]}) + "\n"
            for h in halves
        )
    )
    con, _ = _replay(batched)
    one, _ = _replay(path)
    assert accounting_errors(con) == []
    assert con.execute("SELECT n_lines, n_event_lines FROM files").fetchone() == (2, 2)
    tallies = [
        json.loads(t)
        for (t,) in con.execute("SELECT meta->'spans' FROM events WHERE part = 1 ORDER BY line").fetchall()
    ]
    assert sum(t["llm"] + t["skipped"] + t["rejected"] for t in tallies) == len(spans)
    q = "SELECT session_id, role, text, n_tool_calls, finish_reason, ts, ts_end FROM events ORDER BY seq"
    assert con.execute(q).fetchall() == one.execute(q).fetchall()
    q = "SELECT s.round_kind, s.nudged, s.outcome FROM stalls s ORDER BY s.seq"
    assert con.execute(q).fetchall() == one.execute(q).fetchall()


def test_litellm_payloads_sample():
    path = SAMPLES / "litellm" / "standard_logging_payloads.jsonl"
    con, res = _replay(path)
    assert res.rejects == 0 and res.skipped == {"call_type:aembedding": 1}
    # from the payloads: L1 finish tool_calls with tool_calls [], L2 the Hermes nudge, then a call
    stalls = con.execute(
        "SELECT e.line, s.round_kind, s.nudged, s.outcome FROM stalls s JOIN events e USING (event_id)"
    ).fetchall()
    assert stalls == [(1, "dropped_tool_call", True, "recovered")]
    got = con.execute(
        "SELECT e.line, t.initiator, t.decided_by, t.decision FROM turn_boundaries t JOIN events e USING (event_id) ORDER BY t.seq"
    ).fetchall()
    assert got == [
        (1, "user", "header", "human"),
        (2, "agent", "header", "continuation"),
        (4, "agent", "header", "continuation"),
    ]
    assert con.execute("SELECT DISTINCT session_id FROM events").fetchall() == [("sess-ll-7",)]


def _phoenix(otlp: Path, out: Path) -> None:
    """The captured OpenInference spans as Phoenix keeps them (span_json_encoder's fields, attributes
    unflattened: dotted keys nested, numeric segments as list positions)."""

    def put(tree, parts, value):
        head, rest = parts[0], parts[1:]
        if not rest:
            tree[head] = value
            return
        nxt: list[Any] | dict[str, Any] = [] if rest[0].isdigit() else {}
        if isinstance(tree, list):
            i = int(head)
            while len(tree) <= i:
                tree.append(nxt)
            put(tree[i], rest, value)
        else:
            put(tree.setdefault(head, nxt), rest, value)

    def iso(ns: str) -> str:
        return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=int(ns) // 1000)).isoformat()

    lines = []
    for sp in _spans(otlp):
        attrs: dict = {}
        for a in sp.get("attributes", []):
            v = a["value"]
            value = v.get("stringValue", v.get("intValue", v.get("boolValue")))
            if "arrayValue" in v:
                value = [x.get("stringValue") for x in v["arrayValue"].get("values", [])]
            put(attrs, a["key"].split("."), value)
        kind = attrs.get("openinference", {}).get("span", {}).get("kind", "UNKNOWN")
        lines.append(
            {
                "name": sp["name"],
                "context": {"trace_id": sp["traceId"], "span_id": sp["spanId"]},
                "span_kind": kind,
                "parent_id": sp.get("parentSpanId"),
                "start_time": iso(sp["startTimeUnixNano"]),
                "end_time": iso(sp["endTimeUnixNano"]),
                "status_code": "OK",
                "status_message": "",
                "attributes": attrs,
                "events": [],
                "conversation": None,
            }
        )
    out.write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_phoenix_span_json_reads_like_the_otlp_export(captured, tmp_path):
    px = tmp_path / "phoenix.jsonl"
    _phoenix(captured / "openinference.jsonl", px)
    con, res = _replay(px, conversation_attr="session.id")
    otlp, _ = _replay(captured / "openinference.jsonl", conversation_attr="session.id")
    assert res.rejects == 0 and res.skipped == {"span:invoke_agent": 1}  # the agent span
    assert con.execute("SELECT source_format FROM files").fetchone() == ("phoenix_spans",)
    q = "SELECT line, part, session_id, role, text, n_tool_calls, finish_reason, ts, ts_end FROM events ORDER BY line, part"
    assert con.execute(q).fetchall() == otlp.execute(q).fetchall()
    q = "SELECT e.line, s.round_kind, s.nudged, s.outcome FROM stalls s JOIN events e USING (event_id) ORDER BY e.line"
    assert con.execute(q).fetchall() == [
        (2, "dropped_tool_call", True, "recovered"),
        (4, "narrated_intent", True, "recovered"),
    ]


def test_system_instructions_error_span_and_conversation_id(tmp_path):
    def attr(k, v):
        return {"key": k, "value": {"stringValue": v}}

    t0 = 1_780_308_000 * 10**9
    ok = {
        "traceId": "01" * 16,
        "spanId": "02" * 8,
        "name": "chat m",
        "startTimeUnixNano": str(t0),
        "endTimeUnixNano": str(t0 + 2 * 10**9),
        "attributes": [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.conversation.id", "conv-7"),
            attr("gen_ai.system_instructions", json.dumps([{"type": "text", "content": "Be brief."}])),
            attr("gen_ai.input.messages", json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}])),
        ],
    }
    # a failed request (another trace, same conversation): status ERROR, no output
    failed = dict(
        ok,
        traceId="03" * 16,
        spanId="04" * 8,
        startTimeUnixNano=str(t0 + 5 * 10**9),
        endTimeUnixNano=str(t0 + 6 * 10**9),
        status={"code": 2, "message": "429 Too Many Requests"},
    )
    f = tmp_path / "t.jsonl"
    f.write_text(
        "".join(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [s]}]}]}) + "\n" for s in (ok, failed))
    )
    con = connect(":memory:")
    ingest_paths(con, [str(f)])
    got = con.execute(
        "SELECT line, role, text, finish_reason, session_id, meta->>'conversation_by' FROM events ORDER BY seq"
    ).fetchall()
    by = "gen_ai.conversation.id"
    assert got == [
        (1, "system", "Be brief.", None, "conv-7", by),
        (1, "user", "hi", None, "conv-7", by),
        (1, "assistant", None, None, "conv-7", by),
        (2, "system", "Be brief.", None, "conv-7", by),  # the input holds no assistant message: all of it is new
        (2, "user", "hi", None, "conv-7", by),
        (2, "assistant", "429 Too Many Requests", "error", "conv-7", by),
    ]


def test_cli_conversation_attr_and_input_format(tmp_path):
    """The two options as the command line passes them: the typer app run in this process (the options'
    parsing and effect are the subject, not a process start)."""
    sample = SAMPLES / "phoenix" / "spans.jsonl"

    def stallscan(*args):
        r = CliRunner().invoke(app, list(args), prog_name="stallscan", env={"TZ": "UTC", "NO_COLOR": "1"})
        return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)

    db = tmp_path / "a.duckdb"
    p = stallscan("ingest", str(sample), "--db", str(db), "--conversation-attr", "session.id", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["sessions"] == 1
    q = "SELECT DISTINCT session_id, meta->>'conversation_by' AS by FROM events"
    p = stallscan("sql", q, "--db", str(db), "--format", "json")
    assert json.loads(p.stdout) == [{"session_id": "sess-px-1", "by": "attr:session.id"}]
    db2 = tmp_path / "b.duckdb"
    p = stallscan("ingest", str(sample), "--db", str(db2), "--input-format", "otlp", "--json")
    assert p.returncode == 0, p.stderr  # forced to the wrong format: every line a reject, none lost
    assert json.loads(p.stdout)["rejects"] == 3
