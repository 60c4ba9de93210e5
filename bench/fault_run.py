"""Fault run of issue 24's hardening items: tries / survived / lost per kind, as a markdown table.

    python bench/fault_run.py            # all four kinds (the full disk needs root to mount a tmpfs)
    python bench/fault_run.py --only db  # one kind: names, disk, db, guard

A try *survives* when stallscan ends with its documented exit code, no traceback, the error or record
that says what happened, and nothing silently wrong; it is *lost* otherwise (each loss is printed).
- names: hostile file names and files: non-UTF-8 names (file and folder), first lines nested 1,000 to
  100,000 deep, JSON arrays saved as .jsonl (whole and cut), gzip and zstd streams cut at many points,
  a FIFO as --db. Survived: the other files read, every line accounted (tests/hostile.accounting_errors),
  a cut gzip's decodable lines (counted by zlib) read, exit code as documented.
- disk: a 2-6 MB tmpfs filled by ingest (new and existing database), export and report -o. Survived:
  exit 6 naming "no space left", and the existing database unchanged (`stallscan check`, sessions equal).
- db: every 4 KiB block of a sample database zeroed in turn, then `check_file`. Survived: check reports
  the damage, or it reports none and every table's content equals the original's (the block was unused).
- guard: the hook run in-process over hostile payloads x logs x transcripts, and as a process with budgets
  of 1-500 ms. Survived: exit 0, nothing on stderr, output empty or the whole block, and a block only with
  its record in the log.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # (tests/test_guard_edges.py imports test_guard_hook by that name)
SAMPLE = ROOT / "sample_logs" / "claude-code" / "session.jsonl"


def cli(*args: str, cwd: Path = ROOT, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "stallscan", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout
    )


class Tally:
    def __init__(self) -> None:
        self.rows: dict[str, list[int]] = {}
        self.lost: list[str] = []
        self.notes: dict[str, int] = {}

    def add(self, kind: str, ok: bool, what: str) -> None:
        row = self.rows.setdefault(kind, [0, 0])
        row[0] += 1
        row[1] += ok
        if not ok:
            self.lost.append(f"{kind}: {what}")

    def table(self) -> str:
        out = ["| fault | tries | survived | lost |", "|---|---:|---:|---:|"]
        for kind, (n, ok) in self.rows.items():
            out.append(f"| {kind} | {n} | {ok} | {n - ok} |")
        return "\n".join(out)


def _accounted(db: Path) -> list[str]:
    from tests.hostile import accounting_errors

    con = duckdb.connect(str(db), read_only=True)
    try:
        return accounting_errors(con)
    finally:
        con.close()


def run_names(t: Tally, tmp: Path) -> None:
    good = SAMPLE.read_bytes()
    records = [json.loads(x) for x in good.splitlines() if x.strip()]
    # non-UTF-8 names, of the file and of its folder
    for i, bad in enumerate([b"\xff", b"\x80", b"\xc3", b"\xed\xa0\x80", b"a\xfe\xfeb"]):
        for where in ("file", "folder"):
            root = tmp / f"n{i}{where}"
            root.mkdir()
            (root / "ok.jsonl").write_bytes(good)
            sub = os.path.join(os.fsencode(root), b"d" + bad) if where == "folder" else os.fsencode(root)
            os.makedirs(sub, exist_ok=True)
            with open(os.path.join(sub, b"x" + bad + b".jsonl"), "wb") as fh:
                fh.write(good)
            db = root.with_suffix(".duckdb")
            p = cli("ingest", str(root), "--db", str(db), "--json")
            ok = p.returncode == 3 and "Traceback" not in p.stderr
            if ok:
                s = json.loads(p.stdout)
                ok = s["ingested"] == 1 and len(s["unreadable"]) == 1 and not _accounted(db)
            t.add("hostile names and files", ok, f"name {bad!r} in {where}: rc {p.returncode} {p.stderr[-200:]}")
    # deep first lines, JSON arrays, cut arrays, cut gzip / zstd streams: one ingest over the lot
    files = tmp / "files"
    files.mkdir()
    expect: dict[str, Callable[[tuple], bool]] = {}
    for depth in (1000, 3000, 10000, 30000, 100000):
        f = files / f"deep{depth}.jsonl"
        f.write_bytes(b'{"a":' * depth + b"1" + b"}" * depth + b"\n" + good)
        expect[str(f)] = lambda r: r[0] == "claude_code" and r[2] > 0
    for indent in (None, 0, 1, 2, 4):
        f = files / f"array{indent}.jsonl"
        f.write_text(json.dumps(records, indent=indent), encoding="utf-8")
        expect[str(f)] = lambda r, n=len(records): r[:2] == ("claude_code", n)
    rng = random.Random(11)
    doc = json.dumps(records, indent=1)
    for k in range(5):
        f = files / f"cutarray{k}.jsonl"
        f.write_text(doc[: rng.randrange(len(doc) // 4, len(doc) - 1)], encoding="utf-8")
        expect[str(f)] = lambda r: r[0] == "claude_code"
    whole = gzip.compress(good * 30)
    for k, cut in enumerate(sorted(rng.sample(range(200, len(whole) - 20), 12))):
        f = files / f"cut{k}.jsonl.gz"
        f.write_bytes(whole[:cut])
        n = zlib.decompressobj(wbits=31).decompress(whole[:cut]).count(b"\n")
        expect[str(f)] = lambda r, n=n: r[1] == n + 1 and r[3] == 1 if n else r[1] in (0, 1)
    import pyarrow as pa

    lines = b"".join(
        json.dumps({**rec, "pad": rng.randbytes(300).hex()}).encode() + b"\n" for _ in range(150) for rec in records
    )
    zwhole = pa.compress(lines, "zstd", asbytes=True)
    for k, frac in enumerate((0.2, 0.4, 0.6, 0.8, 0.95)):
        f = files / f"cut{k}.jsonl.zst"
        f.write_bytes(zwhole[: int(len(zwhole) * frac)])
        expect[str(f)] = lambda r: r[0] == "claude_code" and r[3] == 1 and r[1] > 0
    db = tmp / "files.duckdb"
    p = cli("ingest", str(files), "--db", str(db), "--json")
    rows = {}
    if db.exists():
        con = duckdb.connect(str(db), read_only=True)
        rows = {
            r[0]: r[1:]
            for r in con.execute("SELECT path, source_format, n_lines, n_events, n_rejects FROM files").fetchall()
        }
        con.close()
    acc = _accounted(db) if db.exists() else ["no database"]
    unread = {u[0] for u in json.loads(p.stdout)["unreadable"]} if p.stdout.strip() else set()
    for path, check in expect.items():
        r = rows.get(path)
        # r: (format, n_lines, n_events, n_rejects); a stream damaged from its first bytes is unreadable (exit 3)
        ok = "Traceback" not in p.stderr and not [e for e in acc if path in e]
        ok = ok and ((r is not None and check((r[0], r[1], r[2], r[3]))) or (path in unread and path.endswith(".gz")))
        t.add("hostile names and files", ok, f"{Path(path).name}: {r} {p.stderr[-200:]}")
    fifo = tmp / "db.fifo"
    os.mkfifo(fifo)
    for args in (("ingest", str(SAMPLE)), ("report",), ("sessions",), ("check",), ("sweep",)):
        try:
            q = cli(*args, "--db", str(fifo), timeout=60)
            ok = q.returncode == 3 and "not a regular file" in q.stderr
        except subprocess.TimeoutExpired:
            ok = False
        t.add("hostile names and files", ok, f"FIFO --db for {args[0]}")


def _mount(mnt: Path, mb: int) -> bool:
    mnt.mkdir(exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mb}m", "tmpfs", str(mnt)]).returncode == 0


def _sessions(db: Path) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT session_id, n_events FROM sessions ORDER BY ALL").fetchall()
    finally:
        con.close()


def run_disk(t: Tally, tmp: Path) -> None:
    from tests.test_db_faults import _big_transcript, _fill

    big = tmp / "big.jsonl"
    _big_transcript(big, 10)
    src = tmp / "src.duckdb"
    assert cli("ingest", str(big), "--db", str(src)).returncode == 0

    def full(p: subprocess.CompletedProcess[str]) -> bool:
        return p.returncode == 6 and "no space left" in p.stderr and "Traceback" not in p.stderr

    for mb in (1, 2, 3, 4, 5, 6, 8):
        mnt = tmp / f"m{mb}"
        if not _mount(mnt, mb):
            print("disk: cannot mount a tmpfs (needs root): skipped", file=sys.stderr)
            return
        try:
            db = mnt / "s.duckdb"
            p = cli("ingest", str(ROOT / "sample_logs"), "--db", str(db))
            if p.returncode != 0:  # the disk is too small even for the samples: that is a full disk too
                t.add("full disk", full(p) and not db.exists(), f"{mb} MB samples: {p.returncode} {p.stderr[-300:]}")
            else:
                before = _sessions(db)
                p = cli("ingest", str(big), "--db", str(db))
                ok = full(p) and _sessions(db) == before and cli("check", "--db", str(db)).returncode == 0
                t.add("full disk", ok, f"{mb} MB ingest into a database: {p.returncode} {p.stderr[-300:]}")
            p = cli("ingest", str(big), "--db", str(mnt / "new.duckdb"))
            t.add("full disk", full(p) and not (mnt / "new.duckdb").exists(), f"{mb} MB new db: {p.stderr[-300:]}")
            p = cli("export", str(mnt / "out"), "--db", str(src))
            if p.returncode == 0:  # the export fit on this disk: no fault to survive
                t.notes["disk: export fit (no fault, not counted)"] = (
                    t.notes.get("disk: export fit (no fault, not counted)", 0) + 1
                )
            else:
                t.add("full disk", full(p), f"{mb} MB export: {p.returncode} {p.stderr[-300:]}")
            _fill(mnt)
            p = cli("report", "--db", str(src), "--format", "html", "-o", str(mnt / "r.html"))
            t.add("full disk", full(p) and cli("check", "--db", str(src)).returncode == 0, f"{mb} MB report -o")
        finally:
            subprocess.run(["umount", "-l", str(mnt)])


def _contents(path: Path) -> dict[str, str] | None:
    con = duckdb.connect(str(path), read_only=True)
    try:
        out = {}
        for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall():
            out[name] = con.execute(
                f"SELECT count(*)::VARCHAR || md5(string_agg(t::VARCHAR, '|' ORDER BY t::VARCHAR)) FROM \"{name}\" t"
            ).fetchall()[0][0]
        return out
    finally:
        con.close()


def run_db(t: Tally, tmp: Path) -> None:
    from stallscan.store.check import check_file

    good = tmp / "good.duckdb"
    assert cli("ingest", str(ROOT / "sample_logs"), "--db", str(good)).returncode == 0
    want = _contents(good)
    size = good.stat().st_size
    data = good.read_bytes()
    for off in range(0, size, 4096):
        if not data[off : off + 4096].strip(b"\0"):  # already zero (free space, padding): nothing damaged
            t.notes["db: 4 KiB already zero (not counted)"] = t.notes.get("db: 4 KiB already zero (not counted)", 0) + 1
            continue
        bad = tmp / "bad.duckdb"
        shutil.copy(good, bad)
        with open(bad, "r+b") as fh:
            fh.seek(off)
            fh.write(b"\0" * 4096)
        try:
            res = check_file(str(bad))
        except Exception as exc:  # check_file reports, it never raises for damage
            t.add("corrupted database", False, f"block at {off}: check raised {exc!r}")
            continue
        if not res.ok:
            t.add("corrupted database", True, "")
            t.notes["db: damage reported by check"] = t.notes.get("db: damage reported by check", 0) + 1
            continue
        try:
            same = _contents(bad) == want
        except duckdb.Error as exc:
            same = False
            print(f"db: block at {off}: check said ok, the content read failed: {exc}", file=sys.stderr)
        t.add("corrupted database", same, f"block at {off}: check said ok but the content differs")
        t.notes["db: block unused (check ok, content equal)"] = (
            t.notes.get("db: block unused (check ok, content equal)", 0) + same
        )


def run_guard(t: Tally, tmp: Path) -> None:
    from stallscan.guard import hook
    from stallscan.guard.judge import nudge_text
    from tests.test_guard_edges import _hostile_log, _records

    block = json.dumps({"decision": "block", "reason": nudge_text()}, ensure_ascii=False) + "\n"
    texts = ["Now I'll run the tests.", "Now I'll run the tests. \ud800", "\udfff", "Done.", None, 5, ["x"]]
    logs = ["fresh", "garbage", "surrogates", "long_line", "fifo", "dev_zero", "dir", "missing_dir"]
    kinds = ["session", "relative", "garbage", "fifo", "missing"]
    counter = itertools.count()
    for text, log_kind, kind, mode in itertools.product(texts, logs, kinds, ("enforce", "observe")):
        i = next(counter)
        d = tmp / f"g{i}"
        d.mkdir()
        tr = d / "t.jsonl"
        recs = [
            {"type": "user", "uuid": "h", "sessionId": "s", "message": {"role": "user", "content": "go"}},
            {
                "type": "assistant",
                "uuid": "a",
                "sessionId": "s",
                "message": {
                    "id": "m",
                    "role": "assistant",
                    "stop_reason": "tool_use",
                    "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}],
                },
            },
            {
                "type": "user",
                "uuid": "r",
                "sessionId": "s",
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
            },
        ]
        tr.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
        path = {"session": str(tr), "relative": "t.jsonl", "missing": str(d / "none.jsonl")}.get(kind)
        if kind == "garbage":
            (d / "g.jsonl").write_bytes(os.urandom(2000))
            path = str(d / "g.jsonl")
        elif kind == "fifo":
            os.mkfifo(d / "t.fifo")
            path = str(d / "t.fifo")
        payload = {
            "session_id": "s",
            "hook_event_name": "Stop",
            "transcript_path": path,
            "cwd": str(d),
            "last_assistant_message": text,
        }
        log = _hostile_log(d, log_kind, i)
        before = None if log_kind in ("fifo", "dev_zero", "dir") else len(_records(Path(log)))
        out = io.StringIO()
        try:
            rc = hook.main(["--mode", mode, "--log", log, "--budget-ms", "0"], io.StringIO(json.dumps(payload)), out)
        except BaseException as exc:  # nothing may escape main()
            t.add("guard fuzz", False, f"{text!r} {log_kind} {kind}: raised {exc!r}")
            continue
        got = out.getvalue()
        ok = rc == 0 and got in ("", block)
        if got:
            ok = ok and before is not None and len(_records(Path(log))) == before + 1
        elif before is not None:
            ok = ok and len(_records(Path(log))) == before + 1
        t.add("guard fuzz", ok, f"{text!r} {log_kind} {kind} {mode}: rc {rc} out {got!r}")
    tr = tmp / "bud.jsonl"
    tr.write_text(
        '{"type":"user","uuid":"h","sessionId":"s","message":{"role":"user","content":"go"}}\n'
        '{"type":"assistant","uuid":"a","sessionId":"s","message":{"id":"m","role":"assistant",'
        '"stop_reason":"end_turn","content":[{"type":"text","text":"Now I\'ll run the tests."}]}}\n',
        encoding="utf-8",
    )
    payload = json.dumps({"session_id": "s", "hook_event_name": "Stop", "transcript_path": str(tr)})
    for k, ms in enumerate([1, 2, 3, 5, 8, 10, 15, 20, 30, 40, 50, 70, 100, 150, 200, 300, 500] * 3):
        log = tmp / f"bud{k}.jsonl"
        p = subprocess.run(
            [sys.executable, "-m", "stallscan.guard", "--mode", "enforce", "--log", str(log), "--budget-ms", str(ms)],
            input=payload,
            capture_output=True,
            text=True,
            timeout=60,
        )
        n = len(_records(log))
        ok = p.returncode == 0 and p.stderr == "" and p.stdout in ("", block) and n == 1
        t.add("guard fuzz", ok, f"budget {ms} ms: rc {p.returncode} err {p.stderr[-200:]!r} records {n}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["names", "disk", "db", "guard"])
    args = ap.parse_args()
    t = Tally()
    runs = {"names": run_names, "disk": run_disk, "db": run_db, "guard": run_guard}
    with tempfile.TemporaryDirectory(prefix="stallscan-faults-") as d:
        for name, fn in runs.items():
            if args.only in (None, name):
                sub = Path(d) / name
                sub.mkdir()
                with contextlib.chdir(sub):
                    fn(t, sub)
    print(t.table())
    for note, n in t.notes.items():
        print(f"{note}: {n}")
    for line in t.lost:
        print("lost:", line)


if __name__ == "__main__":
    main()
