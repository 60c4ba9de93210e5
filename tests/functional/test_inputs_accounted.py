"""Every input accounted for (issue 23): what a command could not read, left out, or found empty is said on
stderr with a documented exit code, and a read-only database can still be read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import SAMPLES

ENV = dict(os.environ, TZ="UTC", NO_COLOR="1", COLUMNS="120")
READ_COMMANDS = (
    ("report", "--format", "json"),
    ("sweep", "--format", "json"),
    ("stalls", "--json"),
    ("boundaries", "--json"),
    ("sessions", "--json"),
    ("sql", "SELECT count(*) AS n FROM events", "--format", "json"),
)


def stallscan(*args: str, cwd: Path | None = None, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(ENV, HOME=str(home)) if home else ENV
    return subprocess.run(
        [sys.executable, "-m", "stallscan", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=600
    )


def _ingested(db: Path) -> None:
    """A set-up step (the ingest is not the subject): in this process."""
    code, _, err = _in_process("ingest", str(SAMPLES / "claude-code"), "--db", str(db), "--json")
    assert code == 0, err


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Path]:
    """A folder on a file system mounted read-only: no write reaches it, not even root's."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (test_read_only_by_permissions covers other users)")
    mnt = tmp_path / "ro"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({p.stderr.strip()}): no read-only file system to test")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _process(*args: str) -> tuple[int, str, str]:
    p = stallscan(*args)
    return p.returncode, p.stdout, p.stderr


def _in_process(*args: str) -> tuple[int, str, str]:
    """The command run in this process (the reference side: the read-only side runs as a process)."""
    from typer.testing import CliRunner

    from stallscan.cli import app

    r = CliRunner().invoke(app, list(args), prog_name="stallscan", env={"COLUMNS": "120", "STALLSCAN_CONFIG": None})
    return r.exit_code, r.stdout, r.stderr


