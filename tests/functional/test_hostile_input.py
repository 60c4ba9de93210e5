"""Hostile input: random bytes, invalid UTF-8, NUL bytes, deep nesting, wrong types in every
field, duplicated / reordered lines, timestamps of every shape. Invariant for every case: no exception,
and lines in = events' records + skipped + rejects (per file, and against an independent newline count).

The property tests run a short budget by default; `-m slow` runs the long fuzz (STALLSCAN_FUZZ_EXAMPLES).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stallscan.ingest.detect import SPECS
from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect
from stallscan.store.sql import queries_dir
from tests.helpers import SAMPLES
from tests.hostile import accounting_errors, physical_lines

LINE_FORMATS = [
    f for f, s in SPECS.items() if not s.whole_file and (queries_dir() / "ingest" / f"{f}_events.sql").exists()
]
TEMPLATES = {
    "claude_code": SAMPLES / "claude-code" / "session.jsonl",
    "codex": SAMPLES / "codex" / "rollout.jsonl",
    "openai_chat": SAMPLES / "hermes" / "conversations.jsonl",
    "openai_chat_msgs": SAMPLES / "hermes" / "narration_nudged_exhausted.jsonl",
}
RECORDS = [json.loads(l) for p in TEMPLATES.values() for l in p.read_text(encoding="utf-8").splitlines() if l.strip()]
SHORT = int(os.environ.get("STALLSCAN_FUZZ_EXAMPLES_SHORT", "5"))
SLOW = os.environ.get("STALLSCAN_SLOW") == "1"  # also every format over every corpus
LONG = int(os.environ.get("STALLSCAN_FUZZ_EXAMPLES", "1500"))
_counter = itertools.count()

json_scalar = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_value = st.recursive(
    json_scalar, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3), max_leaves=6
)


def paths_of(obj, prefix=()):
    """Every path (tuple of keys / indexes) inside a JSON value, the root excluded."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else []
    for k, v in items:
        yield prefix + (k,)
        yield from paths_of(v, prefix + (k,))


def replaced(obj, path, value):
    out = json.loads(json.dumps(obj))
    cur = out
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    return out


