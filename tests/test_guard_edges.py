"""The guard must never trap a session (issue 24) and its edges (issue 23), fed the JSON the harness sends.

Through a real process where it is about hangs, exit codes or files; timeouts are only safety nets.
- a narration with a lone UTF-16 surrogate: its record is written (the bound counts), so blocks stop at it;
- --log naming a FIFO with no reader, /dev/zero or a directory: exit 0, no hang, no block without a record;
- the budget runs from process start: a stdin that never closes ends at the budget with exit 0 and the
  reason logged; no run, however short its budget, prints a traceback;
- a 100,000-nudge transcript is read no further than its tail;
- a relative transcript_path is the harness's, from the payload's cwd;
- `python -m stallscan.guard -h` prints help and writes nothing; `guard status` never prints None and
  has --json; a project-scope install keeps its log out of git (these `stallscan guard` commands in-process:
  their files and output are the subject).
Fuzz (hypothesis): hostile payloads (surrogates, wrong types), hostile logs and transcripts, in-process.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stallscan.guard import hook
from stallscan.guard import transcript as tr
from tests.guard_helpers import NUDGE, ClaudeSession, run_hook

SAFETY = 60  # seconds: only so that a hang fails the test instead of the suite
HOOK = [sys.executable, "-m", "stallscan.guard"]


def _session(tmp_path: Path, text: str) -> tuple[ClaudeSession, dict]:
    s = ClaudeSession(tmp_path / "t.jsonl")
    s.human("fix the failing test")
    s.tool_round("Let me look at the test first.")
    s.reply(text)
    return s, s.stop(text)


def _records(log: Path) -> list[dict]:
    """The guard records of a log (hostile lines a fuzz case put there are not records)."""
    out = []
    for x in log.read_bytes().splitlines() if log.is_file() else []:
        try:
            r = json.loads(x)
        except ValueError:
            continue
        if isinstance(r, dict) and "stallscan_guard" in r and "latency_ms" in r:
            out.append(r)
    return out


def test_lone_surrogate_narration_is_logged_so_the_bound_holds(tmp_path):
    """Once: every call blocked and no record written (the encode raised inside a suppress): endless."""
    text = "Now I'll run the tests. \ud800"
    s, payload = _session(tmp_path, text)
    log = tmp_path / "g.jsonl"
    decisions = []
    for i in range(6):
        p, rec = run_hook(payload, log, "--mode", "enforce")
        assert p.returncode == 0 and "Traceback" not in p.stderr
        assert len(_records(log)) == i + 1  # one record a call, whatever the text
        decisions.append(rec["decision"])
        if p.stdout:
            assert json.loads(p.stdout)["decision"] == "block"
            s.reply(text)  # the harness re-prompted without writing the reason into the transcript
        payload = s.stop(text, stop_hook_active=True)
    assert decisions[:3] == ["block"] * 3 and "block" not in decisions[3:], decisions
    assert "\ufffd" in _records(log)[0]["excerpt"]  # the surrogate written as U+FFFD: valid UTF-8 JSON


def test_log_that_is_a_fifo_without_reader_never_hangs(tmp_path):
    """Once a 20 s hang (3 of 3): opening a FIFO for writing waits for a reader."""
    _, payload = _session(tmp_path, "Now I'll run the tests.")
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    p = subprocess.run(
        [*HOOK, "--mode", "enforce", "--log", str(fifo)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=SAFETY,
    )
    # no record could be written, so no block (a block without its record could re-prompt forever)
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")


def _maxrss_kb(cmd: list[str], stdin: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run `cmd` under a small parent that reports its child's peak resident memory (KiB)."""
    wrapper = (
        "import resource, subprocess, sys, json\n"
        "p = subprocess.run(json.loads(sys.argv[1]), input=sys.stdin.read(), capture_output=True, text=True)\n"
        "print(json.dumps([p.returncode, p.stdout, p.stderr, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))\n"
    )
    w = subprocess.run(
        [sys.executable, "-c", wrapper, json.dumps(cmd)], input=stdin, capture_output=True, text=True, timeout=SAFETY
    )
    rc, out, err, rss = json.loads(w.stdout)
    return subprocess.CompletedProcess(cmd, rc, out, err), rss


