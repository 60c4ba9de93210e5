"""Issue 23, "Counts that reconcile" outside the report: `ingest` names the population of each file count so
they add up to the files found and meet the report's corpus line ("events from N of M files"), and
`stallscan sessions` says what its columns count (misread is a share of the records that start a request,
not of the turns). On the real files where present, else on sample_logs.

Expected numbers come from the folder itself: its files (os.walk), their sizes (0 bytes: empty), the
corpus's own documentation and scripts by name (no transcripts), and a Cline task's
api_conversation_history.json, a JSON array in which every user-role message is one request to the model
(docs/formats.md, PROVENANCE of the real files: results and resumptions come back as user messages)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from tests.helpers import SAMPLES, real_root

# the corpus folders' own documentation and helper scripts: files that hold no transcript
NOT_TRANSCRIPTS = {"README.md", "PROVENANCE.md", "NOTES.md", "check_samples.py"}


@pytest.fixture(scope="module")
def corpus() -> Path:
    root = real_root()
    return root if root.is_dir() else SAMPLES  # (sample_logs when the real files are absent)


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args))
    return r.exit_code, r.stdout, r.stderr


def _summary(text: str) -> dict[str, int]:
    """The ingest summary's rows, label (indent kept) -> number."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^(\s*[a-z][a-z ()]*?)\s{2,}([\d,]+)$", line.rstrip())
        if m:
            rows[m.group(1).rstrip()] = int(m.group(2).replace(",", ""))
    return rows


def test_ingest_counts_name_their_population_and_reconcile(corpus, tmp_path):
    on_disk = [Path(d) / f for d, _, fs in os.walk(corpus) for f in fs]
    transcripts = [p for p in on_disk if p.name not in NOT_TRANSCRIPTS]
    empty = sum(1 for p in transcripts if p.stat().st_size == 0)
    db = str(tmp_path / "c.duckdb")
    code, _, err = run("ingest", str(corpus), "--db", db)
    assert code == 0, err
    rows = _summary(err)
    assert rows["files found"] == len(transcripts), err
    assert rows.get("files left out (see the note)", 0) == len(on_disk) - len(transcripts)
    assert rows.get("  empty", 0) == empty
    assert rows["  read this run"] == len(transcripts) - empty and rows["  unchanged since last ingest"] == 0
    found = rows["files found"]
    parts = ("  read this run", "  unchanged since last ingest", "  empty", "  unrecognised", "  unreadable")
    assert sum(rows.get(k, 0) for k in parts) == found
    assert rows["lines read"] >= rows["  skipped knowingly"] + rows["  rejected"]
    # the report's corpus line counts the same files: "events from N of M files"
    code, out, err = run("report", "--db", db, "--format", "json", "--bootstrap", "0")
    assert code == 0, err
    pop = json.loads(out)["corpus"]["population"]
    assert pop["files_in_database"] == found
    assert 0 < pop["files_with_events"] == rows["    with events"] <= rows["  read this run"]
    code, out, err = run("report", "--db", db, "--bootstrap", "0")
    assert f"events from {rows['    with events']:,} of {found:,} files" in out
    # --json: the old keys stay, the new ones carry the same numbers
    code, out, err = run("ingest", str(corpus), "--db", str(tmp_path / "j.duckdb"), "--json")
    d = json.loads(out)
    assert (d["files"], d["ingested"], d["unchanged"]) == (found, found - empty, 0)
    assert (d["empty"], d["files_with_events"]) == (empty, pop["files_with_events"])
    # again: every file is unchanged since the last ingest, none read, none holding a new event
    code, _, err = run("ingest", str(corpus), "--db", db)
    again = _summary(err)
    assert code == 0 and again["files found"] == again["  unchanged since last ingest"] == found
    assert again["  read this run"] == again["    with events"] == 0


def test_sessions_misread_is_a_share_of_the_requests(corpus, tmp_path, request, sample_ingested_file):
    db = str(tmp_path / "s.duckdb")  # the corpus ingested (the ingest is the test above's subject, not this one's)
    ingested = request.getfixturevalue("real_ingested_file") if corpus != SAMPLES else sample_ingested_file
    shutil.copy(ingested, db)
    code, out, err = run("sessions", "--db", db, "--json")
    assert code == 0, err
    rows = json.loads(out)["sessions"]
    for r in rows:
        assert 0 <= r["misread"] <= r["requests"], r
        assert r["silent"] <= r["turns"], r
    # a Cline task: every user-role message of its api_conversation_history.json starts a request; the real
    # one (mike4567) has 222 of them but 15 turns a person opened, and the router misreads 31 of the 222
    # (resumptions and tool results carrying a person's words: requests, not turns)
    (history,) = list(corpus.rglob("api_conversation_history.json"))
    users = sum(1 for m in json.loads(history.read_text()) if m["role"] == "user")
    (cline,) = [r for r in rows if r["harness"] == "cline_api"]
    assert cline["requests"] == users > 0
    code, out, err = run("report", "--db", db, "--format", "json", "--bootstrap", "0")
    boundaries = json.loads(out)["boundaries"]
    assert sum(r["requests"] for r in rows) == boundaries["records"]["requests"]
    assert sum(r["misread"] for r in rows) == boundaries["misread"]["turns"]["misread"]
    # the table says what each column counts
    code, out, err = run("sessions", "--db", db, "--harness", "cline_api")
    header = out.splitlines()[0]
    assert re.search(r"human turns\s+silent\s+requests\s+misread", header), header
    line = next(x for x in out.splitlines() if x.startswith(cline["ref"] + " "))
    assert re.search(rf"\b{cline['turns']:,}\s+{cline['silent']:,}\s+{users:,}\s+{cline['misread']:,}\b", line)
    assert "misread: of the requests" in err and "requests: user-role records that start" in err


def test_report_counts_a_session_once_across_harnesses(tmp_path, sample_ingested_file):
    """sample_logs/cline/1777073160794/ is one Cline task kept by Cline as two files of two formats, its
    api_conversation_history.json and its ui_messages.json (one task folder, one task id): the report's session
    total counts it once, as `sessions` lists it once, while each harness row counts it."""
    db = str(tmp_path / "s.duckdb")
    shutil.copy(sample_ingested_file, db)  # sample_logs ingested (`stallscan ingest sample_logs`), not replayed
    code, out, err = run("report", "--db", db, "--format", "json", "--bootstrap", "0")
    assert code == 0, err
    corpus = json.loads(out)["corpus"]
    code, out, err = run("sessions", "--db", db, "--limit", "0", "--json")
    assert code == 0, err
    listed = {s["session_id"] for s in json.loads(out)["sessions"]}
    assert corpus["totals"]["sessions"] == len(listed)
    by_harness = {h["harness"]: h["sessions"] for h in corpus["by_harness"]}
    assert sum(by_harness.values()) == len(listed) + 1  # the one task, under cline_api and cline_ui
