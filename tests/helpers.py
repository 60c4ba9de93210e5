"""Plain helpers for the test modules (import them from here, never from a conftest)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
SAMPLES = ROOT / "sample_logs"
GOLDEN = TESTS / "golden"  # expected outputs, one folder per case
SNAPSHOTS = TESTS / "snapshots"
TRUTH = TESTS / "truth"
# Modules run first (tests/conftest.py sorts them to the front), longest first: `pytest -n 2 --dist loadfile --no-loadscope-reorder` (.ci/run) hands modules to
# the workers in collection order, so none of these starts last while the other worker sits idle (xdist's
# default order, most tests first, put the one-test modules below at the end of the run). The rest keep
# pytest's order (functional, real, top-level, then the many short unit modules that even out the tail).
FIRST_MODULES = (  # by the per-test seconds (junit) of a `-n 2` run of 1f4dcee at load 10-19, less what was cut since
    "functional/test_spark.py",  # a JVM, the real files and sample_logs
    "functional/test_inputs_accounted.py",
    "functional/test_edges_cli.py",
    "test_report_memo.py",
    "test_traces.py",
    "functional/test_api.py",
    "functional/test_shell_options.py",
    "test_ingest_splits.py",
    "functional/test_schema_and_modes.py",
    "functional/test_boundary_variants.py",
    "functional/test_hostile_input.py",
    "test_export_swap.py",
)
# property tests whose every example replays a database: the default tiers draw DEFAULT_EXAMPLES of them;
# STALLSCAN_HYPOTHESIS=full draws each test's full budget (run it with the slow tier before a release)
DEFAULT_EXAMPLES = 25


def examples(full: int, default: int = DEFAULT_EXAMPLES) -> int:
    """A property test's max_examples: `full` with STALLSCAN_HYPOTHESIS=full, else at most `default`
    (DEFAULT_EXAMPLES unless the test names fewer)."""
    return full if os.environ.get("STALLSCAN_HYPOTHESIS") == "full" else min(full, default)


def real_root() -> Path:
    """The real transcripts: $STALLSCAN_REAL_DATA, else <repo>/../shared/data/real."""
    env = os.environ.get("STALLSCAN_REAL_DATA")
    root = Path(env) if env else ROOT.parent / "shared" / "data" / "real"
    return root.resolve()


def real_files(sub: str) -> list[Path]:
    """All *.jsonl files below ``<real>/<sub>`` (sorted); [] when the data is absent."""
    d = real_root() / sub
    if not d.is_dir():
        return []
    return sorted(p for p in d.rglob("*.jsonl") if p.is_file())


def memory_copy(path: Path) -> Any:
    """A new in-memory stallscan database holding every table of the closed database at `path` (an ingest's
    result): what ingesting the same files into a fresh `:memory:` connection leaves, without reading them
    again. Each caller gets its own copy to replay and change."""
    from stallscan.store.db import connect

    con = connect(":memory:")
    con.execute("ATTACH ? AS src (READ_ONLY)", [str(path)])
    listed = "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main'"
    have = {r[0] for r in con.execute(listed, ["memory"]).fetchall()}
    for (name,) in con.execute(listed, ["src"]).fetchall():
        if name in have:  # (a table connect() created, and may have filled)
            con.execute(f'DELETE FROM memory.main."{name}"')
            con.execute(f'INSERT INTO memory.main."{name}" FROM src.main."{name}"')
        else:
            con.execute(f'CREATE TABLE memory.main."{name}" AS FROM src.main."{name}"')
    con.execute("DETACH src")
    return con


def built_once(factory: Any, name: str, build: Callable[[Path], None]) -> Path:
    """A file `build(path)` writes, built once per test run and shared by the run's xdist workers (each
    would otherwise build its own: the same bytes twice). The first worker to ask builds it in the folder
    all workers' temporary folders are in, under a lock (fcntl.flock), the others wait for it and read the
    same file. Without xdist (or fcntl), a file of this process's own. Callers never write the file (they
    copy it, or open it read-only: DuckDB lets several processes read one file)."""
    try:
        import fcntl
    except ImportError:  # (no flock: each worker builds its own)
        fcntl = None
    if fcntl is None or not os.environ.get("PYTEST_XDIST_WORKER"):
        path = factory.mktemp(name) / f"{name}.duckdb"
        build(path)
        return path
    shared = Path(factory.getbasetemp()).parent  # the run's folder: pytest-N/popen-gwK -> pytest-N
    path = shared / f"{name}.duckdb"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes (or the worker dies)
        if not path.exists():
            part = shared / f"{name}.partial"
            for stale in (part, Path(f"{part}.wal")):  # a worker that died building it
                stale.unlink(missing_ok=True)
            build(part)
            os.replace(part, path)  # whole or absent: a failed build leaves no file for the next worker
    return path


def claude_line(kind: str, n: int, session: str = "s1", **extra: Any) -> str:
    """One Claude Code record: a user prompt or an assistant text reply, with a unique uuid."""
    ts = f"2026-01-01T00:00:{n:02d}.000Z"
    if kind == "user":
        rec: dict[str, Any] = {
            "type": "user",
            "uuid": f"u{n}",
            "parentUuid": None,
            "sessionId": session,
            "timestamp": ts,
            "isSidechain": False,
            "message": {"role": "user", "content": f"prompt {n}"},
        }
    else:
        rec = {
            "type": "assistant",
            "uuid": f"a{n}",
            "sessionId": session,
            "timestamp": ts,
            "isSidechain": False,
            "message": {
                "id": f"msg_{n}",
                "role": "assistant",
                "model": "m",
                "stop_reason": None,
                "content": [{"type": "text", "text": f"reply {n}"}],
            },
        }
    rec.update(extra)
    return json.dumps(rec)


def write_lines(path: Path, lines: list[str], newline_at_end: bool = True) -> Path:
    path.write_text("\n".join(lines) + ("\n" if newline_at_end else ""), encoding="utf-8")
    return path


def report_env(tmp_path: Path, monkeypatch: Any) -> None:
    """Run from tmp_path with no stallscan.toml or STALLSCAN_CONFIG of the caller's and a fixed 120-column
    plain terminal (the report memo tests)."""
    monkeypatch.chdir(tmp_path)  # no stallscan.toml from the caller's directory
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("NO_COLOR", "1")


def report_tree(tmp_path: Path, monkeypatch: Any) -> Path:
    """A logs folder of sample Claude Code and Codex files for the report memo tests, run from tmp_path
    (report_env)."""
    report_env(tmp_path, monkeypatch)
    src = tmp_path / "logs"
    shutil.copytree(SAMPLES / "claude-code", src / "claude-code")
    shutil.copytree(SAMPLES / "codex", src / "codex")
    return src


def restore(saved: Path, work: Path) -> None:
    """Put the folder `work` back as `saved` holds it, at the same place: files keep their bytes and mtimes
    (copytree copies with copy2), so a database built in `work` finds its transcripts unchanged. A module
    builds an expensive starting state once and each test starts from a fresh copy of it."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(saved, work, symlinks=True)


