"""End to end (ingest -> labels -> boundaries -> sweep) on a generated corpus whose optimum is known:
automatic prompts follow final replies within AUTO_MAX seconds, people after HUMAN_MIN or more, so every
threshold in (max automatic gap, min human gap] is error-free and the smallest grid point above the
largest automatic gap is the answer."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

from stallscan.ingest.run import ingest_paths
from stallscan.sweep.core import run_sweep, thresholds_grid

STEP = 0.05


def _corpus(path, seed=3, sessions=40):
    rng = random.Random(seed)
    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    auto_gaps, human_gaps = [], []
    with open(path, "w", encoding="utf-8") as fh:
        for s in range(sessions):
            t = t0 + timedelta(hours=s)

            def put(role, content, **kw):
                fh.write(
                    json.dumps(
                        {
                            "session_id": f"s{s}",
                            "role": role,
                            "content": content,
                            "timestamp": t.isoformat().replace("+00:00", "Z"),
                            **kw,
                        }
                    )
                    + "\n"
                )

            put("user", "Please summarise the build log.")
            for _ in range(rng.randint(2, 6)):
                t += timedelta(seconds=rng.uniform(2, 20))
                put("assistant", "Here is what I found: the build passes.", finish_reason="stop")
                if rng.random() < 0.5:
                    gap = round(rng.uniform(0.05, 1.2), 3)
                    auto_gaps.append(gap)
                    t += timedelta(seconds=gap)
                    put("user", "[System: Continue now. Finish the remaining steps.]")
                else:
                    gap = round(rng.uniform(2.5, 90), 3)
                    human_gaps.append(gap)
                    t += timedelta(seconds=gap)
                    put("user", "Thanks, now check the tests too.")
    return auto_gaps, human_gaps


def test_recommended_threshold_is_the_known_optimum(con, tmp_path):
    auto_gaps, human_gaps = _corpus(tmp_path / "gen.jsonl")
    ingest_paths(con, [str(tmp_path / "gen.jsonl")])
    res = run_sweep(con, thresholds_grid(0, 30, STEP), bootstrap=200, seed=1)
    rec = res.recommendation[("router", "all")]
    grid = thresholds_grid(0, 30, STEP)
    optimum = min(t for t in grid if t > max(auto_gaps))  # smallest error-free threshold
    last = max(t for t in grid if t <= min(human_gaps))  # largest error-free threshold
    assert max(auto_gaps) < optimum <= min(human_gaps)
    assert rec["plateau"] == [optimum, last]
    # the router's 2 s is kept when it is error-free here, else the nearest error-free threshold is set
    assert rec["threshold"] == (2.0 if optimum <= 2.0 <= last else optimum if optimum > 2.0 else last)
    assert rec["cost"] == 0 and rec["n_gap_decided"] == len(auto_gaps) + len(human_gaps)
    lo, hi = rec["interval"]
    assert lo <= rec["threshold"] <= hi <= min(human_gaps)
