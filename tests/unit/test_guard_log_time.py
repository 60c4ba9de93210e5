"""The guard log's record time is one clock reading: its seconds and milliseconds never come from two
readings (across a second boundary the record was stamped up to a second early, before the tool call it
followed, so the bound's count of logged blocks missed it)."""

from __future__ import annotations

from stallscan.guard import log as guard_log
from stallscan.guard.transcript import epoch


def test_record_time_is_one_reading(monkeypatch):
    readings = iter([1_700_000_000.999, 1_700_000_001.001])  # a second boundary between two readings
    monkeypatch.setattr("stallscan.guard.log.time.time", lambda: next(readings))
    rec = guard_log.record({"decision": "block"})
    assert epoch(rec["time"]) == 1_700_000_000.999
