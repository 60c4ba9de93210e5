"""`stallscan guard` / `python -m stallscan.guard`: the Stop / SubagentStop hook of Claude Code and Codex.

Reads the hook JSON on stdin, judges the reply the turn is about to end on (stallscan.guard.judge), and
in `enforce` mode blocks a stall with the library's nudge while this turn's count of the guard's nudges is
below the bound: it prints {"decision": "block", "reason": <nudge>} and exits 0. In `observe` mode (the
install default) it only logs what it would do. It never traps a session: bad stdin, a missing transcript,
an unknown schema, an internal error or a run over the time budget all exit 0 with no output, and the
reason goes to the guard log (one JSONL record per call; stallscan.guard.log).

Imports only the standard library and the pure-Python rule modules: no duckdb, pyarrow, numpy, polars or
typer (tests/functional/test_guard_hook.py checks sys.modules of a real run).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any, TextIO

from stallscan.guard import log as guard_log
from stallscan.guard import transcript as tr
from stallscan.replay.stall_rules import RETRY_BOUND

MODES = ("observe", "enforce")
HARNESSES = {"claude": "claude_code", "claude_code": "claude_code", "codex": "codex"}
DEFAULTS = {"mode": "observe", "bound": RETRY_BOUND, "budget_ms": 1500}
STOP_EVENTS = ("Stop", "SubagentStop")


USAGE = """usage: python -m stallscan.guard [--mode observe|enforce] [--harness claude|codex] [--log PATH]
                                [--bound N] [--budget-ms MS] [--config FILE]

The Stop / SubagentStop hook of Claude Code and Codex: reads the hook JSON on stdin, judges the reply
the turn is about to end on, and in enforce mode blocks a narrated plan (prints {"decision": "block",
"reason": ...}) at most --bound times in a row. Always exits 0. One JSONL record per call goes to the
guard log (default: stallscan-guard.jsonl beside the database). Install it with
`stallscan guard install --claude` (or --codex); see docs/guard.md.
"""


class _Budget(Exception):
    """Raised by the hook's own deadline checks (never by a signal): the run is over its budget."""


class Allow(Exception):
    """End the turn without a decision: the reason is logged."""


