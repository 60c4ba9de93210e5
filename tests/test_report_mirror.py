"""The mirror of the report memo (stallscan.report.mirror, `<db>.memo`): a repeat report printed by the console
script without importing duckdb, byte for byte what the memo hit prints; anything that changes what the
report would be (the database, the transcripts, the config, the options) makes it miss."""

from __future__ import annotations

import marshal
import os
import shutil
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from stallscan import entry
from stallscan.cli import app
from stallscan.report import mirror
from tests.helpers import claude_line, fresh_state, keep_state, report_tree

FAST = ["--bootstrap", "20"]
HEAVY = ("duckdb", "typer", "click", "pydantic", "rich", "numpy", "pyarrow", "polars")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The starting state, built once: report_tree's logs and a note, reported (so memoised) by the command;
    a test works in a fresh copy of it."""
    work = tmp_path_factory.mktemp("mirror") / "work"
    work.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        src = report_tree(work, mp)
        (src / "NOTES.txt").write_text("not a transcript\n")  # the walk leaves it out: a `note:` line
        r = CliRunner().invoke(app, ["report", str(src), "--db", str(work / "r.duckdb"), "--format", "json", *FAST])
    assert r.exit_code == 0, r.output
    return keep_state(work)


@pytest.fixture
def work(built, monkeypatch):
    """The folder a test runs in (the working directory): the built state, fresh, always at the same path."""
    return fresh_state(built, monkeypatch)


@pytest.fixture
def tree(work):
    return work / "logs", str(work / "r.duckdb")


def _args(src, db, *extra: str) -> list[str]:
    return [str(src), "--db", db, *FAST, "--format", "json", *extra]


def _mirrored(args: list[str], capsys) -> None:
    """`report ARGS` by the command (memoised in the database), then served in this process from the memo (a
    read-only lookup), which writes the mirror."""
    r = CliRunner().invoke(app, ["report", *args])
    assert r.exit_code == 0, r.output
    assert entry._report(args)
    capsys.readouterr()


def _hit(args: list[str]) -> bool:
    paths, v = entry.parse_report(args) or ([], {})
    m = mirror.load(v["db"])
    return m is not None and mirror.find(m, paths, v) is not None


def test_the_memo_hit_writes_a_mirror_that_answers_the_repeat(tree, capsys):
    src, db = tree
    args = _args(src, db)
    assert not os.path.exists(db + ".memo") and not _hit(args)  # (the computing run was not the script)
    _mirrored(args, capsys)
    assert _hit(args)
    assert not _hit(_args(src, db, "--limit", "5"))  # options differ: another entry, not there yet
    assert not _hit(_args(src, db, "--threshold", "3"))
    assert not _hit(_args(src, db + "x"))  # another database


def test_a_new_or_touched_transcript_misses(tree, capsys):
    src, db = tree
    args = _args(src, db)
    _mirrored(args, capsys)
    log = sorted((src / "codex").rglob("*.jsonl"))[0]
    st = log.stat()
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # same bytes, another mtime
    assert not _hit(args)
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))  # the mtime put back: its ctime still tells
    assert not _hit(args)
    _mirrored(args, capsys)  # (the memo still holds it: same size and mtime as the files row)
    assert _hit(args)
    (src / "codex" / "new.jsonl").write_text(claude_line("user", 1, session="new") + "\n")
    assert not _hit(args)


def test_a_config_change_misses(tree, work, capsys):
    src, db = tree
    args = _args(src, db)
    _mirrored(args, capsys)
    (work / "stallscan.toml").write_text('[labels]\noverrides = "over.csv"\n', encoding="utf-8")
    assert not _hit(args)  # ./stallscan.toml appeared
    (work / "over.csv").write_text("event_id,origin\n", encoding="utf-8")
    _mirrored(args, capsys)
    assert _hit(args)
    (work / "over.csv").write_text("event_id,origin\nnone-such,human\n", encoding="utf-8")
    assert not _hit(args)  # the override file's bytes
    _mirrored(args, capsys)
    assert _hit(args)
    (work / "stallscan.toml").write_text('[labels]\noverrides = "other.csv"\n', encoding="utf-8")
    assert not _hit(args)  # the config's bytes


def test_an_env_config_or_another_folder_misses(tree, work, capsys, monkeypatch):
    src, db = tree
    args = _args(src, db)
    _mirrored(args, capsys)
    cfg = work / "elsewhere.toml"
    cfg.write_text("", encoding="utf-8")
    monkeypatch.setenv("STALLSCAN_CONFIG", str(cfg))
    assert not _hit(args)
    monkeypatch.delenv("STALLSCAN_CONFIG")
    (work / "sub").mkdir()
    monkeypatch.chdir(work / "sub")
    assert not _hit(args)  # (relative paths and ./stallscan.toml are read from the working directory)


def test_a_database_written_replaced_or_with_a_wal_misses(tree, work, capsys):
    src, db = tree
    args = _args(src, db)
    _mirrored(args, capsys)
    open(db + ".wal", "wb").close()
    assert not _hit(args)  # uncheckpointed writes may be in it
    os.unlink(db + ".wal")
    assert _hit(args)
    shutil.copy2(db, db + ".copy")
    os.replace(db + ".copy", db)  # the same bytes and mtime in another file
    assert not _hit(args)
    _mirrored(args, capsys)
    other = work / "other.jsonl"
    other.write_text(claude_line("user", 7, session="other") + "\n")
    r = CliRunner().invoke(app, ["ingest", str(other), "--db", db])
    assert r.exit_code == 0, r.output
    assert not _hit(args)


def test_the_header_bytes_catch_a_write_whose_stat_was_put_back(tree, work, capsys):
    """A checkpoint rewrites a database header: with the file's stat recorded as it is now (as if size, times
    and inode had all been restored), the header bytes alone still make it miss."""
    src, db = tree
    args = _args(src, db)
    _mirrored(args, capsys)
    other = work / "other.jsonl"
    other.write_text(claude_line("user", 7, session="other") + "\n")
    assert CliRunner().invoke(app, ["ingest", str(other), "--db", db]).exit_code == 0
    now = mirror.db_state(db)
    assert now is not None
    with open(db + ".memo", "rb") as fh:
        raw = fh.read()
    n = len(mirror.MAGIC)
    size = int.from_bytes(raw[n : n + 8], "little")
    header = marshal.loads(raw[n + 8 : n + 8 + size])
    old_head = header["db"][-1]
    assert old_head != now[-1]  # (the ingest checkpointed)

    def rewrite(state: tuple) -> None:
        h = marshal.dumps({**header, "db": state})
        with open(db + ".memo", "wb") as fh:
            fh.write(raw[:n] + len(h).to_bytes(8, "little") + h + raw[n + 8 + size :])

    rewrite((*now[:-1], old_head))
    assert mirror.load(db) is None
    rewrite(now)  # (the same file with the header too: then it would be taken)
    assert mirror.load(db) is not None


def test_a_damaged_or_unwritable_mirror_is_no_error(tree, capsys):
    src, db = tree
    args = _args(src, db)
    for junk in (b"", b"garbage", mirror.MAGIC + b"\xff" * 8, mirror.MAGIC + (5).to_bytes(8, "little") + b"xx"):
        with open(db + ".memo", "wb") as fh:
            fh.write(junk)
        assert mirror.load(db) is None
    os.unlink(db + ".memo")
    os.mkdir(db + ".memo")  # cannot be replaced: the report is still served, nothing is said
    assert entry._report(args)
    out, err = capsys.readouterr()
    assert out.startswith("{") and err.startswith("ingested 0 file(s)") and "memo" not in err
    assert os.path.isdir(db + ".memo") and not [p for p in os.listdir(os.path.dirname(db)) if p.endswith(".tmp")]


def test_no_mirror_in_a_folder_the_walk_reads(tree, capsys):
    """A database inside the tree: its mirror would be one more file the walk finds (and notes as left out)."""
    src, _ = tree
    db = str(src / "codex" / "in-tree.duckdb")
    args = _args(src, db)
    CliRunner().invoke(app, ["report", *args])
    assert entry._report(args)
    capsys.readouterr()
    assert os.path.exists(db) and not os.path.exists(db + ".memo")


def test_the_lean_defaults_are_the_stores():
    from stallscan.report.section import ReportOptions
    from stallscan.store.db import default_db_path

    fields = ReportOptions.__dataclass_fields__
    assert {k: fields[k].default for k in entry.DEFAULTS} == entry.DEFAULTS
    assert entry.default_db_path() == default_db_path()


def test_the_config_file_is_the_one_labels_read(tmp_path, monkeypatch):
    from stallscan.replay.labels import load_config

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    assert mirror.config_path(None) is None and load_config(None) == {}
    (tmp_path / "stallscan.toml").write_text("x = 1\n")
    assert mirror.config_path(None) == "stallscan.toml" and load_config(None)["x"] == 1
    (tmp_path / "env.toml").write_text("x = 2\n")
    monkeypatch.setenv("STALLSCAN_CONFIG", str(tmp_path / "env.toml"))
    assert mirror.config_path(None) == str(tmp_path / "env.toml") and load_config(None)["x"] == 2
    (tmp_path / "opt.toml").write_text("x = 3\n")
    assert mirror.config_path("opt.toml") == "opt.toml" and load_config("opt.toml")["x"] == 3


# The console script in a subprocess: its output equals the typer command's byte for byte, and a mirror hit
# loads none of HEAVY (`python -X importtime` lists every module imported).


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "STALLSCAN_CONFIG"} | {"COLUMNS": "120", "NO_COLOR": "1"}


def _typer(argv: list[str]) -> tuple[int, str, str]:
    """The typer command on argv, in this process (the tree fixture set the directory and the environment the
    console script's process gets): the output the console script must equal."""
    r = CliRunner().invoke(app, argv, prog_name="stallscan")
    return r.exit_code, r.stdout, r.stderr


def _script(argv: list[str], cwd) -> tuple[tuple[int, str, str], set[str]]:
    """(exit code, stdout, stderr without the import lines), and the top-level packages imported."""
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "stallscan", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_env(),
    )
    lines = r.stderr.splitlines(keepends=True)
    imported = {ln.rsplit("|", 1)[-1].strip().split(".")[0] for ln in lines if ln.startswith("import time:")}
    err = "".join(ln for ln in lines if not ln.startswith("import time:"))
    return (r.returncode, r.stdout, err), imported


