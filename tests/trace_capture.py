"""Capture real OTLP JSON traces of a scripted agent run (issue 22), for tests/test_traces.py and docs/traces.md.

    python tests/trace_capture.py genai|openinference OUT.jsonl [genai|openinference OUT.jsonl]

The real `openai` client talks to a loopback stub server (an http.server thread answering
/v1/chat/completions with SCRIPT's replies, in order). It is instrumented by the real
`opentelemetry-instrumentation-openai-v2` (genai: latest GenAI conventions, messages as span attributes) or
OpenInference's `openinference-instrumentation-openai` (openinference), and the real SDK's FileSpanExporter
writes one OTLP JSON export per span (SimpleSpanProcessor). The run is one `invoke_agent` parent span (a
trace: the conversation when no conversation id is set). openinference: the run also sits in
`using_session("sess-1")` (attribute session.id, for --conversation-attr) and a span processor records the
request's x-initiator header on each span, as a gateway would (`http.request.header.x-initiator`).

Times: the captured spans are as fast as the machine is; the file is then post-processed so the LLM spans
(in file order = request order) carry SCHEDULE's start and end times, and the parent span covers them. The
test's timing never depends on the machine's load.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from contextvars import ContextVar
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

T0_NS = 1_780_308_000 * 10**9  # 2026-06-01T10:00:00Z
REPLY_NS = 3 * 10**9  # every request takes 3 s
HARNESS_GAP_NS = 50 * 10**6  # the harness sends its next request 50 ms after a reply
HUMAN_GAP_NS = 1_200 * 10**6  # the person's next message comes 1.2 s after the final reply

NUDGE_DROPPED = (
    "Your previous turn indicated a tool call but none was included. Do not narrate a plan or restate "
    "intent — issue the actual tool call now to continue the task."
)
NUDGE_CONTINUE = (
    "[System: Continue now. Execute the required tool calls and only send your final answer after completing the task.]"
)


def _call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


# (messages the client adds before the request, x-initiator, gap before the request, the stub's reply)
SCRIPT: list[tuple[list[dict[str, Any]], str, int, dict[str, Any]]] = [
    (
        [
            {"role": "system", "content": "You are a coding agent. Use the tools."},
            {"role": "user", "content": "The test for calc.add fails. Fix it."},
        ],
        "user",
        0,
        {
            "finish_reason": "tool_calls",
            "content": None,
            "tool_calls": [_call("call_1", "read_file", {"path": "calc.py"})],
        },
    ),
    (
        [{"role": "tool", "tool_call_id": "call_1", "content": "def add(a, b):\n    return a - b\n"}],
        "agent",
        HARNESS_GAP_NS,
        # the dropped call: finish_reason tool_calls, an empty tool_calls list
        {"finish_reason": "tool_calls", "content": "I'll patch calc.py now.", "tool_calls": []},
    ),
    (
        [{"role": "user", "content": NUDGE_DROPPED}],
        "agent",
        HARNESS_GAP_NS,
        {"finish_reason": "tool_calls", "content": None, "tool_calls": [_call("call_2", "patch", {"path": "calc.py"})]},
    ),
    (
        [{"role": "tool", "tool_call_id": "call_2", "content": "patched calc.py"}],
        "agent",
        HARNESS_GAP_NS,
        # the narration-only reply
        {"finish_reason": "stop", "content": "Next, I'll run the tests to confirm the fix.", "tool_calls": None},
    ),
    (
        [{"role": "user", "content": NUDGE_CONTINUE}],  # the nudge that follows it
        "agent",
        HARNESS_GAP_NS,
        {"finish_reason": "tool_calls", "content": None, "tool_calls": [_call("call_3", "run_tests", {})]},
    ),
    (
        [{"role": "tool", "tool_call_id": "call_3", "content": "12 passed"}],
        "agent",
        HARNESS_GAP_NS,
        {"finish_reason": "stop", "content": "All 12 tests pass; calc.add returns a + b again.", "tool_calls": None},
    ),
    (
        [{"role": "user", "content": "Thanks. Please also add a docstring to add()."}],  # 1.2 s after a final reply
        "user",
        HUMAN_GAP_NS,
        {"finish_reason": "stop", "content": "The docstring is in place.", "tool_calls": None},
    ),
]


def schedule() -> list[tuple[int, int]]:
    """(start, end) of each request in ns since the epoch."""
    out, t = [], T0_NS
    for _, _, gap, _ in SCRIPT:
        t += gap
        out.append((t, t + REPLY_NS))
        t += REPLY_NS
    return out


class _Stub(BaseHTTPRequestHandler):
    n = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        reply = SCRIPT[_Stub.n][3]
        _Stub.n += 1
        msg: dict[str, Any] = {"role": "assistant", "content": reply["content"]}
        if reply["tool_calls"] is not None:
            msg["tool_calls"] = reply["tool_calls"]
        body = json.dumps(
            {
                "id": f"chatcmpl-{_Stub.n}",
                "object": "chat.completion",
                "created": T0_NS // 10**9,
                "model": "stub-model",
                "choices": [{"index": 0, "finish_reason": reply["finish_reason"], "message": msg}],
                "usage": {"prompt_tokens": 10 * _Stub.n, "completion_tokens": 7, "total_tokens": 10 * _Stub.n + 7},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def capture(mode: str, out: str) -> None:
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
    import openai
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    initiator: ContextVar[str | None] = ContextVar("initiator", default=None)

    class GatewayHeaders(SpanProcessor):  # what a gateway records of the request it served
        def on_start(self, span: Any, parent_context: Any = None) -> None:
            if initiator.get():
                span.set_attribute("http.request.header.x-initiator", (initiator.get(),))

    _Stub.n = 0  # the script from its first reply (an earlier capture in this process answered it all)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    provider = TracerProvider()
    if mode == "openinference":
        provider.add_span_processor(GatewayHeaders())
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(out)))
    if mode == "genai":
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        instrumentor: Any = OpenAIInstrumentor()
    else:
        from openinference.instrumentation.openai import OpenAIInstrumentor as OIInstrumentor

        instrumentor = OIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    from contextlib import nullcontext

    if mode == "openinference":
        from openinference.instrumentation import using_session

        session: Any = using_session("sess-1")
    else:
        session = nullcontext()
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="stub", max_retries=0)
    tracer = trace.get_tracer("stallscan.tests.agent", tracer_provider=provider)
    messages: list[dict[str, Any]] = []
    with session, tracer.start_as_current_span("invoke_agent calc-fixer") as agent:
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        for added, who, _gap, _reply in SCRIPT:
            messages.extend(added)
            token = initiator.set(who)
            try:
                r = client.chat.completions.create(model="stub-model", messages=messages)  # type: ignore[arg-type]
            finally:
                initiator.reset(token)
            messages.append(r.choices[0].message.model_dump(exclude_none=True))
    instrumentor.uninstrument()  # (a next capture in this process instruments the client afresh)
    provider.shutdown()
    server.shutdown()
    _retime(out)  # (and checks one LLM span per request: no instrumentation left over from a previous capture)


def _retime(path: str) -> None:
    """Give the LLM spans (file order) SCHEDULE's times and the parent span times around them."""
    sched = schedule()
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    out, k = [], 0
    for raw in lines:
        doc = json.loads(raw)
        for rs in doc["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for sp in ss["spans"]:
                    keys = {a["key"] for a in sp.get("attributes", [])}
                    llm = "llm.input_messages.0.message.role" in keys or "gen_ai.input.messages" in keys
                    if llm:
                        sp["startTimeUnixNano"], sp["endTimeUnixNano"] = (str(t) for t in sched[k])
                        k += 1
                    else:
                        sp["startTimeUnixNano"] = str(sched[0][0] - 10**7)
                        sp["endTimeUnixNano"] = str(sched[-1][1] + 10**7)
        out.append(json.dumps(doc, separators=(",", ":")))
    if k != len(SCRIPT):
        raise SystemExit(f"{path}: {k} LLM spans captured, {len(SCRIPT)} requests made")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out) + "\n")


if __name__ == "__main__":  # one capture per MODE OUT pair, in this one process (one start-up and import)
    for i in range(1, len(sys.argv) - 1, 2):
        capture(sys.argv[i], sys.argv[i + 1])