class Reference:
    """A writable database of the sample Claude Code files (`db`) and what each of READ_COMMANDS prints on it
    (`outputs`), in-process; `pristine`: a copy of it as ingested, never replayed, for the tests to copy."""

    def __init__(self, folder: Path) -> None:
        self.pristine = folder / "pristine.duckdb"
        _ingested(self.pristine)
        self.db = folder / "ref.duckdb"
        shutil.copy(self.pristine, self.db)
        self.outputs: dict[tuple[str, ...], str] = {}
        for cmd in READ_COMMANDS:
            code, out, err = _in_process(*cmd, "--db", str(self.db))
            assert code == 0, err
            self.outputs[cmd] = out
        sessions = json.loads(self.outputs[("sessions", "--json")])["sessions"]
        self.session_id = sessions[0]["session_id"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    return Reference(tmp_path_factory.mktemp("reference"))


def _reads_alike(db: Path, ref: Reference) -> None:
    """Every read command works on `db` and prints what it prints on a writable copy (`ref.db`): report as a
    process (the console script looks for a memo before typer), the others in-process."""
    for cmd in READ_COMMANDS:
        if cmd[0] == "report":
            p = stallscan(*cmd, "--db", str(db))
            code, out, err = p.returncode, p.stdout, p.stderr
        else:
            code, out, err = _in_process(*cmd, "--db", str(db))
        assert code == 0, (cmd, err)
        # (the report's suggested commands name the --db given)
        assert json.loads(out.replace(str(db), str(ref.db))) == json.loads(ref.outputs[cmd]), cmd
        if cmd[0] != "sql":  # (sql reads only: it opens read-only as before)
            assert "read-only here" in err and "fresh" not in err
    export = db.parent.parent / "export"
    code, _, err = _in_process("export", str(export), "--db", str(db))
    assert code == 0, err
    assert (export / "events").is_dir()
    code, _, err = _in_process("show", ref.session_id, "--db", str(db))
    assert code == 0, err


def test_read_only_file_system(read_only_mount: Path, reference: Reference) -> None:
    """Item "a read-only database cannot be read": a database on a read-only mount was exit 6 for every command
    but sql ("Read-only file system"); now each read command derives in memory, and ingest says why it cannot
    write without telling the user to throw the database away."""
    shutil.copy(reference.pristine, read_only_mount / "ro.duckdb")
    subprocess.run(["mount", "-o", "remount,ro", str(read_only_mount)], check=True)
    db = read_only_mount / "ro.duckdb"
    before = db.read_bytes()
    _reads_alike(db, reference)
    code, _, err = _in_process("ingest", str(SAMPLES / "codex"), "--db", str(db))  # (the exit code is typer's)
    assert code == 6
    lines = err.splitlines()
    assert lines[0] == f"error: cannot write database {db}: the file is on a read-only file system"
    assert lines[1].startswith("hint: ") and "report" in lines[1] and "fresh" not in err
    assert db.read_bytes() == before


def test_read_only_by_permissions(tmp_path: Path, reference: Reference) -> None:
    """The same with permission bits: a 0444 file in a 0555 folder (root ignores both: the mount test covers root)."""
    if os.geteuid() == 0:
        pytest.skip("running as root: permission bits stop no write (test_read_only_file_system covers root)")
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "ro.duckdb"
    shutil.copy(reference.pristine, db)
    db.chmod(0o444)
    folder.chmod(0o555)
    try:
        _reads_alike(db, reference)
        p = stallscan("ingest", str(SAMPLES / "codex"), "--db", str(db))
        assert p.returncode == 6 and "not writable by this user" in p.stderr.splitlines()[0]
    finally:
        folder.chmod(0o755)


def _not_utf8(folder: Path) -> Path:
    """A transcript whose file name is not valid UTF-8: unreadable for stallscan whoever runs it (root too)."""
    folder.mkdir(exist_ok=True)
    name = os.fsdecode(b"bad-\xff.jsonl")
    shutil.copy(SAMPLES / "claude-code" / "session.jsonl", folder / name)
    return folder / name


def test_report_says_what_it_could_not_read_as_ingest_does(tmp_path: Path) -> None:
    """Item "report PATH hides what it could not read": report exited 0 and its corpus never named the file,
    where ingest exits 3 and names it. Now both print the same error line and exit 3, and the report's
    corpus data lists it under `unreadable`."""
    logs = tmp_path / "logs"
    _not_utf8(logs)
    shutil.copy(SAMPLES / "codex" / os.listdir(SAMPLES / "codex")[0], logs / "codex.jsonl")
    shown = str(logs / "bad-\\xff.jsonl")  # (how the name prints: the byte as \xff)
    ing = _in_process("ingest", str(logs), "--db", str(tmp_path / "i.duckdb"), "--json")
    rep = stallscan("report", str(logs), "--db", str(tmp_path / "r.duckdb"), "--format", "json")
    assert ing[0] == rep.returncode == 3
    error = [ln for ln in rep.stderr.splitlines() if ln.startswith("error:")]
    assert error == [ln for ln in ing[2].splitlines() if ln.startswith("error:")]
    assert len(error) == 1 and error[0].startswith(f"error: cannot read {shown} (")
    assert rep.stderr.splitlines()[rep.stderr.splitlines().index(error[0]) + 1].startswith("hint: ")
    data = json.loads(rep.stdout)  # the report itself is printed: the rest was read
    assert [u["path"] for u in data["corpus"]["unreadable"]] == [shown]
    assert data["corpus"]["totals"]["files"] == 1
    # nothing readable at all: exit 3 still names the file (not "no events"), and no database is left
    only = tmp_path / "only"
    _not_utf8(only)
    p = stallscan("report", str(only), "--db", str(tmp_path / "o.duckdb"))
    assert p.returncode == 3 and p.stderr.splitlines()[0].startswith(f"error: cannot read {only}/bad-")
    assert not (tmp_path / "o.duckdb").exists()


def test_report_strict_as_ingest_strict(tmp_path: Path) -> None:
    """report has --strict, with ingest's meaning: a rejected line is exit 1 (before: no such option)."""
    f = tmp_path / "s.jsonl"
    good = (SAMPLES / "claude-code" / "session.jsonl").read_text()
    f.write_text(good + "{not json\n")
    for cmd in ("ingest", "report"):
        # without --strict: exit 0, in-process; with it: ingest in-process, report as the console script runs
        # it (the script's own path before typer, where an option could be lost)
        code, _, err = _in_process(cmd, str(f), "--db", str(tmp_path / f"{cmd}.duckdb"))
        assert code == 0, err
        run = _in_process if cmd == "ingest" else _process
        code, _, err = run(cmd, str(f), "--db", str(tmp_path / f"{cmd}-strict.duckdb"), "--strict")
        assert code == 1 and "1 line(s) rejected (--strict)" in err


def test_unreadable_folder_by_permissions(tmp_path: Path) -> None:
    """The same for a folder this user may not list (root lists every folder: the name test above covers root)."""
    if os.geteuid() == 0:
        pytest.skip("running as root: permissions do not stop reads (the non-UTF-8 name test covers root)")
    locked = tmp_path / "locked"
    locked.mkdir()
    shutil.copy(SAMPLES / "claude-code" / "session.jsonl", locked / "s.jsonl")
    locked.chmod(0)
    try:
        for cmd in ("ingest", "report"):
            p = stallscan(cmd, str(locked), "--db", str(tmp_path / f"{cmd}.duckdb"))
            assert p.returncode == 3 and p.stderr.startswith(f"error: cannot read {locked} ("), p.stderr
    finally:
        locked.chmod(0o755)


def test_walk_detects_by_content_and_says_what_it_left_out(tmp_path: Path) -> None:
    """Item "a folder walk skips files by suffix without a word": a transcript without a transcript suffix is
    now found by its content; what the walk leaves out is one stderr line, by suffix, saying how to read one
    anyway (ingest and report alike); a folder with nothing to read is exit 2 and leaves no database."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(SAMPLES / "claude-code" / "session.jsonl", logs / "session")  # no suffix
    (logs / "notes.txt").write_text("plain notes, not a transcript\n")
    (logs / "README.md").write_text("# runs\n")
    (logs / "run.py").write_text("print('x')\n")
    want = "left out 3 file(s) in the folders walked, no record of a known format in their first 8 KB: "
    want += ".md 1, .py 1, .txt 1; to read one, name it with its format: stallscan ingest FILE --input-format FORMAT"
    for cmd, fmt in (("ingest", "--json"), ("report", "--json")):  # (ingest in-process, report a process)
        code, stdout, stderr = (_in_process if cmd == "ingest" else _process)(
            cmd, str(logs), "--db", str(tmp_path / f"{cmd}.duckdb"), fmt
        )
        assert code == 0, stderr
        assert [ln for ln in stderr.splitlines() if "left out" in ln] == [f"note: {want}"]
        out = json.loads(stdout)
        events = out["events"] if cmd == "ingest" else out["corpus"]["totals"]["events"]
        assert events == 7  # the sample's 7 events (its README): the suffix-less file was read
    os.remove(logs / "session")
    code, _, err = _in_process("ingest", str(logs), "--db", str(tmp_path / "none.duckdb"))
    assert code == 2
    lines = err.splitlines()
    assert lines[0].startswith(f"error: no transcript found in {logs} (left out 3 file(s)") and len(lines) == 2
    assert lines[1].startswith("hint: to read one, name it") and not (tmp_path / "none.duckdb").exists()


def test_empty_results_are_an_error_and_create_nothing(tmp_path: Path, reference: Reference) -> None:
    """Item "empty results are not a success": report on an empty folder, an empty file, or with --since past
    every event printed a report of zeros, exited 0 and created the database. Now: one error line and its
    hint on stderr, nothing on stdout, exit 2, no database file."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty.jsonl").write_text("")
    sample = str(SAMPLES / "claude-code" / "session.jsonl")  # its events are of 2026-05-15
    cases = [
        ((str(tmp_path / "empty"),), "error: no transcript found in "),
        ((str(tmp_path / "empty.jsonl"),), "error: nothing read from "),
        ((sample, "--since", "2030-01-01"), "error: no events to report: no session matches --since 2030-01-01"),
    ]
    for i, (args, first) in enumerate(cases):
        db = tmp_path / f"r{i}.duckdb"
        for fmt, run in (("table", _in_process), ("json", _process)):
            code, out, err = run("report", *args, "--db", str(db), "--format", fmt)
            lines = err.splitlines()
            assert code == 2 and out == "", (args, err)
            assert len(lines) == 2 and lines[0].startswith(first) and lines[1].startswith("hint: "), err
            assert not db.exists() and not Path(str(db) + ".wal").exists()
    # no PATH, no database: the usual folders (here an empty ~/.codex/sessions) hold nothing: exit 2, no db
    home = tmp_path / "home"
    (home / ".codex" / "sessions").mkdir(parents=True)
    p = stallscan("report", cwd=home, home=home)
    assert p.returncode == 2 and p.stderr.splitlines()[-2:] == [
        "error: the usual log folders hold no transcript stallscan can read",
        "hint: pass a PATH: stallscan report PATH",
    ]
    assert not (home / "stallscan.duckdb").exists()
    db = tmp_path / "kept.duckdb"
    shutil.copy(reference.pristine, db)  # (the sample Claude Code files as ingested)
    before = db.stat().st_mtime_ns, db.stat().st_size
    p = stallscan("report", "--since", "2030-01-01", "--db", str(db))
    assert p.returncode == 2 and p.stderr.splitlines()[1].startswith(
        "hint: the database holds 7 events from 2026-05-15"
    )
    assert (db.stat().st_mtime_ns, db.stat().st_size) == before