@st.composite
def hostile_line(draw) -> bytes:
    rec = draw(st.sampled_from(RECORDS))
    kind = draw(
        st.sampled_from(["valid", "mutated", "mutated", "bytes", "utf8", "nul", "deep", "blank", "cut", "crlf"])
    )
    if kind == "valid":
        return json.dumps(rec).encode()
    if kind == "mutated":
        paths = list(paths_of(rec))
        path = draw(st.sampled_from(paths))
        return json.dumps(replaced(rec, path, draw(json_value))).encode()
    if kind == "bytes":
        return draw(st.binary(max_size=80))
    line = json.dumps(rec).encode()
    at = draw(st.integers(0, len(line)))
    if kind == "utf8":
        return line[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"])) + line[at:]
    if kind == "nul":
        return line[:at] + b"\x00" + line[at:]
    if kind == "deep":
        n = draw(st.integers(1, 3000))
        return draw(st.sampled_from([b"[" * n + b"]" * n, b'{"a":' * n + b"1" + b"}" * n, b"[" * n]))
    if kind == "blank":
        return draw(st.sampled_from([b"", b" ", b"\t", b"\r", b"\x0b"]))
    if kind == "cut":
        return line[:at]
    return line + b"\r"


hostile_file = st.tuples(st.lists(hostile_line(), max_size=14), st.booleans(), st.booleans())
hostile_files = st.lists(hostile_file, min_size=1, max_size=6)  # several files per ingest call (cheaper)


def _write(tmp: Path, lines: list[bytes], dup: bool, final_newline: bool) -> Path:
    if dup and lines:
        lines = lines + lines[: len(lines) // 2]  # duplicated records, out of order
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    f = tmp / f"h{next(_counter)}.jsonl"
    f.write_bytes(data)
    return f


@pytest.fixture(scope="module")
def shared_con():
    c = connect(":memory:")
    yield c
    c.close()


def _fuzz(con, tmp: Path, cases, fmt):
    files = [_write(tmp, *case) for case in cases]
    ingest_paths(con, [str(f) for f in files], fmt=fmt)
    for f in files:
        row = con.execute("SELECT status, n_lines, pending_bytes FROM files WHERE path = ?", [str(f)]).fetchone()
        if row[0] in ("ok", "partial"):
            assert row[1] + (1 if row[2] else 0) == physical_lines(f.read_bytes()), f.read_bytes()[:2000]
        errors = accounting_errors(con, only=str(f))
        assert not errors, (errors, f.read_bytes()[:2000])


MAIN_FORMATS = ["auto", "claude_code", "codex", "openai_chat"]
OTHER_FORMATS = [f for f in LINE_FORMATS if f not in MAIN_FORMATS]  # the other line formats
FUZZ: dict[str, Any] = dict(deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("fmt", MAIN_FORMATS)
@settings(max_examples=SHORT, derandomize=True, **FUZZ)
@given(cases=hostile_files)
def test_fuzz_lines_short(shared_con, tmp_path_factory, fmt, cases):
    _fuzz(shared_con, tmp_path_factory.getbasetemp(), cases, fmt)


@pytest.mark.parametrize("fmt", OTHER_FORMATS)
@settings(max_examples=max(2, SHORT // 3), derandomize=True, **FUZZ)
@given(cases=hostile_files)
def test_fuzz_lines_short_other_formats(shared_con, tmp_path_factory, fmt, cases):
    _fuzz(shared_con, tmp_path_factory.getbasetemp(), cases, fmt)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", MAIN_FORMATS + OTHER_FORMATS)
@settings(max_examples=LONG, **FUZZ)
@given(cases=hostile_files)
def test_fuzz_lines_long(shared_con, tmp_path_factory, fmt, cases):
    _fuzz(shared_con, tmp_path_factory.getbasetemp(), cases, fmt)


# ---------------------------------------------------------------------------------------------------
# seeded corpus: every field of every template record replaced by every JSON type
# ---------------------------------------------------------------------------------------------------
WRONG = [
    None,
    True,
    0,
    -1,
    2**63,
    2**70,
    1.5e308,
    -0.0,
    "",
    "x",
    "2026-01-01T00:00:00Z",
    [],
    [1, "a", None],
    {},
    {"text": 5},
]


def wrong_type_lines(template: Path) -> list[str]:
    out = []
    for line in template.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        for path in paths_of(rec):
            for value in WRONG:
                out.append(json.dumps(replaced(rec, path, value)))
        for key in rec if isinstance(rec, dict) else []:  # and every field removed
            out.append(json.dumps({k: v for k, v in rec.items() if k != key}))
    return out


@pytest.mark.parametrize("name", list(TEMPLATES))
def test_wrong_type_in_every_field(con, tmp_path, name):
    lines = wrong_type_lines(TEMPLATES[name])
    f = tmp_path / f"{name}.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    own = "codex" if name == "codex" else "claude_code" if name == "claude_code" else "openai_chat"
    for fmt in ("auto", own) + (tuple(f for f in LINE_FORMATS if f != own) if SLOW else ()):
        ingest_paths(con, [str(f)], fmt=fmt)
        errors = accounting_errors(con)
        assert not errors, (fmt, errors)
        n = con.execute("SELECT n_lines FROM files WHERE path = ?", [str(f)]).fetchone()[0]
        assert n == len(lines), (fmt, n, len(lines))


def test_wrong_type_in_every_field_of_json_documents(con, tmp_path):
    """Cline's JSON-array files: every element field replaced by every type; elements still add up.
    The UI file twice: beside its API file (t*/) and alone (u*/, read as the conversation)."""
    src = SAMPLES / "cline" / "1777073160794"
    for name, folder in (("api_conversation_history.json", "t"), ("ui_messages.json", "t"), ("ui_messages.json", "u")):
        doc = json.loads((src / name).read_text(encoding="utf-8"))
        paths = [p for p in paths_of(doc) if len(p) >= 2]
        rng = random.Random(7)
        for i, value in enumerate(WRONG):
            d = tmp_path / f"{folder}{i}"
            d.mkdir(exist_ok=True)
            mutated = doc
            for path in rng.sample(paths, min(8, len(paths))):
                with contextlib.suppress(KeyError, IndexError, TypeError):
                    mutated = replaced(mutated, path, value)
            (d / name).write_text(json.dumps(mutated), encoding="utf-8")
        ingest_paths(con, [str(tmp_path)])
    errors = accounting_errors(con)
    assert not errors, errors


# ---------------------------------------------------------------------------------------------------
# timestamps seen in the wild
# ---------------------------------------------------------------------------------------------------
TS_CASES = [  # value -> expected UTC ISO string or None (unparseable / out of range -> NULL, never a crash)
    ("2026-01-01T00:00:00Z", "2026-01-01 00:00:00+00:00"),
    ("2026-01-01T00:00:00.123Z", "2026-01-01 00:00:00.123000+00:00"),
    ("2026-01-01T00:00:00.123456789Z", "2026-01-01 00:00:00.123456+00:00"),
    ("2026-01-01T02:00:00+02:00", "2026-01-01 00:00:00+00:00"),
    ("2025-12-31T19:00:00-05:00", "2026-01-01 00:00:00+00:00"),
    ("2026-01-01T05:30:00+0530", "2026-01-01 00:00:00+00:00"),
    ("2026-01-01T00:00:00", "2026-01-01 00:00:00+00:00"),  # naive: read as UTC
    ("2026-01-01 00:00:00", "2026-01-01 00:00:00+00:00"),
    ("2026-01-01", "2026-01-01 00:00:00+00:00"),
    (1767225600, "2026-01-01 00:00:00+00:00"),  # epoch seconds
    (1767225600.5, "2026-01-01 00:00:00.500000+00:00"),
    (1767225600123, "2026-01-01 00:00:00.123000+00:00"),  # epoch milliseconds
    (0, "1970-01-01 00:00:00+00:00"),
    ("garbage", None),
    ("", None),
    ("2026-13-45T99:99:99Z", None),
    ("10000-01-01T00:00:00Z", None),
    (1e300, None),
    (-1e300, None),
    (2**70, None),
    (None, None),
    (True, None),
    ([], None),
    ({}, None),
    ("NaN", None),
    ("Infinity", None),
]


@pytest.mark.parametrize("fmt", ["openai_chat", "claude_code", "codex"])
def test_timestamps_of_every_shape(con, tmp_path, fmt):
    lines = []
    for i, (value, _) in enumerate(TS_CASES):
        if fmt == "openai_chat":
            rec = {"role": "user", "content": f"m{i}", "timestamp": value, "session_id": "s"}
        elif fmt == "claude_code":
            rec = {
                "type": "user",
                "uuid": f"u{i}",
                "sessionId": "s",
                "timestamp": value,
                "message": {"role": "user", "content": f"m{i}"},
            }
        else:
            rec = {"type": "event_msg", "timestamp": value, "payload": {"type": "task_started", "turn_id": f"t{i}"}}
        lines.append(json.dumps(rec))
    f = tmp_path / "ts.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ingest_paths(con, [str(f)], fmt=fmt)
    assert not accounting_errors(con)
    got = dict(con.execute("SELECT line, epoch_us(ts) FROM events").fetchall())
    assert len(got) == len(TS_CASES)
    want = [None if w is None else round(datetime.fromisoformat(w).timestamp() * 1e6) for _, w in TS_CASES]
    wrong = [(v, w, got[i + 1]) for i, ((v, _), w) in enumerate(zip(TS_CASES, want)) if got[i + 1] != w]
    assert not wrong, wrong


# ---------------------------------------------------------------------------------------------------
# seeded corruption corpus, through the CLI: exit code as documented, no traceback
# ---------------------------------------------------------------------------------------------------
def corruption_corpus(root: Path, big_line_mb: int = 0) -> dict[str, int]:
    """Write a directory of damaged transcripts; returns name -> expected line count (physical)."""
    rng = random.Random(1234)
    good = (SAMPLES / "claude-code" / "session.jsonl").read_bytes()
    codex = (SAMPLES / "codex" / "rollout.jsonl").read_bytes()
    cases = {
        "random.jsonl": bytes(rng.getrandbits(8) for _ in range(20000)),
        "random_json_head.jsonl": good[:2000] + bytes(rng.getrandbits(8) for _ in range(5000)),
        "bad_utf8.jsonl": good.replace(b"prompt", b"pr\xffompt").replace(b"Stop", b"\xed\xa0\x80Stop"),
        "nul.jsonl": good.replace(b'"type"', b'"ty\x00pe"', 3) + b"\x00" * 100 + b"\n",
        "nul_only.jsonl": b"\x00" * 4096,
        "deep.jsonl": good + b"[" * 100000 + b"]" * 100000 + b"\n" + b'{"a":' * 50000 + b"1" + b"}" * 50000 + b"\n",
        "deep_tail.jsonl": good + b'{"a":' * 50000 + b"1" + b"}" * 50000,
        "dup_reordered.jsonl": b"\n".join(sorted(good.splitlines() * 3, key=lambda _: rng.random())) + b"\n",
        "crlf.jsonl": good.replace(b"\n", b"\r\n"),
        "no_final_newline.jsonl": codex.rstrip(b"\n"),
        "truncated_mid_record.jsonl": codex[: len(codex) * 2 // 3],
        "only_newlines.jsonl": b"\n" * 1000,
        "bom.jsonl": b"\xef\xbb\xbf" + good,
        "utf16.jsonl": good.decode().encode("utf-16"),
        "long_line_no_newline.jsonl": b'{"type":"user","x":"' + b"a" * 300000,
        "gz_corrupt.jsonl.gz": b"\x1f\x8b\x08\x00" + bytes(rng.getrandbits(8) for _ in range(3000)),
        "zst_corrupt.jsonl.zst": b"\x28\xb5\x2f\xfd" + bytes(rng.getrandbits(8) for _ in range(3000)),
        "array.json": b"[" + b"1," * 1000 + b"2]",
        "half_cline/api_conversation_history.json": (
            SAMPLES / "cline" / "1777073160794" / "api_conversation_history.json"
        ).read_bytes()[:1500],
    }
    import gzip

    cases["gz_truncated.jsonl.gz"] = gzip.compress(good)[:300]
    if big_line_mb:
        rec = json.loads(good.splitlines()[2])
        rec["message"]["content"] = "y" * (big_line_mb * 1024 * 1024)
        cases["big_line.jsonl"] = good + json.dumps(rec).encode() + b"\n" + good
    for name, data in cases.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    # a directory named like a transcript, a FIFO, a symlink loop, a dangling link, a link cycle of dirs
    (root / "dir.jsonl").mkdir()
    (root / "dir.jsonl" / "inner.jsonl").write_bytes(good)
    os.mkfifo(root / "fifo.jsonl")
    os.symlink("loop_b.jsonl", root / "loop_a.jsonl")
    os.symlink("loop_a.jsonl", root / "loop_b.jsonl")
    os.symlink("missing.jsonl", root / "dangling.jsonl")
    (root / "sub").mkdir()
    os.symlink("..", root / "sub" / "up")
    return {name: len(data) for name, data in cases.items()}


def _cli(*args):
    import subprocess
    import sys

    env = dict(os.environ, NO_COLOR="1", COLUMNS="120")
    return subprocess.run(
        [sys.executable, "-m", "stallscan", *args], capture_output=True, text=True, env=env, timeout=300
    )


def _corpus_run(tmp_path, big_line_mb=0):
    root = tmp_path / "corpus"
    root.mkdir()
    written = corruption_corpus(root, big_line_mb)
    db = tmp_path / "c.duckdb"
    p = _cli("ingest", str(root), "--db", str(db), "--json")
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    summary = json.loads(p.stdout)
    unreadable = {Path(u[0]).name for u in summary["unreadable"]}
    # gzip / zstd streams damaged from their first block are unreadable input (exit 3); a truncated one is
    # read up to the damage (tests/test_hostile_files.py); everything else is read and accounted
    assert unreadable == {"gz_corrupt.jsonl.gz", "zst_corrupt.jsonl.zst"}, summary
    assert p.returncode == 3, p.stderr
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        errors = accounting_errors(con)
        assert not errors, errors
        files = dict(con.execute("SELECT path, status FROM files").fetchall())
    finally:
        con.close()
    names = {Path(k).name for k in files}
    assert {"inner.jsonl", "random.jsonl", "deep.jsonl", "bad_utf8.jsonl", "nul.jsonl"} <= names
    assert not any(n in names for n in ("fifo.jsonl", "loop_a.jsonl", "dangling.jsonl"))
    # second run: nothing changed, nothing re-read, same exit code, still no traceback
    again = _cli("ingest", str(root), "--db", str(db), "--json")
    assert again.returncode == 3 and "Traceback" not in again.stderr
    assert json.loads(again.stdout)["ingested"] == 0
    # named explicitly: a FIFO, a loop and a dangling link are one-line input errors (exit 3)
    for bad in ("fifo.jsonl", "loop_a.jsonl"):
        q = _cli("ingest", str(root / bad), "--db", str(db))
        assert q.returncode == 3 and q.stderr.startswith("error: ") and "Traceback" not in q.stderr, q.stderr
    assert len(files) == len(written) - 2 + 1  # all but the 2 unreadable, plus dir.jsonl/inner.jsonl
    return len(files)


def test_corruption_corpus_through_cli(tmp_path):
    _corpus_run(tmp_path)


@pytest.mark.slow
def test_corruption_corpus_with_50mb_line(tmp_path):
    """A 50 MB line (once an out-of-memory error: it now gets a one-thread parse with room, see ingest.py)."""
    _corpus_run(tmp_path, big_line_mb=50)


def test_file_vanishing_between_plan_and_read_keeps_its_rows(con, tmp_path, monkeypatch):
    """A file deleted after planning (rotated away mid-run) is reported unreadable; its old rows stay."""
    import stallscan.ingest.run as ing
    from tests.helpers import claude_line, write_lines

    f = write_lines(tmp_path / "v.jsonl", [claude_line("user", 1), claude_line("assistant", 2)])
    g = write_lines(tmp_path / "w.jsonl", [claude_line("user", 3, session="s2")])
    ingest_paths(con, [str(tmp_path)])
    with open(f, "a", encoding="utf-8") as fh:
        fh.write(claude_line("user", 4) + "\n")
    real_plan = ing._plan  # type: ignore[attr-defined]  # (the planner is private: patched here only)

    def plan_then_vanish(*a, **k):
        plans = real_plan(*a, **k)
        f.unlink()
        return plans

    monkeypatch.setattr(ing, "_plan", plan_then_vanish)
    res = ingest_paths(con, [str(f), str(g)])
    assert [u[0] for u in res.unreadable] == [str(f)]
    assert con.execute("SELECT count(*) FROM events WHERE file = ?", [str(f)]).fetchone()[0] == 2
    assert not accounting_errors(con, check_files=False)


@pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root to drop privileges (as non-root, chmod 0 already works: test_cli)"
)
def test_unreadable_file_with_privileges_dropped():
    """Root reads everything, so a chmod-0 file is only unreadable to another user: a forked child drops
    its effective uid to nobody (65534) and ingests a folder holding one such file. It is listed as
    unreadable (exit 3 in the CLI), the rest is ingested, nothing is half-read."""
    import shutil
    import tempfile

    from tests.helpers import claude_line

    root = Path(tempfile.mkdtemp(prefix="stallscan-perm-", dir="/tmp"))
    try:
        os.chmod(root, 0o755)
        logs = root / "logs"
        logs.mkdir(mode=0o755)
        (logs / "ok.jsonl").write_text(claude_line("user", 1) + "\n")
        secret = logs / "secret.jsonl"
        secret.write_text(claude_line("user", 2, session="s2") + "\n")
        os.chmod(logs / "ok.jsonl", 0o644)
        os.chmod(secret, 0o000)
        locked = logs / "locked_dir"
        locked.mkdir(mode=0o700)
        (locked / "inner.jsonl").write_text(claude_line("user", 3, session="s3") + "\n")
        dbdir = root / "db"
        dbdir.mkdir()
        os.chmod(dbdir, 0o777)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: no pytest machinery from here on
            code = 1
            try:
                os.setegid(65534)
                os.seteuid(65534)
                con = connect(dbdir / "p.duckdb")
                res = ingest_paths(con, [str(logs)])
                errs = accounting_errors(con)
                paths = [p for (p,) in con.execute("SELECT path FROM files WHERE status = 'ok'").fetchall()]
                os.write(w, json.dumps({"unreadable": res.unreadable, "errors": errs, "ok": paths}).encode())
                con.close()
                code = 0
            except BaseException as exc:  # report, never raise into pytest's copy
                os.write(w, json.dumps({"exc": repr(exc)}).encode())
            finally:
                os._exit(code)
        os.close(w)
        out = b""
        while chunk := os.read(r, 65536):
            out += chunk
        os.close(r)
        _, status = os.waitpid(pid, 0)
        got = json.loads(out)
        assert status == 0, got
        assert {Path(p).name for p, _ in got["unreadable"]} == {"secret.jsonl", "locked_dir"}, got
        assert all("ermission" in why for _, why in got["unreadable"]), got
        assert [Path(p).name for p in got["ok"]] == ["ok.jsonl"] and got["errors"] == []
    finally:
        shutil.rmtree(root, ignore_errors=True)
