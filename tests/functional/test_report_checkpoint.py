"""The report's writes checkpointed beside its last reads after new sessions (stallscan.store.checkpoint): with the
lanes, once the stall section's first part and the sweep's bins are written, a CHECKPOINT runs on a thread beside
the sweep's numpy work; the memo's put finds the WAL written into the file, and the report and every derived table
equal those of the same report on one CPU (no checkpoint armed). Its failure is raised by the command."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from stallscan.report import memo
from stallscan.store import checkpoint
from tests.functional.test_report_lanes import assert_same_derives, cli_report, new_sessions_pair


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)


def _wal(db: Path) -> int:
    wal = Path(f"{db}.wal")
    return wal.stat().st_size if wal.exists() else 0


def test_the_writes_are_checkpointed_before_the_memo_put_and_the_report_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial, early = new_sessions_pair(tmp_path, "early")
    armed: list[checkpoint.Early] = []
    arm = checkpoint.early

    def spy_arm(con: duckdb.DuckDBPyConnection, writers: int) -> _Entered:
        cm = arm(con, writers)
        e = cm.__enter__()
        armed.append(e)
        return _Entered(cm, e)

    done_on: list[str] = []
    done = checkpoint.writes_done

    def spy_done(con: duckdb.DuckDBPyConnection) -> None:
        done_on.append(threading.current_thread().name)
        done(con)

    wal_at_put: list[int] = []
    put = memo.put

    def spy_put(con: duckdb.DuckDBPyConnection, key: str, text: str) -> None:
        wal_at_put.append(_wal(early if armed else serial))
        put(con, key, text)

    monkeypatch.setattr(checkpoint, "early", spy_arm)
    monkeypatch.setattr(checkpoint, "writes_done", spy_done)
    monkeypatch.setattr(memo, "put", spy_put)
    monkeypatch.setenv("STALLSCAN_THREADS", "1")
    code, want = cli_report(serial)
    assert code == 0 and not armed  # one CPU: no lanes, nothing armed; the close checkpoints as before
    assert wal_at_put[0] > 0  # (the derives' writes are in the WAL when the memo is put)
    wal_at_put.clear()
    done_on.clear()
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    code, got = cli_report(early)
    assert code == 0
    assert len(armed) == 1 and armed[0].started and not armed[0].refused
    # the stall section's first part on the second lane, the sweep on the caller's
    assert sorted(done_on) == ["MainThread", "stallscan-lane"]
    assert wal_at_put == [0]  # every write before the memo's put is in the file: the close checkpoints the put only
    assert _wal(early) == 0  # (and the close did)
    assert not [t for t in threading.enumerate() if t.name in ("stallscan-checkpoint", "stallscan-lane")]
    assert json.loads(got.replace("early.duckdb", "serial.duckdb")) == json.loads(want)
    assert_same_derives(serial, early)


class _Entered:
    """An entered context manager handed back as one (the spy above enters it to see its value)."""

    def __init__(self, cm: Any, value: checkpoint.Early) -> None:
        self._cm, self._value = cm, value

    def __enter__(self) -> checkpoint.Early:
        return self._value

    def __exit__(self, *exc: object) -> Any:
        return self._cm.__exit__(*exc)


def test_a_failed_checkpoint_is_raised_and_the_database_reports_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, db = new_sessions_pair(tmp_path, "early")
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    monkeypatch.setattr(checkpoint, "CHECKPOINT", "SELECT * FROM no_such_table")
    res = CliRunner().invoke(app, ["report", "--db", str(db), "--format", "json", "--bootstrap", "40"])
    assert res.exit_code != 0 and "no_such_table" in res.output  # (the command's database error, said)
    assert not [t for t in threading.enumerate() if t.name in ("stallscan-checkpoint", "stallscan-lane")]
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    code, out = cli_report(db)  # the database still reports
    assert code == 0 and json.loads(out)["report_version"]


def test_a_refused_checkpoint_is_left_to_the_close(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "d.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t AS SELECT range AS x FROM range(1000)")
    # (a TransactionException, as DuckDB raises when it refuses a CHECKPOINT beside an open write transaction)
    monkeypatch.setattr(checkpoint, "CHECKPOINT", "COMMIT")
    with checkpoint.early(con, 2) as e:
        checkpoint.writes_done(con)
        assert not e.started  # one writer of two
        checkpoint.writes_done(con)
        assert e.started
        e.join()  # not raised
    assert e.refused and _wal(db) > 0
    checkpoint.writes_done(con)  # nothing armed: nothing done
    con.close()  # (the close checkpoints)
    assert _wal(db) == 0
    assert duckdb.connect(str(db)).execute("SELECT count(*) FROM t").fetchall() == [(1000,)]