def test_forced_format_that_matches_nothing(tmp_path: Path) -> None:
    """Item "a forced --input-format that matches nothing": a Claude Code file read as copilot_cli skipped its
    13 lines silently (exit 0 under --strict too). Now a warning names the file; --strict exits 1."""
    f = SAMPLES / "claude-code" / "session.jsonl"
    # (ingest has no path before typer: its stdout, stderr and exit code are the command's, in-process)
    code, out_text, err = _in_process(
        "ingest", str(f), "--input-format", "copilot_cli", "--db", str(tmp_path / "a.duckdb"), "--json"
    )
    assert code == 0
    out = json.loads(out_text)
    assert out["events"] == 0 and out["lines"] == 13 and out["forced_no_events"] == [str(f)]
    assert err.startswith(
        f"warning: --input-format copilot_cli matched nothing in 1 file(s), every line skipped or rejected: {f}"
    )
    code, _, err = _in_process(
        "ingest", str(f), "--input-format", "copilot_cli", "--db", str(tmp_path / "b.duckdb"), "--strict"
    )
    assert code == 1 and "--input-format copilot_cli matched nothing in 1 file(s) (--strict)" in err
    code, _, err = _in_process(
        "ingest", str(f), "--input-format", "claude_code", "--db", str(tmp_path / "c.duckdb"), "--strict"
    )
    assert code == 0 and "warning" not in err, err


