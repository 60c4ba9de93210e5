#!/usr/bin/env python3
"""Deterministic generator of large synthetic agent-transcript corpora for stallscan benchmarks.

    python bench/gen.py --format claude --bytes 1G --out /tmp/claude_1g.jsonl
    python bench/gen.py --format claude --bytes 200M --files 2000 --out /tmp/claude_many/
    python bench/gen.py --format openai --bytes 1G --out /tmp/openai_1g.jsonl [--interleave 8]
    python bench/gen.py --format openai --bytes 1G --files 16 --out /tmp/openai_16/

Formats
  claude  Claude Code session JSONL: user / assistant / progress / summary / file-history-snapshot /
          queue-operation / system lines; one API reply split over several assistant lines sharing
          message.id (thinking / text / tool_use blocks); tool_result user lines with toolUseResult;
          isMeta "Stop hook feedback:" re-prompts 0.03-0.42 s after a final reply; user content is a
          string (~40 %) or a block list. With --files N: one session per file, named <sessionId>.jsonl.
  openai  Hermes-like OpenAI chat message log, one message per line with session_id, role, content,
          tool_calls ({id, type:function, function{name, arguments}}), tool_call_id, finish_reason,
          timestamp (ISO 8601, ms, Z), model, optional x-initiator; a session_meta line starts each
          session; many sessions per file (--interleave K runs K sessions concurrently, merged by time).
          ~2 % of tool rounds are dropped tool calls (finish_reason tool_calls, no calls), handled the
          way Hermes does (exact nudge text, <= 3 nudges, then the narration is the answer) or by a
          harness without the fix (silent recovery / plan-as-answer).

Timing: model latency 0.8-30 s, tool latency 20 ms-5 s (10 % tail to 5 min), automatic prompts
0.03-1 s after the reply (some slow ones: next-speaker check 5-20 s, task notifications), humans
2 s-1 h (3 % come back after 1-6 h; 2 % typed ahead and land 0.5-2 s after the reply).

Speed: text is sliced out of a pre-built, already JSON-escaped UTF-8 corpus (quotes, backslashes,
\\n/\\t, \\uXXXX escapes and raw non-ASCII) at cut points that never split an escape or a character;
lines are assembled as bytes (no json.dumps per line) and written in 8 MiB chunks. Sizes: K/M/G are
binary (1G = 2**30 bytes). The output is identical for identical arguments. Stdlib + numpy only.
"""

from __future__ import annotations

import argparse
import heapq
import math
import os
import random
import sys
import time

import numpy as np

# ----------------------------------------------------------------------------- text corpus
WORDS = [
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "is",
    "for",
    "that",
    "with",
    "on",
    "as",
    "this",
    "be",
    "are",
    "it",
    "from",
    "at",
    "by",
    "an",
    "was",
    "will",
    "can",
    "not",
    "function",
    "return",
    "value",
    "error",
    "file",
    "path",
    "test",
    "import",
    "class",
    "def",
    "self",
    "async",
    "await",
    "const",
    "let",
    "session",
    "stall",
    "timeout",
    "retry",
    "agent",
    "tool",
    "result",
    "message",
    "user",
    "assistant",
    "token",
    "cache",
    "index",
    "build",
    "deploy",
    "config",
    "module",
    "package",
    "version",
    "query",
    "table",
    "column",
    "schema",
    "parquet",
    "duckdb",
    "thread",
    "process",
    "memory",
    "buffer",
    "stream",
    "parse",
    "json",
    "line",
    "event",
    "timestamp",
    "gap",
    "threshold",
    "sweep",
    "I'll",
    "let",
    "me",
    "now",
    "next",
    "check",
    "read",
    "run",
    "fix",
    "update",
    "found",
    "failing",
    "passes",
    "because",
    "instead",
    "should",
    "could",
    "would",
    "here",
    "there",
    "which",
    "when",
    "where",
    "every",
    "only",
    "still",
    "already",
    "first",
    "then",
]
CODE = [
    "def",
    "main(argv:",
    "list[str])",
    "->",
    "int:",
    "return",
    "json.loads(line)",
    "x[0]",
    "{",
    "}",
    "if",
    "(x",
    "<",
    "0",
    "&&",
    "y",
    ">",
    "1)",
    "throw",
    "new",
    "Error(",
    "SELECT",
    "lag(ts)",
    "OVER",
    "FROM",
    "events",
    "WHERE",
    "role",
    "=",
    "'user';",
    "$",
    "pytest",
    "-q",
    "tests/test_ingest.py::test_gap",
    "3",
    "passed",
    "in",
    "0.42s",
    "Traceback",
    "(most",
    "recent",
    "call",
    "last):",
    "File",
    "line",
    "42,",
    "src/stallscan/ingest.py",
    "C:",
    "Users",
    "dev",
    "project",
    "src",
    "main.py",
    "==",
    "!=",
    "+=",
    "#",
    "//",
    "/*",
    "*/",
    "->",
    "=>",
    "::",
    "`code`",
    "**bold**",
    "- [ ]",
    "|",
    "---",
    "1.",
    "2.",
]
NON_ASCII = [
    "café",
    "naïve",
    "résumé",
    "Zoë",
    "Ørsted",
    "Łukasz",
    "Wójcik",
    "Straße",
    "façade",
    "über",
    "日本語のテキスト",
    "中文字符",
    "한국어",
    "Привет",
    "мир",
    "Ελληνικά",
    "עברית",
    "العربية",
    "—",
    "–",
    "…",
    "→",
    "✓",
    "✗",
    "°C",
    "€",
    "±",
    "🚀",
    "🙂",
    "😅",
    "👍",
    "🔥",
]
# JSON escape sequences (written as-is into string contents; never cut in the middle)
ESCAPES = [
    '\\"',
    "\\\\",
    "\\n",
    "\\n",
    "\\n",
    "\\t",
    "\\r\\n",
    "\\/",
    "\\u00e9",
    "\\u2014",
    "\\u65e5\\u672c",
    "\\ud83d\\ude80",
]


