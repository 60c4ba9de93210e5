"""store.db.one_thread: DuckDB's worker threads set to one for a block (the report's work after a few new sessions),
then back to what they were, also when the block fails; nothing when told not to or already at one."""

from __future__ import annotations

import duckdb
import pytest

from stallscan.store.db import one_thread


def _threads(con: duckdb.DuckDBPyConnection) -> int:
    return int(con.execute("SELECT current_setting('threads')").fetchone()[0])


def test_one_thread_inside_and_the_setting_back_after(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STALLSCAN_THREADS", "3")
    con = duckdb.connect()
    con.execute("SET threads = 3")
    cur = con.cursor()
    with one_thread(con):
        assert _threads(con) == 1
        assert _threads(cur) == 1  # (a setting of the database: its cursors too)
        with one_thread(con):  # nested: nothing more, and the outer block restores
            assert _threads(con) == 1
        assert _threads(con) == 1
    assert _threads(con) == 3
    with pytest.raises(ValueError), one_thread(con):
        raise ValueError("boom")
    assert _threads(con) == 3


def test_nothing_when_not_wanted_or_on_one_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    con = duckdb.connect()
    con.execute("SET threads = 2")
    with one_thread(con, when=False):
        assert _threads(con) == 2
    monkeypatch.setenv("STALLSCAN_THREADS", "1")
    with one_thread(con):
        assert _threads(con) == 2  # (threads() says one CPU: the caller runs one after the other anyway)


def test_a_small_ingest_parses_on_one_thread_and_writes_the_same_rows(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stallscan.ingest import batch, run
    from stallscan.store.db import connect
    from tests.helpers import SAMPLES

    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    seen: list[int] = []
    parse = batch.parse_batch  # type: ignore[attr-defined]

    def spy(con: duckdb.DuckDBPyConnection, *args: object, **kw: object) -> None:
        seen.append(int(con.execute("SELECT current_setting('threads')").fetchone()[0]))
        parse(con, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(batch, "parse_batch", spy)
    rows = []
    for limit in (1 << 30, 0):  # every run small (one thread), then none
        monkeypatch.setattr(run, "ONE_THREAD_BYTES", limit)
        con = connect(str(tmp_path / f"{limit}.duckdb"))
        con.execute("SET threads = 2")
        run.ingest_paths(con, [str(SAMPLES / "claude-code")])
        assert int(con.execute("SELECT current_setting('threads')").fetchone()[0]) == 2
        rows.append(con.execute("SELECT * EXCLUDE (file) FROM events ORDER BY event_id").fetchall())
        con.close()
    assert seen == [1, 2]
    assert rows[0] == rows[1] and rows[0]


def test_the_connection_is_free_for_a_register_inside_and_after(monkeypatch: pytest.MonkeyPatch) -> None:
    """The setting's look-up leaves no unfinished result behind (DuckDB refuses a register() on a connection that
    holds one): the case of a database already at one thread while the machine has two, as in the real-format
    tests, which hit it."""
    import pyarrow as pa

    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    for setting in (1, 2):
        con = duckdb.connect()
        con.execute(f"SET threads = {setting}")
        with one_thread(con):
            con.register("inside", pa.table({"x": [1]}))
        con.register("after", pa.table({"x": [2]}))
        assert con.execute("SELECT sum(x) FROM (FROM inside UNION ALL FROM after)").fetchall() == [(3,)]
