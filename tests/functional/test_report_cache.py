"""The report cache (stallscan.report.cache): an unchanged `stallscan report ... --format json` is printed
again byte for byte, and every input that can change the document makes the next run compute it anew.

Each case runs the real command in a subprocess (the cache is read in `stallscan.run()`, before the CLI):
`hit` is true when the run said it printed a stored report."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stallscan.report import cache
from tests.helpers import ROOT

SAMPLES = ROOT / "sample_logs"
HIT = "printed it again"


def _report(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[str, bool]:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("STALLSCAN_DB", None)
    r = subprocess.run(
        [sys.executable, "-m", "stallscan", "report", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout, HIT in r.stderr


def _recomputed(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    out, hit = _report(cwd, *args, env={**(env or {}), cache.ENV_OFF: "0"})
    assert not hit
    return out


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(SAMPLES / "claude-code", tmp_path / "logs")
    return tmp_path


ARGS = ("logs", "--format", "json", "--db", "s.duckdb")


def _fill(tree: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """A first run (computes and stores), then a repeat that is served, byte-identical."""
    first, hit = _report(tree, *args, env=env)
    assert not hit
    again, hit = _report(tree, *args, env=env)
    assert hit and again == first
    return first


def test_repeat_is_served_byte_identical_to_a_recomputed_report(tree):
    first = _fill(tree, *ARGS)
    assert _recomputed(tree, *ARGS) == first
    out, hit = _report(tree, *ARGS)  # the recompute wrote the database (stamps): computed once more
    assert not hit and out == first


def test_markdown_and_html_are_served_too(tree):
    for fmt in ("markdown", "html"):
        args = ("logs", "--format", fmt, "--db", "s.duckdb")
        first = _fill(tree, *args)
        assert _recomputed(tree, *args) == first


def _first_line(tree: Path) -> Path:
    return sorted((tree / "logs").rglob("*.jsonl"))[0]


def _append(tree: Path) -> None:
    f = _first_line(tree)
    f.write_bytes(f.read_bytes() + f.read_bytes().splitlines(keepends=True)[0])


def _touch(tree: Path) -> None:
    f = _first_line(tree)
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _new_file(tree: Path) -> None:
    shutil.copy(_first_line(tree), tree / "logs" / "copy.jsonl")


def _config(tree: Path) -> None:
    (tree / "stallscan.toml").write_text(
        '[[prompts]]\nid = "test-auto"\nharness = ["claude_code"]\norigin = "automatic"\nmatch = "contains"\n'
        'text = "the"\ncitation = "test"\n'
    )


def _db_written(tree: Path) -> None:
    extra = tree / "extra"
    shutil.copytree(SAMPLES / "codex", extra)
    r = subprocess.run(
        [sys.executable, "-m", "stallscan", "ingest", str(extra), "--db", "s.duckdb"], cwd=tree, capture_output=True
    )
    assert r.returncode == 0, r.stderr


CHANGES = {
    "a line appended": _append,
    "a file touched (mtime only)": _touch,
    "a new transcript in the tree": _new_file,
    "a stallscan.toml in the working directory": _config,
    "the database written by another command": _db_written,
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_input_change_recomputes(tree, change):
    _fill(tree, *ARGS)
    CHANGES[change](tree)
    out, hit = _report(tree, *ARGS)
    assert not hit, f"{change}: served a stored report"
    assert out == _recomputed(tree, *ARGS)


def test_a_non_transcript_file_in_the_tree_changes_nothing(tree):
    first = _fill(tree, *ARGS)
    (tree / "logs" / "notes.txt").write_text("not a transcript")
    out, hit = _report(tree, *ARGS)
    assert hit and out == first


def test_labels_override_file_content_recomputes(tree):
    (tree / "over.csv").write_text("event_id,origin\nnone,human\n")
    (tree / "stallscan.toml").write_text('[labels]\noverrides = "over.csv"\n')
    _fill(tree, *ARGS)
    (tree / "over.csv").write_text("event_id,origin\nnone,automatic\n")
    out, hit = _report(tree, *ARGS)
    assert not hit and out == _recomputed(tree, *ARGS)


@pytest.mark.parametrize(
    "other",
    [
        ("--threshold", "3"),
        ("--bootstrap", "10"),
        ("--retry-bound", "2"),
        ("--limit", "2"),
        ("--since", "2026-01-01"),
        ("--harness", "claude_code"),
        ("--json",),
    ],
)
def test_each_option_has_its_own_entry(tree, other):
    first = _fill(tree, *ARGS)
    out, hit = _report(tree, *ARGS, *other)
    assert not hit
    assert out == _recomputed(tree, *ARGS, *other)
    out, hit = _report(tree, *ARGS)  # the recompute wrote the database again: not served
    assert not hit and out == first


@pytest.mark.parametrize("var", ["STALLSCAN_CONFIG", "TZ", "STALLSCAN_ANYTHING"])
def test_environment_changes_recompute(tree, var):
    _fill(tree, *ARGS)
    (tree / "empty.toml").write_text("")
    _, hit = _report(tree, *ARGS, env={var: str(tree / "empty.toml") if var == "STALLSCAN_CONFIG" else "X"})
    assert not hit


def test_terminal_table_and_output_files_are_never_stored(tree):
    for args in (("logs", "--db", "s.duckdb"), ("logs", "--format", "json", "--db", "s.duckdb", "-o", "r.json")):
        _report(tree, *args)
        _, hit = _report(tree, *args)
        assert not hit
    assert not (tree / "s.duckdb.report-cache").exists()


def test_cache_off_neither_reads_nor_writes(tree):
    _report(tree, *ARGS, env={cache.ENV_OFF: "0"})
    _, hit = _report(tree, *ARGS, env={cache.ENV_OFF: "0"})
    assert not hit and not (tree / "s.duckdb.report-cache").exists()


def test_fast_path_loads_nothing_heavy(tree):
    _fill(tree, *ARGS)
    probe = (
        "import sys\nsys.argv = ['stallscan', 'report', *" + repr(list(ARGS)) + "]\n"
        "from stallscan import run\nrun()\n"
        "print('LOADED:', *(m for m in ('duckdb', 'numpy', 'pyarrow', 'rich', 'typer') if m in sys.modules), "
        "file=sys.stderr)"
    )
    r = subprocess.run([sys.executable, "-c", probe], cwd=tree, capture_output=True, text=True, check=True)
    assert HIT in r.stderr
    assert r.stderr.split("LOADED:")[-1].split() == []


def test_inputs_are_the_files_discover_finds(tree, monkeypatch):
    from stallscan.ingest.discover import discover

    (tree / "logs" / "notes.txt").write_text("x")
    monkeypatch.chdir(tree)  # restored after the test (a bare os.chdir leaked into every later test)
    for paths in (["logs"], ["logs/**/*.jsonl"], [str(_first_line(tree))]):
        assert cache._inputs(paths) == [str(f) for f in discover(paths).files]
    assert cache._inputs(["missing"]) is None


def test_arguments_read_here_or_refused():
    assert cache.parse(["a", "--db", "x.duckdb", "--format", "json", "b"]).paths == ["a", "b"]
    assert cache.parse(["--db", "x.duckdb"]).db == "x.duckdb"
    for refused in (["--db=x"], ["-o", "r.json"], ["--from-parquet", "d"], ["--help"], ["--db", ":memory:"]):
        assert cache.parse(refused) is None, refused


def test_code_change_changes_the_fingerprint(tmp_path, monkeypatch):
    pkg = tmp_path / "stallscan"
    (pkg / "data").mkdir(parents=True)
    (pkg / "data" / "prompts.toml").write_text("a")
    monkeypatch.setattr(cache, "ROOT", str(pkg))
    before = cache._code_hash()
    (pkg / "data" / "prompts.toml").write_text("ab")
    assert cache._code_hash() != before


def test_stored_only_when_the_arguments_read_here_match_the_command(tree, monkeypatch):
    monkeypatch.chdir(tree)
    monkeypatch.setattr(cache, "ARGV", list(ARGS))
    assert cache.prepare(["logs"], "s.duckdb") is not None
    assert cache.prepare(["other"], "s.duckdb") is None
    assert cache.prepare(["logs"], "t.duckdb") is None
    monkeypatch.setattr(cache, "ARGV", None)  # not run through stallscan.run() (CliRunner, the API)
    assert cache.prepare(["logs"], "s.duckdb") is None