def build_corpus(seed: int, size: int = 12 << 20, block: int = 1 << 20) -> tuple[bytes, bytes]:
    """Return (corpus, unsafe): corpus is JSON-string-safe UTF-8 text; unsafe[i] != 0 where a cut
    at byte i would split an escape sequence or a multi-byte character. Built in ~1 MiB blocks
    (always cut at token boundaries) to keep memory low."""
    rng = np.random.default_rng(seed)
    vocab = (
        [w.encode() for w in WORDS]
        + [w.encode() for w in CODE]
        + [w.encode() for w in NON_ASCII]
        + [e.encode() for e in ESCAPES]
    )
    nw, nc, nn, ne = len(WORDS), len(CODE), len(NON_ASCII), len(ESCAPES)
    p = np.concatenate([np.full(nw, 0.74 / nw), np.full(nc, 0.17 / nc), np.full(nn, 0.04 / nn), np.full(ne, 0.05 / ne)])
    is_esc = np.zeros(len(vocab), bool)
    is_esc[nw + nc + nn :] = True
    vlen = np.array([len(v) for v in vocab], np.int64)
    mean_tok = float((vlen * p).sum()) + 1.0
    ntok = int(block / mean_tok) + 1
    corpora, masks, total = [], [], 0
    while total < size:
        idx = rng.choice(len(vocab), size=ntok, p=p)
        esc = is_esc[idx]
        # separators: mostly spaces, some sentence / clause ends; escapes glue to the previous token
        u = rng.random(ntok)
        sep = np.where(esc, 0, np.where(u < 0.06, 1, np.where(u < 0.10, 2, 3)))
        seps = (b"", b". ", b", ", b" ")
        sep_len = np.array([0, 2, 2, 1], np.int64)[sep]
        corpus = b"".join([x for i, k in zip(idx.tolist(), sep.tolist()) for x in (seps[k], vocab[i])])
        arr = np.frombuffer(corpus, np.uint8)
        unsafe = ((arr & 0xC0) == 0x80).astype(np.uint8)  # UTF-8 continuation bytes
        tok_len = vlen[idx]
        tok_start = np.cumsum(sep_len + tok_len) - tok_len
        for st, n in zip(tok_start[esc].tolist(), tok_len[esc].tolist()):
            unsafe[st + 1 : st + n] = 1  # inside an escape sequence
        corpora.append(corpus)
        masks.append(unsafe.tobytes())
        total += len(corpus)
    return b"".join(corpora), b"".join(masks) + b"\x00"


class Text:
    def __init__(self, seed: int, rnd: random.Random):
        self.corpus, self.unsafe = build_corpus(seed)
        self.n = len(self.corpus)
        self.rnd = rnd

    def take(self, n: int) -> bytes:
        c, u = self.corpus, self.unsafe
        if n <= 0:
            return b""
        if n > self.n - 64:
            n = self.n - 64
        s = int(self.rnd.random() * (self.n - n - 32))
        while u[s]:
            s += 1
        e = s + n
        while u[e]:
            e += 1
        return c[s:e]

    def lu(self, lo: float, hi: float) -> bytes:
        """Log-uniform length in [lo, hi) bytes."""
        return self.take(int(lo * math.exp(self.rnd.random() * math.log(hi / lo))))


def jesc(b: bytes) -> bytes:
    """Escape bytes that are already JSON-string content so they can sit inside another JSON string."""
    return b.replace(b"\\", b"\\\\").replace(b'"', b'\\"')