def test_the_console_script_serves_the_mirror_loading_nothing_heavy(tree, work):
    src, db = tree
    base = ["report", str(src), "--db", db, *FAST]
    for extra in (["--format", "json"], ["--format", "markdown"], ["-o", str(work / "r.md")]):
        argv = [*base, *extra]
        by_typer = _typer(argv)
        written = (work / "r.md").read_bytes() if "-o" in extra else None
        assert by_typer[0] == 0 and "note: left out 1 file(s)" in by_typer[2], by_typer[2]
        runs = [_script(argv, work) for _ in range(3)]  # memo hit (writes the mirror), then mirror hits
        for served, _ in runs:
            assert served == by_typer, extra
            if written is not None:
                assert (work / "r.md").read_bytes() == written
        # the first: the memo hit (json: the database read, the mirror written) or the document drawn from
        # the mirror's data and stored (markdown); then the mirror's document, with nothing heavy loaded
        assert "duckdb" in runs[0][1] or "-o" in extra
        assert not sorted(runs[1][1] & set(HEAVY)) and not sorted(runs[2][1] & set(HEAVY)), extra
    assert os.path.exists(db + ".memo")


def test_the_code_is_keyed_on_where_the_package_and_its_dependencies_are_found(tree, work, monkeypatch):
    """Not on the whole module path: `python -m stallscan` puts the working directory in front of it, the
    console script its own folder, PYTHONPATH adds folders; the same code is found either way. A folder in
    front that holds another numpy is other code."""
    src, db = tree
    argv = ["report", str(src), "--db", db, *FAST, "--format", "json"]
    first, imported = _script(argv, work)  # the memo hit: writes the mirror
    assert first[0] == 0 and "duckdb" in imported
    extra = work / "extra"
    extra.mkdir()
    (extra / "unrelated.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(extra), os.environ.get("PYTHONPATH")) if p))
    served, imported = _script(argv, work)  # another folder in front of the module path
    assert served == first and not sorted(imported & set(HEAVY))
    libs = mirror.origins()
    assert mirror.code_state(libs) == mirror.code_state(libs)
    monkeypatch.syspath_prepend(str(extra))
    assert mirror.load(db) is not None  # (in this process too: the path entry holds nothing we record)
    (extra / "numpy").mkdir()
    (extra / "numpy" / "__init__.py").write_text("")
    assert mirror.found_in()[1] == str(extra) and mirror.load(db) is None