def _parse_args(argv: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    it = iter(argv)
    for a in it:
        key, _, val = a.partition("=")
        if key in ("--mode", "--harness", "--log", "--bound", "--config", "--budget-ms"):
            if not _:
                val = next(it, "")
            opts[key[2:].replace("-", "_")] = val
        # unknown arguments are ignored: a hook must never fail on its command line
    return opts


def load_settings(opts: dict[str, Any], cwd: str | None) -> dict[str, Any]:
    """Command line > stallscan.toml [guard] ($STALLSCAN_CONFIG, else <cwd>/stallscan.toml) > defaults."""
    settings = dict(DEFAULTS)
    cfg_path = opts.get("config") or os.environ.get("STALLSCAN_CONFIG")
    if not cfg_path and cwd:
        cand = os.path.join(cwd, "stallscan.toml")
        cfg_path = cand if os.path.isfile(cand) else None
    if cfg_path:
        try:
            from stallscan.store import toml_cache

            section = toml_cache.read(cfg_path).get("guard", {})
            if isinstance(section, dict):
                settings.update({k: section[k] for k in ("mode", "bound", "budget_ms", "log") if k in section})
        except Exception as exc:  # unreadable or not TOML: defaults, and the log says why
            settings["config_error"] = f"{cfg_path}: {exc}"
    for k in ("mode", "bound", "budget_ms", "log"):
        if opts.get(k) not in (None, ""):
            settings[k] = opts[k]
    try:
        settings["bound"] = int(str(settings["bound"]))
        settings["budget_ms"] = int(str(settings["budget_ms"]))
    except (TypeError, ValueError):
        settings["bound"], settings["budget_ms"] = DEFAULTS["bound"], DEFAULTS["budget_ms"]
    if settings["mode"] not in MODES:
        settings["mode"] = "observe"
    return settings


def _enough(lines: list[bytes], nudge: bytes = b"", bound: int = 0) -> bool:
    """The window reaches back to a landed tool call or a human turn start, or holds `bound` of the
    guard's own nudges already (then the bound is reached whatever lies further back: a transcript of
    100,000 nudges is read no further than a short one)."""
    from stallscan.replay.stalls_ref import turn_starts_fallback

    if nudge and bound > 0 and sum(1 for ln in lines if nudge in ln) >= bound:
        return True
    records = tr.parse_records(lines)
    fmt = tr.detect(records)
    if fmt is None:
        return False
    events = tr.events_of(fmt, records)
    if any(e["kind"] == "tool_result" or (e["role"] == "assistant" and e["n_tool_calls"] > 0) for e in events):
        return True
    return bool(turn_starts_fallback(events))


def _in_time(deadline: float | None) -> None:
    if deadline is not None and time.perf_counter() > deadline:
        raise _Budget()


def decide(
    payload: dict[str, Any],
    settings: dict[str, Any],
    rec: dict[str, Any],
    harness: str | None = None,
    deadline: float | None = None,
) -> dict[str, Any] | None:
    """The hook output (a dict[str, Any] to print) or None; fills the log record `rec` as it goes.
    `deadline` (a perf_counter time): checked between the steps, _Budget when it has passed."""
    from stallscan.guard.judge import judge, nudge_text

    if not isinstance(payload, dict):
        raise Allow("stdin is not a JSON object")
    event = payload.get("hook_event_name")
    rec["event"] = event
    # a subagent's stops are its own session, named as the ingest names sidechains (<session>/agent-<id>)
    session = payload.get("session_id")
    if event == "SubagentStop" and payload.get("agent_id") is not None and session is not None:
        session = f"{session}/agent-{payload['agent_id']}"
    rec["session"] = session
    rec["stop_hook_active"] = payload.get("stop_hook_active")
    if payload.get("turn_id") is not None:
        rec["turn"] = payload.get("turn_id")
    if event is not None and event not in STOP_EVENTS:
        raise Allow(f"not a stop event: {event!r}")
    path = payload.get("agent_transcript_path") if event == "SubagentStop" else None
    path = path or payload.get("transcript_path")
    last_text = payload.get("last_assistant_message")
    if last_text is not None and not isinstance(last_text, str):
        raise Allow("unknown schema: last_assistant_message is not a string")
    if not path or not isinstance(path, str):
        raise Allow("no transcript_path in the hook input")
    cwd = payload.get("cwd")
    if not os.path.isabs(path) and isinstance(cwd, str) and cwd:
        path = os.path.join(cwd, path)  # a relative transcript_path is the harness's, from its cwd
    if not os.path.isfile(path):
        raise Allow("transcript not found")
    nudge, bound = nudge_text().encode("utf-8"), settings["bound"]
    lines, _ = tr.read_tail_lines(path, lambda ls: _enough(ls, nudge, bound))
    _in_time(deadline)
    records = tr.parse_records(lines)
    fmt = tr.detect(records)
    if fmt is None:
        raise Allow("unknown transcript schema")
    if harness is not None and fmt != harness:
        rec["harness_flag"] = harness
    rec["harness"] = fmt
    events = tr.events_of(fmt, records)
    v = judge(events, last_text, settings["bound"])
    _in_time(deadline)
    if v is None:
        raise Allow("no reply to judge")
    # a harness that does not write the block reason into the transcript (or writes it late) must not be
    # re-prompted forever: the guard's own logged blocks of this session since the count opened count too
    logged = guard_log.blocks_since(guard_log.log_path(settings, payload), rec["session"], tr.epoch(v.since))
    if logged > v.stalls:
        rec["stalls_logged"] = logged
        v = v._replace(stalls=logged, block=v.stall and logged < settings["bound"])
    rec.update(
        verdict=v.round_kind,
        signature=v.signature,
        stalls=v.stalls,
        after_tool_round=v.after_tool_round,
        reply_from=v.reply_from,
    )
    if rec.get("turn") is None:
        rec["turn"] = v.turn
    if v.stall:
        reply = (
            last_text
            if v.reply_from == "hook"
            else next(e for e in reversed(events) if e["role"] == "assistant")["text"]
        )
        rec["excerpt"] = guard_log.excerpt(reply)
    if not v.stall:
        rec["decision"], rec["reason"] = "allow", "no stall"
        return None
    if not v.block:
        rec["decision"], rec["reason"] = "allow", "bound reached"
        return None
    if settings["mode"] != "enforce":
        rec["decision"], rec["reason"] = "would_block", "observe mode"
        return None
    rec["decision"], rec["reason"] = "block", "stall"
    return {"decision": "block", "reason": nudge_text()}


def main(argv: list[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """The hook. Run as a process (argv None), a watchdog thread ends it with exit 0 and no output when
    the budget, counted from process start, runs out wherever it is (stdin that never closes included);
    called in-process (tests), the budget is checked between the steps only. The log record is written
    before any output, and a block is printed only when its record was written."""
    t0 = time.perf_counter()
    is_process = argv is None
    argv = sys.argv[1:] if argv is None else argv
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    if any(a in ("-h", "--help") for a in argv):  # help only: no stdin read, no log written
        stdout.write(USAGE)
        return 0
    born = t0 - (_since_process_start() if is_process else 0.0)
    opts = _parse_args(argv)
    rec: dict[str, Any] = {"decision": "allow", "mode": None}
    out = None
    payload = None
    settings = load_settings(opts, None)  # the log path is known even when stdin is bad
    final = threading.Lock()  # held by whoever writes the call's record: the main thread or the watchdog
    dog = _Watchdog(final, rec, lambda: (settings, payload)) if is_process else None
    if dog is not None:
        dog.arm(born, settings["budget_ms"])
    deadline: float | None = None
    try:
        try:
            raw = stdin.read()
            payload = json.loads(raw) if raw.strip() else None
        except (ValueError, UnicodeDecodeError) as exc:
            raise Allow(f"bad stdin: {type(exc).__name__}")
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        settings = load_settings(opts, cwd if isinstance(cwd, str) else None)
        rec["mode"], rec["bound"] = settings["mode"], settings["bound"]
        if settings.get("config_error"):
            rec["config_error"] = settings["config_error"]
        if settings["budget_ms"] > 0:
            deadline = born + settings["budget_ms"] / 1000
            if dog is not None:
                dog.arm(born, settings["budget_ms"])  # (the project's stallscan.toml may set another budget)
        _in_time(deadline)
        if payload is None:
            raise Allow("bad stdin: empty")
        out = decide(payload, settings, rec, HARNESSES.get(opts.get("harness", "")), deadline)
        _in_time(deadline)
    except Allow as exc:
        rec["decision"], rec["reason"], out = "allow", str(exc), None
    except _Budget:
        rec["decision"], rec["reason"], out = "allow", f"time budget {settings['budget_ms']} ms exceeded", None
    except Exception as exc:  # never trap a session
        rec["decision"], rec["reason"], out = "allow", f"internal error: {type(exc).__name__}: {exc}"[:300], None
    with final:  # (if the watchdog holds it, it is ending the process: this waits for that)
        if dog is not None:
            dog.cancel()
        rec["latency_ms"] = round((time.perf_counter() - born) * 1000, 2)
        try:
            guard_log.append(guard_log.log_path(settings, payload), rec)
        except Exception:  # (OSError, a log that is a FIFO or a device, ...): no record, so no block either
            out = None  # a block without the record that bounds it could re-prompt forever
        if out is not None:
            try:
                stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
                stdout.flush()
            except Exception:
                return 0
    return 0


def _since_process_start() -> float:
    """Seconds since this process started (interpreter start-up and imports included), from /proc; 0
    where there is no /proc."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


class _Watchdog:
    """Ends the hook process when its budget runs out: writes the budget record (when the main thread is
    not writing its own) and exits 0 with no output, which the harness reads as 'allow'. A thread, not a
    signal: nothing is raised into the main thread, so no exception can escape from wherever it stands."""

    def __init__(self, final: threading.Lock, rec: dict[str, Any], where: Any) -> None:
        self.final, self.rec, self.where = final, rec, where
        self.timer: threading.Timer | None = None

    def arm(self, born: float, budget_ms: int) -> None:
        self.cancel()
        if budget_ms <= 0:
            return
        self.timer = threading.Timer(max(0.0, born + budget_ms / 1000 - time.perf_counter()), self._fire, (budget_ms,))
        self.timer.daemon = True
        self.timer.start()

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()

    def _fire(self, budget_ms: int) -> None:
        if not self.final.acquire(blocking=False):
            return  # the main thread is writing its record and answer: a few non-blocking calls
        try:
            settings, payload = self.where()
            rec = dict(self.rec)
            rec["decision"], rec["reason"] = "allow", f"time budget {budget_ms} ms exceeded"
            guard_log.append(guard_log.log_path(settings, payload), rec)
        except BaseException:
            pass
        finally:
            os._exit(0)
