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


def stallscan(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stallscan", *args], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=120
    )


def _ingested(db: Path) -> None:
    p = stallscan("ingest", str(SAMPLES / "claude-code"), "--db", str(db), "--json")
    assert p.returncode == 0, p.stderr


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


def _reads_alike(db: Path, reference: Path) -> None:
    """Every read command works on `db` and prints what it prints on a writable copy (`reference`)."""
    for cmd in READ_COMMANDS:
        p = stallscan(*cmd, "--db", str(db))
        assert p.returncode == 0, (cmd, p.stderr)
        want = stallscan(*cmd, "--db", str(reference))
        assert want.returncode == 0, want.stderr
        # (the report's suggested commands name the --db given)
        assert json.loads(p.stdout.replace(str(db), str(reference))) == json.loads(want.stdout), cmd
        if cmd[0] != "sql":  # (sql reads only: it opens read-only as before)
            assert "read-only here" in p.stderr and "fresh" not in p.stderr
    export = db.parent.parent / "export"
    p = stallscan("export", str(export), "--db", str(db))
    assert p.returncode == 0, p.stderr
    assert (export / "events").is_dir()
    sid = json.loads(stallscan("sessions", "--json", "--db", str(reference)).stdout)["sessions"][0]["session_id"]
    p = stallscan("show", sid, "--db", str(db))
    assert p.returncode == 0, p.stderr


def test_read_only_file_system(tmp_path: Path, read_only_mount: Path) -> None:
    """Item "a read-only database cannot be read": a database on a read-only mount was exit 6 for every command
    but sql ("Read-only file system"); now each read command derives in memory, and ingest says why it cannot
    write without telling the user to throw the database away."""
    ref = tmp_path / "ref.duckdb"
    _ingested(ref)
    shutil.copy(ref, read_only_mount / "ro.duckdb")
    subprocess.run(["mount", "-o", "remount,ro", str(read_only_mount)], check=True)
    db = read_only_mount / "ro.duckdb"
    before = db.read_bytes()
    _reads_alike(db, ref)
    p = stallscan("ingest", str(SAMPLES / "codex"), "--db", str(db))
    assert p.returncode == 6
    lines = p.stderr.splitlines()
    assert lines[0] == f"error: cannot write database {db}: the file is on a read-only file system"
    assert lines[1].startswith("hint: ") and "report" in lines[1] and "fresh" not in p.stderr
    assert db.read_bytes() == before


def test_read_only_by_permissions(tmp_path: Path) -> None:
    """The same with permission bits: a 0444 file in a 0555 folder (root ignores both: the mount test covers root)."""
    if os.geteuid() == 0:
        pytest.skip("running as root: permission bits stop no write (test_read_only_file_system covers root)")
    ref = tmp_path / "ref.duckdb"
    _ingested(ref)
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "ro.duckdb"
    shutil.copy(ref, db)
    db.chmod(0o444)
    folder.chmod(0o555)
    try:
        _reads_alike(db, ref)
        p = stallscan("ingest", str(SAMPLES / "codex"), "--db", str(db))
        assert p.returncode == 6 and "not writable by this user" in p.stderr.splitlines()[0]
    finally:
        folder.chmod(0o755)