def test_log_at_dev_zero_or_a_directory_is_refused_not_read(tmp_path):
    """Once read until 8 GB of memory (/dev/zero): the log is opened only when it is a regular file."""
    _, payload = _session(tmp_path, "Now I'll run the tests.")
    for log in ("/dev/zero", str(tmp_path)):
        p, rss = _maxrss_kb([*HOOK, "--mode", "enforce", "--log", log], json.dumps(payload))
        assert (p.returncode, p.stdout, p.stderr) == (0, "", ""), log
        assert rss < 200 * 1024, (log, rss)  # a hook reads a tail, never a device


def test_budget_counts_from_process_start_and_covers_stdin(tmp_path):
    """Once the budget was armed after stdin was read: a stdin that never closes held the hook forever."""
    log = tmp_path / "g.jsonl"
    p = subprocess.Popen(
        [*HOOK, "--mode", "enforce", "--log", str(log), "--budget-ms", "300"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        p.stdin.write(b'{"hook_event_name": "Stop", ')  # half a payload, and the pipe stays open
        p.stdin.flush()
        rc = p.wait(timeout=SAFETY)
        out, err = p.stdout.read(), p.stderr.read()
    finally:
        p.kill()
        p.wait()
        for f in (p.stdin, p.stdout, p.stderr):
            f.close()
    assert (rc, out, err) == (0, b"", b"")
    (rec,) = _records(log)
    assert (rec["decision"], rec["reason"]) == ("allow", "time budget 300 ms exceeded")


def test_no_budget_ever_prints_a_traceback(tmp_path):
    """Once 1 of 720 runs printed an ignored-exception traceback (the alarm raised inside the log write).
    Budgets from 1 ms to the time a run takes: each ends with exit 0, nothing on stderr, and either no
    output or the whole block."""
    _, payload = _session(tmp_path, "Now I'll run the tests.")
    for i, ms in enumerate([1, 2, 5, 10, 20, 30, 40, 60, 80, 100, 150, 200, 300, 500]):
        log = tmp_path / f"g{i}.jsonl"
        p = subprocess.run(
            [*HOOK, "--mode", "enforce", "--log", str(log), "--budget-ms", str(ms)],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=SAFETY,
        )
        assert (p.returncode, p.stderr) == (0, ""), (ms, p.stderr)
        assert p.stdout in ("", json.dumps({"decision": "block", "reason": NUDGE}) + "\n"), (ms, p.stdout)
        recs = _records(log)
        assert len(recs) == 1, (ms, recs)  # exactly one record, from the main thread or the watchdog
        assert (recs[0]["decision"] == "block") == bool(p.stdout), (ms, recs[0])


def test_100000_nudges_are_read_from_the_tail_only(tmp_path, monkeypatch):
    """Once 1.55-1.65 s, over the 1.5 s budget: the window grew to its 16 MB cap, parsed at each step."""
    t = tmp_path / "t.jsonl"
    reply = json.dumps({"type": "text", "text": "Now I'll run the tests."})
    nudge = json.dumps(f"Stop hook feedback:\n[python -m stallscan.guard]: {NUDGE}")
    with open(t, "w", encoding="utf-8") as fh:
        fh.write('{"type":"user","uuid":"h","sessionId":"s","message":{"role":"user","content":"go"}}\n')
        for i in range(100_000):
            fh.write(
                f'{{"type":"assistant","uuid":"a{i}","sessionId":"s","message":{{"id":"m{i}","role":"assistant",'
                f'"stop_reason":"end_turn","content":[{reply}]}}}}\n'
                f'{{"type":"user","uuid":"n{i}","sessionId":"s","isMeta":true,"message":{{"role":"user","content":{nudge}}}}}\n'
            )
        fh.write(
            '{"type":"assistant","uuid":"z","sessionId":"s","message":{"id":"z","role":"assistant",'
            f'"stop_reason":"end_turn","content":[{reply}]}}}}\n'
        )
    read: list[int] = []
    real = tr.read_tail_lines

    def counting(path, enough, *a, **k):
        lines, start = real(path, enough, *a, **k)
        read.append(sum(len(x) for x in lines))
        return lines, start

    monkeypatch.setattr(tr, "read_tail_lines", counting)
    payload = {"session_id": "s", "transcript_path": str(t), "hook_event_name": "Stop", "stop_hook_active": True}
    log = tmp_path / "g.jsonl"
    out = io.StringIO()
    assert (
        hook.main(["--mode", "enforce", "--log", str(log), "--budget-ms", "0"], io.StringIO(json.dumps(payload)), out)
        == 0
    )
    (rec,) = _records(log)
    assert out.getvalue() == "" and rec["decision"] == "allow" and rec["stalls"] >= 3
    assert read and read[0] < 1024 * 1024, read  # the file is over 60 MB: its tail decides


def test_relative_transcript_path_is_read_from_the_payload_cwd(tmp_path):
    _, payload = _session(tmp_path, "Now I'll run the tests.")
    payload = dict(payload, transcript_path="t.jsonl", cwd=str(tmp_path))
    log = tmp_path / "g.jsonl"
    p = subprocess.run(
        [*HOOK, "--mode", "enforce", "--log", str(log), "--budget-ms", "60000"],  # (a loaded machine's start-up)
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=SAFETY,
        cwd="/",
    )
    assert p.returncode == 0 and json.loads(p.stdout)["decision"] == "block", (p.stdout, _records(log))


def test_help_prints_usage_and_writes_nothing(tmp_path):
    """Once `-h` read stdin and wrote a log file into the current folder."""
    env = dict(os.environ, STALLSCAN_GUARD_LOG=str(tmp_path / "env.jsonl"))
    env.pop("STALLSCAN_DB", None)
    for flag in ("-h", "--help"):
        p = subprocess.run(
            [*HOOK, flag], input="", capture_output=True, text=True, timeout=SAFETY, cwd=tmp_path, env=env
        )
        assert p.returncode == 0 and p.stdout.startswith("usage: python -m stallscan.guard") and "--mode" in p.stdout
        assert list(tmp_path.iterdir()) == []


def _stallscan(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`stallscan guard ...` by the typer app in this process, run from `cwd` with HOME `home` (the files it
    writes and what it prints are the subject, not the process)."""
    from typer.testing import CliRunner

    from stallscan.cli import app

    env = {"HOME": str(home), "NO_COLOR": "1", "COLUMNS": "200", "CODEX_HOME": str(home / ".codex")}
    with contextlib.chdir(cwd):
        r = CliRunner().invoke(app, list(args), prog_name="stallscan", env={**env, "STALLSCAN_DB": None})
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)


def test_status_never_prints_none_and_has_json(tmp_path):
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    # a hand-written entry without --mode / --log, and nothing installed for codex
    settings_file = home / ".claude" / "settings.json"
    settings_file.parent.mkdir()
    entry = {"hooks": [{"type": "command", "command": f"{sys.executable} -m stallscan.guard"}]}
    settings_file.write_text(json.dumps({"hooks": {"Stop": [entry]}}), encoding="utf-8")
    p = _stallscan("guard", "status", home=home, cwd=proj)
    assert p.returncode == 0 and "installed in" in p.stdout, p.stderr
    assert "None" not in p.stdout and "None" not in p.stderr, p.stdout
    # installed with a log that has no record yet
    assert _stallscan("guard", "install", "--claude", home=home, cwd=proj).returncode == 0
    p = _stallscan("guard", "status", "--claude", home=home, cwd=proj)
    assert p.returncode == 0 and "None" not in p.stdout and "no decision recorded yet" in p.stdout, p.stdout
    j = _stallscan("guard", "status", "--json", home=home, cwd=proj)
    assert j.returncode == 0, j.stderr
    rows = json.loads(j.stdout)
    assert {r["harness"] for r in rows} == {"claude", "codex"}
    assert next(r for r in rows if r["harness"] == "claude")["installed"] is True


def test_project_install_keeps_the_log_out_of_git(tmp_path):
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    (proj / ".gitignore").write_text("node_modules/", encoding="utf-8")  # (no final newline)
    p = _stallscan("guard", "install", "--claude", "--scope", "project", home=home, cwd=proj)
    assert p.returncode == 0, p.stderr
    lines = (proj / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "node_modules/" and "/stallscan-guard.jsonl" in lines
    cmd = json.loads((proj / ".claude" / "settings.json").read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert str(proj / "stallscan-guard.jsonl") in cmd  # the log it ignores is the log the hook writes
    again = _stallscan("guard", "install", "--claude", "--scope", "project", home=home, cwd=proj)
    assert (proj / ".gitignore").read_text().count("/stallscan-guard.jsonl") == 1, again.stdout
    assert _stallscan("guard", "uninstall", "--claude", "--scope", "project", home=home, cwd=proj).returncode == 0
    assert (proj / ".gitignore").read_text(encoding="utf-8").splitlines() == ["node_modules/"]
    # a log outside the project tree is left alone
    outside = tmp_path / "logs" / "g.jsonl"
    p = _stallscan("guard", "install", "--claude", "--scope", "project", "--log", str(outside), home=home, cwd=proj)
    assert p.returncode == 0 and "stallscan-guard" not in (proj / ".gitignore").read_text()


# ------------------------------------------------------------------------------------------------ fuzz
TEXT = st.one_of(
    st.sampled_from(["Now I'll run the tests.", "Done.", "Next, I'll update a.py", "\ud800", "x\udfff y", ""]),
    st.text(max_size=40),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=3),
)
VALUE = st.one_of(st.none(), st.booleans(), st.integers(), TEXT, st.lists(st.integers(), max_size=2), st.just({}))
PAYLOAD = st.fixed_dictionaries(
    {"hook_event_name": st.sampled_from(["Stop", "SubagentStop", "PreToolUse", None, 3])},
    optional={
        "session_id": st.one_of(st.just("sess-1"), VALUE),
        "last_assistant_message": st.one_of(TEXT, VALUE),
        "stop_hook_active": VALUE,
        "cwd": VALUE,
        "agent_id": VALUE,
    },
)
LOG_KIND = st.sampled_from(
    ["fresh", "fresh", "garbage", "surrogates", "long_line", "fifo", "dev_zero", "dir", "missing_dir"]
)
TRANSCRIPT = st.sampled_from(["session", "session", "garbage", "empty", "relative", "fifo", "missing"])


def _hostile_log(tmp: Path, kind: str, i: int) -> str:
    p = tmp / f"log{i}.jsonl"
    if kind == "garbage":
        p.write_bytes(os.urandom(3000) + b"\n" + b'{"decision": "block"' + b"\n")
    elif kind == "surrogates":
        p.write_bytes(b'{"stallscan_guard": 1, "session": "sess-1", "decision": "block", "time": "\xed\xa0\x80"}\n')
    elif kind == "long_line":
        p.write_bytes(b'{"a": "' + b"x" * 300_000 + b'"}\n')
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "dev_zero":
        return "/dev/zero"
    elif kind == "dir":
        p.mkdir()
    elif kind == "missing_dir":
        return str(tmp / f"no{i}" / "deeper" / "g.jsonl")
    return str(p)


_COUNT = iter(range(10**9))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(payload=PAYLOAD, log_kind=LOG_KIND, kind=TRANSCRIPT, mode=st.sampled_from(["enforce", "observe"]))
def test_fuzz_the_hook_never_traps(tmp_path_factory, payload, log_kind, kind, mode):
    tmp = tmp_path_factory.getbasetemp()
    i = next(_COUNT)
    d = tmp / f"fz{i}"
    d.mkdir()
    s = ClaudeSession(d / "t.jsonl")
    s.human("go")
    s.tool_round()
    s.reply(payload.get("last_assistant_message") if isinstance(payload.get("last_assistant_message"), str) else "x")
    path = {"session": str(d / "t.jsonl"), "relative": "t.jsonl", "missing": str(d / "none.jsonl")}.get(kind)
    if kind == "garbage":
        (d / "g.jsonl").write_bytes(os.urandom(2000))
        path = str(d / "g.jsonl")
    elif kind == "empty":
        (d / "e.jsonl").write_bytes(b"")
        path = str(d / "e.jsonl")
    elif kind == "fifo":
        os.mkfifo(d / "t.fifo")
        path = str(d / "t.fifo")
    payload = dict(payload, transcript_path=path)
    if kind == "relative":
        payload["cwd"] = str(d)
    log = _hostile_log(d, log_kind, i)
    before = None if log_kind in ("fifo", "dev_zero", "dir") else _records(Path(log))  # (the others are writable)
    out = io.StringIO()
    t0 = time.perf_counter()
    rc = hook.main(["--mode", mode, "--log", log, "--budget-ms", "0"], io.StringIO(json.dumps(payload)), out)
    assert rc == 0 and time.perf_counter() - t0 < SAFETY
    text = out.getvalue()
    assert text in ("", json.dumps({"decision": "block", "reason": NUDGE}, ensure_ascii=False) + "\n"), text
    if text:  # a block is printed only when its record was written
        assert mode == "enforce" and before is not None
        recs = _records(Path(log))
        assert len(recs) == len(before) + 1 and recs[-1]["decision"] == "block"
    elif before is not None:
        assert len(_records(Path(log))) == len(before) + 1  # a writable log gets one record a call
