"""The hand-labelled LabAgents endings and the public positives stay well-formed and keyed to the real files.

tests/truth/labagents_labels.csv labels the last row of each of the 198 LabAgents runs by reading it
(tests/truth/README.md says how). Nothing here judges a label: the checks are that every run has exactly one
label, that its key (file, 1-based line, text hash) names the run's last row in the raw file and the event
stallscan ingests there, and that the labels the raw rows themselves decide agree with them: a last row with
`labagents_harness_error` is `error`, an assistant row with no text is `empty`, and nothing else is. The
hash is computed from the raw row with plain `json`, as tests/real/intent_truth.py does it.
public_positives.csv and shape_cases.csv are checked for their columns and class names only.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.real.intent_truth import TRUTH, text_sha

DATA = ROOT.parent / "shared" / "data" / "labagents"
LABELS = ("plan", "wait", "genuine", "question", "empty", "error")
CLASS = re.compile(r"^([1-6]|other:[a-z_]+)$")


def _csv(name: str) -> list[dict]:
    with open(TRUTH / name, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[int, dict]]:
    """relative path -> (line number of the last row, the last row), read from the raw files."""
    if not DATA.is_dir():
        pytest.skip(f"LabAgents logs not found at {DATA}")
    out = {}
    for path in sorted(DATA.glob("tier*/*/*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        out[str(path.relative_to(DATA))] = (len(lines), json.loads(lines[-1]))
    return out


def test_every_run_has_one_label_on_its_last_row(runs):
    labels = _csv("labagents_labels.csv")
    assert len(runs) == 198  # PROVENANCE.md: 198 files
    assert Counter(r["file"] for r in labels) == Counter(list(runs))
    for r in labels:
        line, row = runs[r["file"]]
        assert int(r["line"]) == line, r["file"]
        assert r["text_sha"] == text_sha(row.get("content")), r["file"]
        assert r["model"], r["file"]


def test_labels_the_raw_rows_decide(runs):
    """error <=> harness-error row; empty <=> assistant row with no text; classes only on plan/wait rows."""
    for r in _csv("labagents_labels.csv"):
        _, row = runs[r["file"]]
        assert r["label"] in LABELS, r
        harness_error = bool(row.get("labagents_harness_error"))
        assert (r["label"] == "error") == harness_error, r["file"]
        no_text = row.get("role") == "assistant" and not (row.get("content") or "").strip()
        assert (r["label"] == "empty") == no_text, r["file"]
        assert bool(r["class"]) == (r["label"] in ("plan", "wait")), r["file"]
        assert not r["class"] or CLASS.match(r["class"]), r["class"]
        assert r["reason"].strip(), r["file"]
    # PROVENANCE.md: 9 empty final answers, 7 harness failures
    counts = Counter(r["label"] for r in _csv("labagents_labels.csv"))
    assert (counts["empty"], counts["error"]) == (9, 7)


def test_labels_name_the_ingested_events(runs):
    """Each labelled model reply is exactly one assistant event with no tool call at that file and line."""
    from stallscan.ingest.run import ingest_paths
    from stallscan.store.db import connect

    con = connect(":memory:")
    ingest_paths(con, [str(DATA)], fmt="auto")
    rows = con.execute("SELECT file, line, text, n_tool_calls FROM events WHERE role = 'assistant'").fetchall()
    con.close()
    found = Counter(
        (str(Path(f).resolve().relative_to(DATA.resolve())), int(n), text_sha(t)) for f, n, t, c in rows if c == 0
    )
    for r in _csv("labagents_labels.csv"):
        if r["label"] != "error":
            assert found[(r["file"], int(r["line"]), r["text_sha"])] == 1, r["file"]


def test_public_positives_and_shape_cases_are_well_formed():
    pub = _csv("public_positives.csv")
    assert list(pub[0]) == [
        "repo",
        "path_or_issue",
        "commit_or_date",
        "line_or_comment",
        "model",
        "harness",
        "class",
        "shape",
    ]
    for p in pub:
        assert all(p[k].strip() for k in p), p
        assert "/" in p["repo"] and CLASS.match(p["class"]), p
    cases = _csv("shape_cases.csv")
    assert list(cases[0]) == ["id", "language", "label", "shape", "text", "source"]
    assert len({c["id"] for c in cases}) == len(cases)
    for c in cases:
        assert c["label"] in ("plan", "genuine", "handoff") and c["text"].strip() and c["source"].strip(), c
