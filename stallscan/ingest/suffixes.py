"""File names a directory walk picks up (files named explicitly are always read). A module of its own, with
no imports, read by discover."""

WALK_SUFFIXES = (
    ".jsonl",
    ".json",
    ".ndjson",
    ".traj",
    ".jsonl.gz",
    ".jsonl.zst",
    ".json.gz",
    ".json.zst",
    ".ndjson.gz",
    ".ndjson.zst",
    ".aider.chat.history.md",
    ".aider.input.history",
)  # aider's two files (not every .md)