def keep_state(work: Path) -> tuple[Path, Path]:
    """(work, saved): a copy of the folder `work` as it is now, beside it (copy2: bytes and mtimes), for
    fresh_state to put back before each test of a module."""
    saved = work.parent / "saved"
    shutil.copytree(work, saved, symlinks=True)
    return work, saved


def fresh_state(built: tuple[Path, Path], monkeypatch: Any) -> Path:
    """The folder a report test runs in (its working directory, report_env): keep_state's copy put back at the
    same path (restore), so each test starts from the module's built state."""
    work, saved = built
    restore(saved, work)
    report_env(work, monkeypatch)
    return work


def relation_kinds(con: Any, name: str) -> set[str]:
    """What `name` is in the main schema: {'table'}, {'view'}, both or neither (a derived table that became a
    view must leave no table of its name behind)."""
    return {
        r[0]
        for r in con.execute(
            "SELECT 'table' FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = $n UNION ALL "
            "SELECT 'view' FROM duckdb_views() WHERE schema_name = 'main' AND view_name = $n",
            {"n": name},
        ).fetchall()
    }


@contextmanager
def scan_batch_rows(batch: int | None) -> Iterator[None]:
    """The replay scans' batch size ($STALLSCAN_SCAN_BATCH_ROWS) set to `batch` (None: the default) inside the
    block, and put back after it: for hypothesis tests, which cannot take pytest's function-scoped monkeypatch."""
    saved = os.environ.pop("STALLSCAN_SCAN_BATCH_ROWS", None)
    if batch is not None:
        os.environ["STALLSCAN_SCAN_BATCH_ROWS"] = str(batch)
    try:
        yield
    finally:
        os.environ.pop("STALLSCAN_SCAN_BATCH_ROWS", None)
        if saved is not None:
            os.environ["STALLSCAN_SCAN_BATCH_ROWS"] = saved