# ----------------------------------------------------------------------------- helpers
class Clock:
    """ISO-8601 UTC timestamps with ms and Z from integer epoch-ms; caches the minute prefix."""

    def __init__(self):
        self.m = -1
        self.p = b""

    def iso(self, ms: int) -> bytes:
        m = ms // 60000
        if m != self.m:
            self.m = m
            self.p = time.strftime("%Y-%m-%dT%H:%M:", time.gmtime(m * 60)).encode()
        r = ms - m * 60000
        return self.p + b"%02d.%03dZ" % (r // 1000, r % 1000)


B62 = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

HERMES_NUDGE = (
    "Your previous turn indicated a tool call but none was included. Do not narrate a plan "
    "or restate intent \u2014 issue the actual tool call now to continue the task."
)
EMPTY_NUDGE = (
    "You just executed tool calls but returned an empty response. Please process the tool "
    "results above and continue with the task."
)
LENGTH_NUDGE = (
    "[System: Your previous response was truncated by the output length limit. Continue "
    "exactly where you left off. Do not restart or repeat prior text. Finish the answer directly.]"
)
ACK_NUDGE = (
    "[System: Continue now. Execute the required tool calls and only send your final answer after completing the task.]"
)
FAST_AUTO = [
    "Please continue.",
    "Please continue",
    ACK_NUDGE,
    "You were about to complete but a hook blocked you with the following message: "
    '"Run the tests before finishing.". Please address this requirement before completing.',
    "[ERROR] You did not use a tool in your previous response! Please retry with a tool use.",
]
SLOW_AUTO = [
    "System: Please continue.",
    "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.",
]
NARRATIONS = [
    "I'll start by reading the config file.",
    "I will read a.py now.",
    "Let me check the failing test first.",
    "I'll look at the migration to see what changed.",
    "Now I'll run the test suite.",
    "Let me search the codebase for the call sites.",
    "I'll open the log file and look for the 502s.",
    "Next, I'll update the schema and rerun the ingest.",
]


def js(s: str) -> bytes:
    """Encode a constant Python string as JSON string content (computed once, not per line)."""
    import json

    return json.dumps(s, ensure_ascii=False)[1:-1].encode()


HERMES_NUDGE_J, EMPTY_NUDGE_J, LENGTH_NUDGE_J = js(HERMES_NUDGE), js(EMPTY_NUDGE), js(LENGTH_NUDGE)
FAST_AUTO_J = [js(s) for s in FAST_AUTO]
SLOW_AUTO_J = [js(s) for s in SLOW_AUTO]
NARRATIONS_J = [js(s) for s in NARRATIONS]


class Gen:
    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.tx = Text(seed, self.r)
        self.clock = Clock()
        self.n_sessions = 0
        self.pool = bytes(np.frombuffer(B62, np.uint8)[np.random.default_rng(seed + 1).integers(0, 62, 1 << 20)])

    # --- small random helpers ------------------------------------------------------------------
    def lu(self, lo: float, hi: float) -> float:
        return lo * math.exp(self.r.random() * math.log(hi / lo))

    def ms(self, lo: float, hi: float) -> int:
        """Log-uniform duration in seconds -> int ms (at least 1)."""
        return max(1, int(self.lu(lo, hi) * 1000))

    def uid(self) -> bytes:
        h = b"%032x" % self.r.getrandbits(128)
        return h[:8] + b"-" + h[8:12] + b"-4" + h[13:16] + b"-a" + h[17:20] + b"-" + h[20:]

    def b62(self, n: int) -> bytes:
        s = int(self.r.random() * (len(self.pool) - n))
        return self.pool[s : s + n]

    def human_gap(self) -> int:
        x = self.r.random()
        if x < 0.02:
            return self.ms(0.5, 2.0)  # typed ahead / queued while the agent worked
        if x < 0.05:
            return self.ms(3600, 6 * 3600)  # came back later
        return self.ms(2.0, 3600)

    def model_gap(self) -> int:
        return self.ms(0.8, 30)

    def tool_gap(self) -> int:
        return self.ms(0.02, 5) if self.r.random() < 0.9 else self.ms(5, 300)

    def auto_gap(self) -> int:
        return self.ms(0.03, 1.0)

    def start_ms(self) -> int:
        return 1767225600000 + int(self.r.random() * 150 * 86400000)  # 2026-01-01 + up to 150 days

    # ============================================================================== Claude Code
    CL_TOOLS = ("Bash", "Read", "Edit", "Write", "Grep", "Glob", "TodoWrite", "WebFetch", "Task")
    CL_MODELS = (b"claude-opus-4-6", b"claude-sonnet-4-5-20250929", b"claude-opus-4-5-20251101")
    CL_VERSIONS = (b"2.1.14", b"2.1.38", b"2.1.39", b"2.0.74", b"1.0.95")

    def cl_input(self, name: str) -> bytes:
        t, r = self.tx, self.r
        if name == "Bash":
            return b'{"command":"' + t.lu(8, 200) + b'","description":"' + t.lu(10, 60) + b'"}'
        if name == "Read":
            return b'{"file_path":"/home/dev/proj/src/mod%d.py"}' % r.randrange(100)
        if name == "Write":
            return b'{"file_path":"/home/dev/proj/src/mod%d.py","content":"' % r.randrange(100) + t.lu(50, 4000) + b'"}'
        if name == "Edit":
            return (
                b'{"file_path":"/home/dev/proj/src/mod%d.py","old_string":"' % r.randrange(100)
                + t.lu(20, 800)
                + b'","new_string":"'
                + t.lu(20, 800)
                + b'"}'
            )
        if name in ("Grep", "Glob"):
            return b'{"pattern":"' + t.lu(4, 40) + b'","path":"/home/dev/proj"}'
        if name == "TodoWrite":
            return (
                b'{"todos":['
                + b",".join(
                    b'{"content":"'
                    + t.lu(10, 80)
                    + b'","status":"'
                    + r.choice((b"pending", b"in_progress", b"completed"))
                    + b'","activeForm":"'
                    + t.lu(10, 60)
                    + b'"}'
                    for _ in range(r.randint(1, 6))
                )
                + b"]}"
            )
        if name == "Task":
            return (
                b'{"description":"'
                + t.lu(10, 50)
                + b'","prompt":"'
                + t.lu(100, 2000)
                + b'","subagent_type":"general-purpose"}'
            )
        return b'{"url":"https://example.com/doc/%d","prompt":"' % r.randrange(10**6) + t.lu(10, 200) + b'"}'

    def claude_session(self, more, until_target: bool = False):
        """Yield (ts_ms, line) for one Claude Code session; `more()` says whether to start another turn.
        until_target: ignore the session's natural length and go on while more() (one session per file)."""
        r, tx, iso, uid = self.r, self.tx, self.clock.iso, self.uid
        self.n_sessions += 1
        sid = uid()
        self.current_sid = sid
        t = self.start_ms()
        version = r.choice(self.CL_VERSIONS)
        model = r.choice(self.CL_MODELS)
        slug = (
            b'"slug":"%s-%s-%s",' % tuple(r.choice(WORDS).encode().replace(b"'", b"") for _ in range(3))
            if version.startswith(b"2.1")
            else b""
        )
        env = (
            b'"isSidechain":false,"userType":"external","cwd":"/home/dev/proj%d","sessionId":"%s",'
            b'"version":"%s","gitBranch":"%s",%s'
        ) % (r.randrange(30), sid, version, r.choice((b"main", b"master", b"dev", b"feature/ingest")), slug)
        n_turns = int(self.lu(1, 60))
        parent = b"null"
        # older files start with summary lines (no timestamp)
        for _ in range(r.choice((0, 0, 0, 1, 2))):
            yield t, b'{"type":"summary","summary":"' + tx.lu(15, 70) + b'","leafUuid":"' + uid() + b'"}'
        if r.random() < 0.5:
            yield (
                t,
                b'{"type":"queue-operation","operation":"dequeue","timestamp":"'
                + iso(t)
                + b'","sessionId":"'
                + sid
                + b'"}',
            )
            t += r.randint(5, 40)
        # SessionStart hook progress
        u = uid()
        yield (
            t,
            (
                b'{"parentUuid":null,'
                + env
                + b'"type":"progress","data":{"type":"hook_progress","hookEvent":"SessionStart",'
                b'"hookName":"SessionStart:startup","command":"~/.claude/hooks/session-start.sh"},"parentToolUseID":"'
                + u
                + b'","toolUseID":"'
                + u
                + b'","timestamp":"'
                + iso(t)
                + b'","uuid":"'
                + u
                + b'"}'
            ),
        )
        parent = b'"' + u + b'"'
        t += self.ms(0.5, 20)

        def usage():
            return (
                b'{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,'
                b'"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":%d},'
                b'"output_tokens":%d,"service_tier":"standard"}'
            ) % (r.randint(1, 9), r.randrange(20000), r.randrange(180000), r.randrange(5000), r.randint(1, 3000))

        def asst(mid, rid, block, us, stop=b"null"):
            nonlocal parent
            u = uid()
            line = (
                b'{"parentUuid":'
                + parent
                + b","
                + env
                + b'"message":{"model":"'
                + model
                + b'","id":"'
                + mid
                + b'","type":"message","role":"assistant","content":['
                + block
                + b'],"stop_reason":'
                + stop
                + b',"stop_sequence":null,"usage":'
                + us
                + b'},"requestId":"'
                + rid
                + b'","type":"assistant","uuid":"'
                + u
                + b'","timestamp":"'
                + iso(t)
                + b'"}'
            )
            parent = b'"' + u + b'"'
            return line, u

        def user(content, extra=b""):
            nonlocal parent
            u = uid()
            line = (
                b'{"parentUuid":'
                + parent
                + b","
                + env
                + b'"type":"user","message":{"role":"user","content":'
                + content
                + b"}"
                + extra
                + b',"uuid":"'
                + u
                + b'","timestamp":"'
                + iso(t)
                + b'"}'
            )
            parent = b'"' + u + b'"'
            return line, u

        def reply(final_only: bool):
            """One agent loop: assistant replies (split lines) + tool rounds; ends with a text reply."""
            nonlocal t, parent
            steps = 1 if final_only else int(self.lu(1, 25))
            for s in range(steps):
                # one session per file: end the turn with a text reply once the file is full
                last = s == steps - 1 or (until_target and not more())
                t += self.model_gap()
                mid = b"msg_01" + self.b62(22)
                rid = b"req_011C" + self.b62(20)
                us = usage()
                if r.random() < 0.2:
                    line, _ = asst(
                        mid,
                        rid,
                        b'{"type":"thinking","thinking":"'
                        + tx.lu(40, 3000)
                        + b'","signature":"'
                        + self.b62(r.randint(200, 600))
                        + b'"}',
                        us,
                    )
                    yield t, line
                    t += self.ms(0.1, 3)
                if last or r.random() < 0.55:
                    line, _ = asst(
                        mid,
                        rid,
                        b'{"type":"text","text":"' + tx.lu(20, 2500 if last else 600) + b'"}',
                        us,
                        b'"end_turn"' if (last and version == b"2.0.74" and r.random() < 0.5) else b"null",
                    )
                    yield t, line
                    if last:
                        return
                    t += self.ms(0.1, 1.5)
                calls = []
                for _k in range(1 if r.random() < 0.85 else r.randint(2, 4)):
                    name = r.choice(self.CL_TOOLS)
                    tid = b"toolu_01" + self.b62(22)
                    line, au = asst(
                        mid,
                        rid,
                        b'{"type":"tool_use","id":"'
                        + tid
                        + b'","name":"'
                        + name.encode()
                        + b'","input":'
                        + self.cl_input(name)
                        + b"}",
                        us,
                        b'"tool_use"' if (version == b"2.0.74" and r.random() < 0.1) else b"null",
                    )
                    yield t, line
                    calls.append((tid, au, name))
                    t += self.ms(0.05, 0.8)
                for tid, au, name in calls:
                    if r.random() < 0.3:
                        pu = uid()
                        yield (
                            t,
                            (
                                b'{"parentUuid":"'
                                + au
                                + b'",'
                                + env
                                + b'"type":"progress","data":{"type":"hook_progress",'
                                b'"hookEvent":"PreToolUse","hookName":"PreToolUse:'
                                + name.encode()
                                + b'","command":"~/.claude/hooks/guard.sh"},"toolUseID":"'
                                + tid
                                + b'","parentToolUseID":"'
                                + tid
                                + b'","uuid":"'
                                + pu
                                + b'","timestamp":"'
                                + iso(t + 7)
                                + b'"}'
                            ),
                        )
                    gap = self.tool_gap()
                    if name == "Bash" and gap > 3000:
                        for j in range(min(8, gap // 3000)):
                            pu = uid()
                            yield (
                                t,
                                (
                                    b'{"parentUuid":"'
                                    + au
                                    + b'",'
                                    + env
                                    + b'"type":"progress","data":{"type":"bash_progress",'
                                    b'"output":"'
                                    + tx.lu(10, 400)
                                    + b'","fullOutput":"'
                                    + tx.lu(10, 800)
                                    + b'","elapsedTimeSeconds":%d,"totalLines":%d},"toolUseID":"'
                                    % (3 * (j + 1), r.randrange(500))
                                    + tid
                                    + b'","parentToolUseID":"'
                                    + tid
                                    + b'","uuid":"'
                                    + pu
                                    + b'","timestamp":"'
                                    + iso(t + 3000 * (j + 1))
                                    + b'"}'
                                ),
                            )
                    if r.random() < 0.02:  # the human types while the tool runs
                        yield (
                            t,
                            (
                                b'{"type":"queue-operation","operation":"enqueue","timestamp":"'
                                + iso(t + gap // 2)
                                + b'","sessionId":"'
                                + sid
                                + b'","content":"'
                                + tx.lu(10, 200)
                                + b'"}'
                            ),
                        )
                        yield (
                            t,
                            (
                                b'{"type":"queue-operation","operation":"remove","timestamp":"'
                                + iso(t + gap + 3)
                                + b'","sessionId":"'
                                + sid
                                + b'"}'
                            ),
                        )
                    t += gap
                    out = tx.lu(20, 20000)
                    err = r.random() < 0.05
                    parent = b'"' + au + b'"'
                    if name == "Bash":
                        tur = b'{"stdout":"' + out + b'","stderr":"","interrupted":false,"isImage":false}'
                    elif name == "Read":
                        tur = (
                            b'{"type":"text","file":{"filePath":"/home/dev/proj/src/x.py","content":"'
                            + out
                            + b'","numLines":%d,"startLine":1,"totalLines":%d}}'
                            % (r.randint(1, 400), r.randint(1, 4000))
                        )
                    else:
                        tur = (
                            b'"' + tx.lu(10, 200) + b'"'
                            if r.random() < 0.1
                            else b'{"type":"update","filePath":"/home/dev/proj/src/x.py"}'
                        )
                    if err:
                        tur = b'"Error: ' + tx.lu(10, 120) + b'"'
                    line, _ = user(
                        b'[{"tool_use_id":"'
                        + tid
                        + b'","type":"tool_result","content":"'
                        + out
                        + b'"'
                        + (b',"is_error":true' if err else b"")
                        + b"}]",
                        b',"toolUseResult":' + tur + b',"sourceToolAssistantUUID":"' + au + b'"',
                    )
                    yield t, line

        turn = 0
        while turn < n_turns or until_target:
            if turn and not more():
                return
            if turn:
                t += self.human_gap()
            turn += 1
            pu = uid()
            yield (
                t,
                (
                    b'{"type":"file-history-snapshot","messageId":"'
                    + pu
                    + b'","snapshot":{"messageId":"'
                    + pu
                    + b'","trackedFileBackups":{},"timestamp":"'
                    + iso(t)
                    + b'"},"isSnapshotUpdate":false}'
                ),
            )
            x = r.random()
            if x < 0.01 and turn > 1:  # task notification: automatic, can be slow
                text = (
                    b"<task-notification>\\n<task-id>"
                    + self.b62(7)
                    + b"</task-id>\\n<status>completed</status>\\n<summary>"
                    + tx.lu(20, 120)
                    + b"</summary>\\n</task-notification>"
                )
            else:
                text = tx.lu(20, 2000)
            content = b'"' + text + b'"' if r.random() < 0.4 else b'[{"type":"text","text":"' + text + b'"}]'
            line, _ = user(
                content,
                b',"thinkingMetadata":{"maxThinkingTokens":31999},"todos":[],"permissionMode":"default"'
                if version.startswith(b"2.1")
                else b"",
            )
            yield t, line
            yield from reply(False)
            if r.random() < 0.08:  # Stop hook re-prompt 0.03-0.42 s after the final reply, then one more reply
                t += int(self.lu(0.03, 0.42) * 1000)
                line, _ = user(
                    b'"Stop hook feedback:\\n[${CLAUDE_PLUGIN_ROOT}/scripts/hooks/stop.sh]: '
                    + tx.lu(40, 400)
                    + b'\\n"',
                    b',"isMeta":true',
                )
                yield t, line
                yield from reply(r.random() < 0.6)
            if r.random() < 0.3:
                su = uid()
                yield (
                    t,
                    (
                        b'{"parentUuid":'
                        + parent
                        + b","
                        + env
                        + b'"type":"system","subtype":"turn_duration","durationMs":%d,'
                        b'"timestamp":"%s","uuid":"%s","isMeta":false}'
                    )
                    % (r.randint(2000, 900000), iso(t + 5), su),
                )

    # ============================================================================== OpenAI / Hermes
    OA_TOOLS = (
        "read_file",
        "terminal",
        "search_files",
        "patch",
        "write_file",
        "todo",
        "execute_code",
        "browser_navigate",
    )
    OA_MODELS = (b"claude-opus-4.7", b"claude-opus-4.8", b"gpt-5.4", b"claude-sonnet-4.6")
    OA_PLATFORMS = (b"cli", b"slack", b"telegram", b"discord")

    def oa_args(self, name: str) -> bytes:
        """Inner JSON of the arguments (JSON-string content, escaped once)."""
        t, r = self.tx, self.r
        if name == "read_file":
            return b'{"path":"src/mod%d.py","offset":1,"limit":%d}' % (r.randrange(100), r.choice((200, 260, 400)))
        if name == "terminal":
            return b'{"command":"' + t.lu(8, 200) + b'","timeout":%d}' % r.choice((60, 120, 600))
        if name == "search_files":
            return b'{"pattern":"' + t.lu(3, 40) + b'","target":"content","path":"src"}'
        if name == "patch":
            return (
                b'{"mode":"replace","path":"src/mod%d.py","old_string":"' % r.randrange(100)
                + t.lu(20, 800)
                + b'","new_string":"'
                + t.lu(20, 800)
                + b'"}'
            )
        if name == "write_file":
            return b'{"path":"src/new%d.py","content":"' % r.randrange(100) + t.lu(50, 4000) + b'"}'
        if name == "todo":
            return b'{"todos":[{"id":"t1","content":"' + t.lu(10, 80) + b'","status":"in_progress"}],"merge":true}'
        if name == "execute_code":
            return b'{"code":"' + t.lu(30, 1500) + b'"}'
        return b'{"url":"https://example.com/p/%d"}' % r.randrange(10**6)

    def openai_session(self, more):
        r, tx, iso = self.r, self.tx, self.clock.iso
        self.n_sessions += 1
        sid = b"sess_" + (b"%032x" % r.getrandbits(128))
        head = b'{"session_id":"' + sid + b'","role":"'
        t = self.start_ms() if not hasattr(self, "_oa_t") else self._oa_t
        model = r.choice(self.OA_MODELS)
        mtail = b',"model":"' + model + b'"}'
        hdr = r.random() < 0.3  # this client logs the x-initiator header
        n_turns = int(self.lu(1, 60))
        yield (
            t,
            (
                head
                + b'session_meta","model":"'
                + model
                + b'","platform":"'
                + r.choice(self.OA_PLATFORMS)
                + b'","timestamp":"'
                + iso(t)
                + b'"}'
            ),
        )
        t += r.randint(3, 40)

        def user(text: bytes, who: bytes | None):
            x = b',"x-initiator":"' + who + b'"' if (hdr and who) else b""
            return head + b'user","content":"' + text + b'","timestamp":"' + iso(t) + b'"' + x + b"}"

        def asst(text: bytes, finish: bytes, calls: bytes | None = None):
            tc = b',"tool_calls":' + calls if calls is not None else b""
            return (
                head
                + b'assistant","content":"'
                + text
                + b'"'
                + tc
                + b',"finish_reason":"'
                + finish
                + b'","timestamp":"'
                + iso(t)
                + b'"'
                + mtail
            )

        def tool_round():
            """Assistant with real calls + tool results."""
            nonlocal t
            calls, ids = [], []
            for _ in range(1 if r.random() < 0.85 else r.randint(2, 3)):
                name = r.choice(self.OA_TOOLS)
                cid = b"call_" + self.b62(24)
                ids.append(cid)
                calls.append(
                    b'{"id":"'
                    + cid
                    + b'","type":"function","function":{"name":"'
                    + name.encode()
                    + b'","arguments":"'
                    + jesc(self.oa_args(name))
                    + b'"}}'
                )
            yield t, asst(tx.lu(20, 400) if r.random() < 0.3 else b"", b"tool_calls", b"[" + b",".join(calls) + b"]")
            for cid in ids:
                t += self.tool_gap()
                yield (
                    t,
                    (
                        head
                        + b'tool","content":"'
                        + jesc(b'{"output":"' + tx.lu(20, 20000) + b'","exit_code":0,"error":null}')
                        + b'","tool_call_id":"'
                        + cid
                        + b'","timestamp":"'
                        + iso(t)
                        + b'"}'
                    ),
                )

        def dropped():
            """A dropped tool call; returns True when the narration ends the turn (plan-as-answer)."""
            nonlocal t
            policy = r.random()
            form = r.random()
            n = 0
            while True:
                narr = r.choice(NARRATIONS_J)
                calls = None if form < 0.6 else (b"[]" if form < 0.9 else b"null")
                yield t, asst(narr, b"tool_calls", calls)
                n += 1
                if policy < 0.15:
                    return True  # harness without the fix: the narration is the answer
                if policy < 0.40:
                    t += self.model_gap()
                    return False  # the next round makes the call without a nudge
                if n > 3:
                    return True  # Hermes: 3 nudges exhausted, 4th narration delivered
                t += int(self.lu(0.05, 0.2) * 1000)
                yield t, user(HERMES_NUDGE_J, b"agent")
                t += self.model_gap()
                if r.random() < 0.65:
                    return False  # recovered after the nudge

        def agent_turn(max_steps: float):
            """Rounds until a final reply; returns the finish of the last assistant message."""
            nonlocal t
            steps = int(self.lu(1, max_steps))
            for _s in range(steps - 1):
                t += self.model_gap()
                if r.random() < 0.02:
                    ended = yield from dropped()
                    if ended:
                        return "dropped"
                yield from tool_round()
            t += self.model_gap()
            x = r.random()
            if x < 0.01:
                yield t, asst(tx.lu(2000, 8000), b"length")
                t += self.auto_gap()
                yield t, user(LENGTH_NUDGE_J, b"agent")
                t += self.model_gap()
            elif x < 0.015:
                yield t, asst(b"", b"stop")
                t += self.auto_gap()
                yield t, user(EMPTY_NUDGE_J, b"agent")
                t += self.model_gap()
            yield t, asst(tx.lu(20, 2500), b"stop")
            return "stop"

        for turn in range(n_turns):
            if turn and not more():
                break
            if turn:
                t += self.human_gap()
            yield t, user(tx.lu(20, 2000), b"user")
            last = yield from agent_turn(25)
            while last == "stop" and r.random() < 0.05:  # automatic continue prompts after a final reply
                if r.random() < 0.8:
                    t += self.auto_gap()
                    yield t, user(r.choice(FAST_AUTO_J), b"agent")
                else:
                    t += self.ms(5, 20)  # LLM next-speaker check / compaction continue
                    yield t, user(r.choice(SLOW_AUTO_J), b"agent")
                last = yield from agent_turn(4)


# ----------------------------------------------------------------------------- driver
def parse_size(s: str) -> int:
    s = s.strip().upper().rstrip("B")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(float(s))


class Writer:
    CHUNK = 8 << 20

    def __init__(self, path: str):
        self.f = open(path, "wb")
        self.buf: list[bytes] = []
        self.pending = 0
        self.bytes = 0
        self.lines = 0

    def add(self, line: bytes):
        self.buf.append(line)
        n = len(line) + 1
        self.pending += n
        self.bytes += n
        self.lines += 1
        if self.pending >= self.CHUNK:
            self.flush()

    def flush(self):
        if self.buf:
            self.buf.append(b"")
            self.f.write(b"\n".join(self.buf))
            self.buf = []
            self.pending = 0

    def close(self):
        self.flush()
        self.f.close()


def fill(g: Gen, fmt: str, w: Writer, target: int, interleave: int) -> None:
    """Write sessions to w until about `target` bytes (sessions end at a turn boundary)."""
    more = lambda: w.bytes < target
    make = g.claude_session if fmt == "claude" else g.openai_session
    if interleave <= 1:
        while w.bytes < target:
            for _, line in make(more):
                w.add(line)
        return
    # K concurrent sessions merged by timestamp (a router / gateway style log)
    heap = []
    seq = 0
    base = g.start_ms()
    for _k in range(interleave):
        g._oa_t = base + int(g.lu(1, 3600) * 1000)
        it = make(more)
        ts, line = next(it)
        heap.append((ts, seq, line, it))
        seq += 1
    heapq.heapify(heap)
    while heap:
        ts, _, line, it = heapq.heappop(heap)
        w.add(line)
        nxt = next(it, None)
        if nxt is None:
            if w.bytes >= target:
                continue
            g._oa_t = ts + int(g.lu(1, 600) * 1000)
            it = make(more)
            nxt = next(it)
        seq += 1
        heapq.heappush(heap, (nxt[0], seq, nxt[1], it))
    del g._oa_t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--format", choices=["claude", "openai"], required=True)
    ap.add_argument("--bytes", required=True, help="total size, e.g. 200M, 1G (binary units)")
    ap.add_argument("--out", required=True, help="output file; a directory with --files (or an existing directory)")
    ap.add_argument(
        "--files", type=int, default=0, help="spread the output over N files (claude: one session per file)"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--interleave",
        type=int,
        default=1,
        help="openai: run K sessions concurrently and merge their lines by time (default 1)",
    )
    a = ap.parse_args(argv)
    total = parse_size(a.bytes)
    t0 = time.perf_counter()
    g = Gen(a.seed)
    t_corpus = time.perf_counter() - t0
    nbytes = nlines = nfiles = 0
    if a.files > 0:
        os.makedirs(a.out, exist_ok=True)
        if a.format == "claude":
            # one session per file; per-file targets log-normal around the mean, rescaled to the total
            raw = [math.exp(g.r.gauss(0.0, 1.0)) for _ in range(a.files)]
            left_w = sum(raw)
            for i, x in enumerate(raw):
                # rescale on the go so the total lands near --bytes despite per-file overshoot
                target = max(1, int(x * max(0, total - nbytes) / left_w))
                left_w -= x
                tmp = os.path.join(a.out, f".part{i}")
                w = Writer(tmp)
                it = g.claude_session(lambda: w.bytes < target, until_target=True)
                for _, line in it:
                    w.add(line)
                w.close()
                os.replace(tmp, os.path.join(a.out, g.current_sid.decode() + ".jsonl"))
                nbytes += w.bytes
                nlines += w.lines
                nfiles += 1
        else:
            per = total / a.files
            for i in range(a.files):
                w = Writer(os.path.join(a.out, f"openai_{i:05d}.jsonl"))
                fill(g, a.format, w, int(per * (i + 1)) - nbytes, a.interleave)
                w.close()
                nbytes += w.bytes
                nlines += w.lines
                nfiles += 1
    else:
        out = a.out
        if os.path.isdir(out):
            out = os.path.join(out, f"{a.format}.jsonl")
        w = Writer(out)
        fill(g, a.format, w, total, a.interleave if a.format == "openai" else 1)
        w.close()
        nbytes, nlines, nfiles = w.bytes, w.lines, 1
    dt = time.perf_counter() - t0
    print(f"wrote {nbytes} bytes, {nlines} lines, {g.n_sessions} sessions, {nfiles} file(s) -> {a.out}")
    print(f"{dt:.2f} s ({t_corpus:.2f} s corpus build), {nbytes / dt / 1e6:.1f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
