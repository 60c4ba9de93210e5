"""The guard as the harness runs it: a real process, the hook JSON on stdin, a transcript that grows.

End to end (scripted fake Claude Code and Codex sessions): the guard blocks a narration, lets the
following tool-call turn end, stops blocking after the bound, and counts again from 0 after a tool call
lands. It never traps a session: bad stdin, a missing transcript, an unknown schema, an internal error or
a run over the budget exit 0 with no output and the reason logged. Its process imports no duckdb,
pyarrow, numpy, polars, typer or rich.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time

import pytest

from stallscan.guard import hook
from tests.guard_helpers import BIN, NUDGE, ClaudeSession, run_hook


def test_claude_session_end_to_end(tmp_path):
    log = tmp_path / "guard.jsonl"
    s = ClaudeSession(tmp_path / "t.jsonl")
    s.human("fix the failing test")
    s.tool_round("Let me look at the test first.")
    s.reply("I found the bug. Now I'll run the tests.")
    p, rec = run_hook(s.stop("I found the bug. Now I'll run the tests."), log, "--mode", "enforce")
    assert p.returncode == 0 and json.loads(p.stdout) == {"decision": "block", "reason": NUDGE}
    assert (rec["verdict"], rec["decision"], rec["stalls"], rec["harness"]) == (
        "narrated_intent",
        "block",
        0,
        "claude_code",
    )
    assert rec["signature"] and rec["excerpt"].endswith("Now I'll run the tests.") and len(rec["excerpt"]) <= 80

    # the agent obeys: a tool call lands, then a genuine final: the guard lets the turn end
    s.feedback(NUDGE)
    s.tool_round()
    s.reply("All 12 tests pass now. Done.")
    p, rec = run_hook(s.stop("All 12 tests pass now. Done.", stop_hook_active=True), log, "--mode", "enforce")
    assert p.returncode == 0 and p.stdout == ""
    assert (rec["verdict"], rec["decision"], rec["reason"]) == ("final", "allow", "no stall")

    # a new turn where the model keeps narrating: blocked while the count is below the bound (3) ...
    s.human("now update the changelog")
    s.tool_round()
    for k in range(3):
        s.reply("Next, I'll edit CHANGELOG.md.")
        p, rec = run_hook(s.stop("Next, I'll edit CHANGELOG.md."), log, "--mode", "enforce")
        assert json.loads(p.stdout)["decision"] == "block", k
        assert rec["stalls"] == k
        s.feedback(NUDGE)
    # ... then the turn may end: the bound is spent
    s.reply("Next, I'll edit CHANGELOG.md.")
    p, rec = run_hook(s.stop("Next, I'll edit CHANGELOG.md."), log, "--mode", "enforce")
    assert p.returncode == 0 and p.stdout == ""
    assert (rec["decision"], rec["reason"], rec["stalls"]) == ("allow", "bound reached", 3)

    # a landed tool call resets the count; the reply not yet written to the file is judged from the hook JSON
    s.tool_round()
    p, rec = run_hook(s.stop("Now I'll commit the change."), log, "--mode", "enforce", "--bound", "1")
    assert json.loads(p.stdout)["decision"] == "block"
    assert (rec["stalls"], rec["reply_from"]) == (0, "hook")


def test_observe_mode_decides_and_logs_only(tmp_path):
    log = tmp_path / "guard.jsonl"
    s = ClaudeSession(tmp_path / "t.jsonl")
    s.human("go")
    s.tool_round()
    s.reply("Now I'll run the tests.")
    p, rec = run_hook(s.stop("Now I'll run the tests."), log)  # observe is the default
    assert p.returncode == 0 and p.stdout == ""
    assert (rec["mode"], rec["decision"], rec["verdict"]) == ("observe", "would_block", "narrated_intent")


def test_bound_and_mode_from_stallscan_toml(tmp_path):
    (tmp_path / "stallscan.toml").write_text('[guard]\nmode = "enforce"\nbound = 1\n', encoding="utf-8")
    log = tmp_path / "guard.jsonl"
    s = ClaudeSession(tmp_path / "t.jsonl")
    s.human("go")
    s.tool_round()
    s.reply("Now I'll run the tests.")
    env_free = {k: v for k, v in os.environ.items() if k != "STALLSCAN_CONFIG"}
    p = subprocess.run(
        [sys.executable, "-m", "stallscan.guard", "--log", str(log), "--budget-ms", "60000"],
        input=json.dumps(s.stop("Now I'll run the tests.")),
        capture_output=True,
        text=True,
        env=env_free,
        timeout=30,
    )
    assert json.loads(p.stdout)["decision"] == "block"
    s.feedback(NUDGE)
    s.reply("Now I'll run the tests.")
    p = subprocess.run(
        [sys.executable, "-m", "stallscan.guard", "--log", str(log), "--budget-ms", "60000"],
        input=json.dumps(s.stop("Now I'll run the tests.")),
        capture_output=True,
        text=True,
        env=env_free,
        timeout=30,
    )
    assert p.stdout == ""
    assert json.loads(log.read_text().splitlines()[-1])["reason"] == "bound reached"


def test_codex_session_end_to_end(tmp_path):
    log = tmp_path / "guard.jsonl"
    path = tmp_path / "rollout.jsonl"
    lines = [
        {"type": "session_meta", "payload": {"id": "cx-1", "cwd": str(tmp_path)}},
        {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "turn-1"}},
        {
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
        },
        {"type": "event_msg", "payload": {"type": "user_message", "message": "fix it"}},
        {
            "type": "response_item",
            "payload": {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
        },
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", "output": "ok"}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "I'll now patch a.py."}],
            },
        },
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    payload = {
        "session_id": "cx-1",
        "turn_id": "turn-1",
        "transcript_path": str(path),
        "cwd": str(tmp_path),
        "hook_event_name": "Stop",
        "model": "gpt-5.4",
        "stop_hook_active": False,
        "last_assistant_message": "I'll now patch a.py.",
    }
    p, rec = run_hook(payload, log, "--mode", "enforce", "--harness", "codex")
    assert json.loads(p.stdout)["decision"] == "block"
    assert (rec["harness"], rec["turn"], rec["verdict"]) == ("codex", "turn-1", "narrated_intent")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(
            json.dumps(
                {
                    "type": "response_item",
                    "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": NUDGE}]},
                }
            )
            + "\n"
        )
    payload["last_assistant_message"] = "Patched a.py; the tests pass."
    p, rec = run_hook(payload, log, "--mode", "enforce")
    assert p.stdout == "" and rec["verdict"] == "final"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("this is not json", "bad stdin"),
        ("", "bad stdin"),
        ("[1, 2]", "stdin is not a JSON object"),
        (json.dumps({"hook_event_name": "Stop", "last_assistant_message": "Now I'll go."}), "no transcript_path"),
        (json.dumps({"hook_event_name": "Stop", "transcript_path": "/nonexistent/t.jsonl"}), "transcript not found"),
        (json.dumps({"hook_event_name": "PreToolUse", "transcript_path": "/x"}), "not a stop event"),
        (
            json.dumps({"hook_event_name": "Stop", "transcript_path": "/x", "last_assistant_message": 5}),
            "unknown schema",
        ),
    ],
)
def test_never_traps_on_bad_input(tmp_path, raw, reason):
    log = tmp_path / "guard.jsonl"
    p, rec = run_hook(None, log, "--mode", "enforce", raw=raw)
    assert (p.returncode, p.stdout) == (0, "")
    assert rec["decision"] == "allow" and rec["reason"].startswith(reason)


def test_never_traps_on_unknown_transcript_schema(tmp_path):
    t = tmp_path / "t.jsonl"
    t.write_text('{"kind": "something else"}\nnot json\n', encoding="utf-8")
    p, rec = run_hook(
        {"hook_event_name": "Stop", "transcript_path": str(t), "last_assistant_message": "Now I'll go."},
        tmp_path / "g.jsonl",
        "--mode",
        "enforce",
    )
    assert (p.returncode, p.stdout, rec["reason"]) == (0, "", "unknown transcript schema")


def _in_process(payload, log, monkeypatch, **kw):
    out = io.StringIO()
    rc = hook.main(["--mode", "enforce", "--log", str(log), *kw.get("args", [])], io.StringIO(json.dumps(payload)), out)
    return rc, out.getvalue(), json.loads(log.read_text().splitlines()[-1])


def test_never_traps_on_internal_error_or_budget(tmp_path, monkeypatch):
    s = ClaudeSession(tmp_path / "t.jsonl")
    s.human("go")
    s.tool_round()
    s.reply("Now I'll run the tests.")
    payload = s.stop("Now I'll run the tests.")
    from stallscan.guard import judge as judge_mod

    def boom(*a, **k):
        raise RuntimeError("synthetic failure")

    monkeypatch.setattr(judge_mod, "judge", boom)
    rc, out, rec = _in_process(payload, tmp_path / "g1.jsonl", monkeypatch)
    assert (rc, out) == (0, "") and rec["reason"].startswith("internal error: RuntimeError")

    def slow(*a, **k):
        time.sleep(2)

    monkeypatch.setattr(judge_mod, "judge", slow)
    rc, out, rec = _in_process(payload, tmp_path / "g2.jsonl", monkeypatch, args=["--budget-ms", "100"])
    assert (rc, out) == (0, "") and rec["reason"] == "time budget 100 ms exceeded"


@pytest.mark.parametrize("entry", ["module", "console_script"])
def test_hook_process_imports_no_heavy_module(tmp_path, entry):
    s = ClaudeSession(tmp_path / "t.jsonl")
    s.human("go")
    s.tool_round()
    s.reply("Now I'll run the tests.")
    cmd = [sys.executable, "-X", "importtime", "-m", "stallscan.guard"]
    if entry == "console_script":
        script = BIN / "stallscan-guard"
        if not script.exists():
            pytest.skip(f"no console script at {script}")
        cmd = [sys.executable, "-X", "importtime", str(script)]
    p, _rec = run_hook(s.stop("Now I'll run the tests."), tmp_path / "g.jsonl", "--mode", "enforce", cmd=cmd)
    assert json.loads(p.stdout)["decision"] == "block"
    imported = {ln.split("|")[-1].strip().split(".")[0] for ln in p.stderr.splitlines() if "|" in ln}
    assert not imported & {"duckdb", "pyarrow", "numpy", "polars", "typer", "rich", "click"}, sorted(imported)


def test_stallscan_guard_without_a_subcommand_runs_the_hook(tmp_path):
    """`stallscan guard --mode ...` (through the typer app) hands its arguments to the hook: same decision."""
    script = BIN / "stallscan"
    if not script.exists():
        pytest.skip(f"no console script at {script}")
    s = ClaudeSession(tmp_path / "t.jsonl")
    s.human("go")
    s.tool_round()
    s.reply("Now I'll run the tests.")
    p, rec = run_hook(
        s.stop("Now I'll run the tests."), tmp_path / "g.jsonl", "--mode", "enforce", cmd=[str(script), "guard"]
    )
    assert json.loads(p.stdout)["decision"] == "block" and rec["decision"] == "block"


def test_log_is_beside_the_database(tmp_path):
    s = ClaudeSession(tmp_path / "t.jsonl")
    s.human("go")
    s.reply("Hello.")
    env = {**os.environ, "STALLSCAN_DB": str(tmp_path / "db" / "x.duckdb")}
    env.pop("STALLSCAN_GUARD_LOG", None)
    subprocess.run(
        [sys.executable, "-m", "stallscan.guard"],
        input=json.dumps(s.stop("Hello.")),
        text=True,
        env=env,
        timeout=30,
        check=True,
    )
    rec = json.loads((tmp_path / "db" / "stallscan-guard.jsonl").read_text())
    assert rec["verdict"] == "final" and rec["excerpt"] is None  # no transcript text unless a stall


def test_bound_holds_when_the_harness_does_not_write_the_reason(tmp_path):
    """A harness that keeps no record of the block reason (or writes it late) is not re-prompted forever:
    the guard's own logged blocks of the session since the last landed tool call count too."""
    log = tmp_path / "guard.jsonl"
    s = ClaudeSession(tmp_path / "t.jsonl")
    s.human("go")
    s.tool_round()
    decisions = []
    for _ in range(4):
        s.reply("Now I'll run the tests.")
        _p, rec = run_hook(s.stop("Now I'll run the tests."), log, "--mode", "enforce")
        decisions.append((rec["decision"], rec["stalls"]))
    assert decisions == [("block", 0), ("block", 1), ("block", 2), ("allow", 3)]
    s.tool_round()  # a landed tool call opens a new count
    s.reply("Now I'll run the tests.")
    _p, rec = run_hook(s.stop("Now I'll run the tests."), log, "--mode", "enforce")
    assert (rec["decision"], rec["stalls"]) == ("block", 0)


def test_subagent_stop_reads_the_agent_transcript(tmp_path):
    log = tmp_path / "guard.jsonl"
    main = ClaudeSession(tmp_path / "main.jsonl")
    main.human("delegate it")
    agent = ClaudeSession(tmp_path / "agent-a1.jsonl")
    agent.human("look into the flaky test")
    agent.tool_round()
    agent.reply("Next, I'll check the fixture.")
    lines = [json.loads(ln) for ln in agent.path.read_text().splitlines()]
    agent.path.write_text(
        "".join(json.dumps({**r, "isSidechain": True, "agentId": "a1"}) + "\n" for r in lines), encoding="utf-8"
    )
    payload = {
        **main.stop("Next, I'll check the fixture."),
        "hook_event_name": "SubagentStop",
        "agent_id": "a1",
        "agent_type": "general-purpose",
        "agent_transcript_path": str(agent.path),
    }
    p, rec = run_hook(payload, log, "--mode", "enforce")
    assert json.loads(p.stdout)["decision"] == "block"
    assert (rec["event"], rec["session"], rec["verdict"]) == ("SubagentStop", "sess-1/agent-a1", "narrated_intent")
