"""What an ingest run did (`IngestResult`), shared by the planner, the batch writer and the run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class IngestResult:
    files: int = 0  # files considered
    ingested: int = 0  # files read (new, grown or rewritten)
    unchanged: int = 0  # files skipped because nothing changed
    unrecognized: list[str] = field(default_factory=list)  # paths whose format was not recognised
    empty: int = 0  # 0-byte files (new or changed since the last ingest): nothing to read
    files_with_events: int = 0  # files this run read that gave at least one event
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    # (path, status, rows removed): files read before, now empty or in no format: their old rows are gone
    emptied: list[tuple[str, str, int]] = field(default_factory=list)
    sessions: int = 0  # sessions touched by this run
    events: int = 0  # events written by this run
    lines: int = 0  # lines read by this run
    skipped: dict[str, int] = field(default_factory=dict)  # kind -> lines knowingly skipped
    rejects: int = 0
    pending: int = 0  # truncated last lines left for the next ingest
    bytes: int = 0
    seconds: float = 0.0
    searched: list[str] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)  # suffix -> files a directory walk did not take
    left_out_unopened: int = 0  # of those, files not even sniffed (discover's cap on files opened)
    # --input-format forced: files read in that format that gave no event (every line skipped or rejected)
    forced_no_events: list[str] = field(default_factory=list)
    # drift: records of a known format in a shape no reader knows, per (format, tool version, shape)
    unknown_shapes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def mb_per_s(self) -> float:
        return self.bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "ingested": self.ingested,
            "unchanged": self.unchanged,
            "unrecognized": self.unrecognized,
            "empty": self.empty,
            "files_with_events": self.files_with_events,
            "unreadable": [list(u) for u in self.unreadable],
            "emptied": [{"path": p, "status": s, "rows_removed": n} for p, s, n in self.emptied],
            "sessions": self.sessions,
            "events": self.events,
            "lines": self.lines,
            "skipped": dict(sorted(self.skipped.items())),
            "rejects": self.rejects,
            "pending": self.pending,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "mb_per_s": round(self.mb_per_s, 1),
            "searched": self.searched,
            "left_out_by_suffix": dict(sorted(self.left_out.items())),
            "left_out_unopened": self.left_out_unopened,
            "forced_no_events": self.forced_no_events,
            "unknown_shapes": self.unknown_shapes,
        }
