"""Shared fixtures: a pinned environment and small helpers to write transcripts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stallscan.store.db import connect

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"

os.environ.setdefault("TZ", "UTC")
os.environ["NO_COLOR"] = "1"
os.environ["COLUMNS"] = "120"


@pytest.fixture
def con():
    c = connect(":memory:")
    yield c
    c.close()


def claude_line(kind: str, n: int, session: str = "s1", **extra) -> str:
    """One Claude Code record: a user prompt or an assistant text reply, with a unique uuid."""
    ts = f"2026-01-01T00:00:{n:02d}.000Z"
    if kind == "user":
        rec = {
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