def test_unwritable_database_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: Reference
) -> None:
    """The fallback wherever the tests run (root without a mount included): the database's folder reported
    unwritable by access(2) (as for a read-only folder), every read command in-process; the file's bytes are
    unchanged afterwards, although this process could write them (root can), so any write would show."""
    from typer.testing import CliRunner

    from stallscan.cli import app

    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "ro.duckdb"
    shutil.copy(reference.pristine, db)
    before = db.read_bytes()
    access = os.access

    def no_write_here(path: object, mode: int, **kw: object) -> bool:
        if mode & os.W_OK and Path(os.fsdecode(path)).resolve() in (folder, db):  # type: ignore[arg-type]
            return False
        return access(path, mode, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", no_write_here)
    runner = CliRunner()
    for cmd in READ_COMMANDS:
        r = runner.invoke(app, [*cmd, "--db", str(db)])
        assert r.exit_code == 0, (cmd, r.output, r.exception)
        want = reference.outputs[cmd]
        assert json.loads(r.stdout.replace(str(db), str(reference.db))) == json.loads(want), cmd
    r = runner.invoke(app, ["ingest", str(SAMPLES / "codex"), "--db", str(db)])
    assert r.exit_code == 6
    assert db.read_bytes() == before and sorted(p.name for p in folder.iterdir()) == ["ro.duckdb"]
