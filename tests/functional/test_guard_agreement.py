"""The guard and the replay agree: on every real file and on sample_logs, the guard's verdict on each turn's
final reply equals the replay's round_kind for that reply.

Claude Code and Codex files go through the whole hook path: the transcript cut after the reply's last line
(what the file holds when the Stop hook runs), plus the hook JSON with `last_assistant_message` = the
reply's text; the guard reads the tail itself. Files of other formats (no Stop hook there) feed the guard's
judge the session's events up to the reply with the same text. The replay runs with the fallback turn
segmentation, the one the guard can compute from a tail (the origin labels need the whole file in SQL).

Replies whose round_kind the replay decided from what came AFTER them (a harness nudge or an interrupt
marker following the reply) cannot be known at stop time; they are counted apart, not compared.
`pytest -s tests/functional/test_guard_agreement.py` prints the counts per file.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.guard_helpers import SAMPLES, _real_root, _report, agreement


@pytest.mark.parametrize("every", [False, True], ids=["turn_ends", "every_text_round"])
def test_guard_agrees_with_replay_on_sample_logs(tmp_path, every, sample_ingested_file):
    res = agreement([SAMPLES], tmp_path, every, ingested=sample_ingested_file)  # (the session's ingest)
    _report(res, SAMPLES)
    assert not res["_bad"], sorted(res["_bad"])[:20]
    assert sum(c["agree"] for f, c in res.items() if f != "_bad") > 0


@pytest.mark.parametrize("every", [False, True], ids=["turn_ends", "every_text_round"])
def test_guard_agrees_with_replay_on_every_real_file(tmp_path, every, request):
    root = _real_root()
    if not root.is_dir():
        pytest.skip(f"real transcripts not found at {root}: set STALLSCAN_REAL_DATA")
    res = agreement([root], tmp_path, every, ingested=request.getfixturevalue("real_ingested_file"))
    _report(res, root)
    assert not res["_bad"], sorted(res["_bad"])[:20]
    agreed: Counter[str] = Counter()
    for f, c in res.items():
        if f != "_bad":
            agreed.update(c)
    print("total", dict(agreed))
    assert agreed["agree"] > 300
    # most of them went through the whole hook path (transcript tail + hook JSON), from many files
    hooked = [f for f, c in res.items() if f != "_bad" and c["via_hook"]]
    assert agreed["via_hook"] > 250 and len(hooked) >= 35, json.dumps(hooked)
