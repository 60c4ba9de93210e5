"""Every SQL file under queries/ is executed by this test's workflow (and so by the code paths the other
tests check): the loader (stallscan.store.sql.load) is wrapped to record each file the code asks for, while
the CLI, in-process, ingests every bundled format plus a guard log, replays, reports, sweeps, lists,
shows and exports, and the API reads events. A query file no command reaches is either dead or untested;
either way this test names it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import stallscan.ingest.run as ingest_run
from stallscan import api
from stallscan.cli import app
from stallscan.guard import log as guard_log
from stallscan.replay import stalls
from stallscan.replay.stalls import replay_stalls, signature_hits, silent_rates, summary_counts
from stallscan.store import sql
from stallscan.store.db import connect
from tests.helpers import SAMPLES


def test_every_query_file_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: set[str] = set()
    load = sql.load

    def recording_load(name: str) -> list[str]:
        ran.add(name)
        return load(name)

    monkeypatch.setattr(sql, "load", recording_load)
    monkeypatch.chdir(tmp_path)
    logs = tmp_path / "logs"
    shutil.copytree(SAMPLES, logs, ignore=shutil.ignore_patterns("*.py", "README.md"))
    # the formats sample_logs/ lacks: a Gemini CLI JSON document and the guard's own decision log
    gemini = {"sessionId": "g1", "projectHash": "p", "messages": [{"id": "a", "type": "user", "content": "hi"}]}
    (logs / "session-2026-01-30T06-08-g1.json").write_text(json.dumps(gemini), encoding="utf-8")
    guard_log.append(logs / "stallscan-guard.jsonl", {"harness": "claude_code", "session": "s1", "decision": "block"})
    # ... and one OTLP export pretty-printed as a whole file (the otlp samples hold one export a line)
    first = (SAMPLES / "otlp" / "genai_span_events.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (logs / "export.json").write_text(json.dumps(json.loads(first), indent=2), encoding="utf-8")
    # ... and a Claude Code transcript with a line that is not UTF-8 (its batch is decoded line by line:
    # ingest/stage_lines; every other batch is staged as Arrow strings, ingest/stage_lines_text)
    bad = logs / "claude-code" / "invalid-utf8.jsonl"
    good = (SAMPLES / "claude-code" / "session.jsonl").read_bytes().splitlines()[0]
    bad.write_bytes(good + b"\n" + b'{"type":"user","x":"\xff"}\n')
    db = str(tmp_path / "s.duckdb")
    runner = CliRunner()

    def cli(*args: str) -> Any:
        r = runner.invoke(app, [*args, "--db", db])
        assert r.exit_code == 0, (args, r.output, r.exception)
        return r

    cli("ingest", str(logs))
    # a transcript read in chunks (ingest/hold_tail, run_tails): the Claude Code sample (8 KB) in 4 KB batches,
    # one file alone (the whole corpus in 8 KB batches ran the same query files, at 14 batches' fixed cost)
    chunked = tmp_path / "chunked"
    chunked.mkdir()
    shutil.copy(SAMPLES / "claude-code" / "session.jsonl", chunked / "session.jsonl")
    whole = ingest_run.BATCH_BYTES
    monkeypatch.setattr(ingest_run, "BATCH_BYTES", 4000)
    cli("ingest", str(chunked))
    monkeypatch.setattr(ingest_run, "BATCH_BYTES", whole)
    cli("report", "--full", "--format", "json")
    cli("report", "--full", "--format", "json")  # the same report again: read from the memo
    cli("stalls", "--format", "json")
    cli("boundaries", "--format", "json")
    cli("sweep")  # (the table: the same queries as json, without dumping every curve)
    cli("sweep", "--by", "harness")
    cli("sweep", "--thresholds", "1,2.5")  # off the stored grid: the rows path
    cli("sweep", "--thresholds", "1,2.5", "--policy", "router")  # ... without the variants: the narrow rows
    sessions = json.loads(cli("sessions", "--format", "json").stdout)
    cli("show", sessions["sessions"][0]["ref"], "--format", "json")
    cli("export", str(tmp_path / "out"))
    # the report of parquet outputs: their user_labels is a table, encoded for the variants (replay/user_labels_encode)
    parquet = runner.invoke(app, ["report", "--from-parquet", str(tmp_path / "out"), "--format", "json"])
    assert parquet.exit_code == 0, parquet.output
    unknown = runner.invoke(app, ["sql", "SELECT * FROM no_such_table", "--db", db])  # its hint lists the tables
    assert unknown.exit_code == 2 and "turn_boundaries" in unknown.stderr, unknown.stderr
    (logs / "export.json").write_text("", encoding="utf-8")  # a file emptied: its rows are removed
    cli("ingest", str(logs))
    cli("report", "--format", "json")  # one session changed: the stored bootstrap sums move (sweep_boot_delta_cells)
    cli("report", "--since", "2000-01-01", "--format", "json")  # a filter: the scope counted by it (scope_count)
    # a session without a stall removed: the incremental stall replay walks no round (replay/stall_replay_none)
    (logs / "codex" / "rollout.jsonl").write_text("", encoding="utf-8")
    cli("ingest", str(logs))
    cli("report", "--format", "json")
    cli("ingest", str(logs / "hermes"), "--input-format", "hermes_traj")  # a forced format (ingest/run_no_events)
    assert not api.open(db).events(limit=3).is_empty()
    con = connect(db)
    # a grown session's new row at the table's end, scanned in rowid ranges of 8 rows: the last range's sessions
    # (replay/scan_tail) and, as the first session comes back after its walk, those walked apart (replay/scan_gapped)
    con.execute(
        "INSERT INTO events SELECT * REPLACE (seq + 1 AS seq, event_id || '-grown' AS event_id) FROM events "
        "WHERE session_id = (SELECT session_id FROM events ORDER BY rowid LIMIT 1) "
        "QUALIFY seq = max(seq) OVER () LIMIT 1"
    )
    monkeypatch.setenv("STALLSCAN_SCAN_BATCH_ROWS", "8")
    # the [[background]] entries one statement each, as a replay matching more than BG_ROW_MATCH_MAX_CALLS calls
    # does (replay/stall_background_match; the sample's few calls go the rows path)
    monkeypatch.setattr(stalls, "BG_ROW_MATCH_MAX_CALLS", 0)
    replay_stalls(con, segmentation="fallback")  # turns without the boundary labels (API only)
    # the row-level stall figures (library functions; the report reads per-session cells instead, and
    # tests/functional/test_report_cells.py holds the two equal)
    summary_counts(con), silent_rates(con), signature_hits(con)
    con.close()
    expected = {str(p.relative_to(sql.queries_dir()).with_suffix("")) for p in sql.queries_dir().rglob("*.sql")}
    assert not expected - ran, f"query files no step ran: {sorted(expected - ran)}"
