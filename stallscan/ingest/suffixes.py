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

# names a walk opens to look at (the first SNIFF_BYTES): taken only when they hold records of a known format,
# e.g. an `opencode run --format json` stream saved as run.log (issue 25). Other names are left out and
# counted by suffix.
SNIFF_SUFFIXES = (".log", ".txt", ".out")
SNIFF_BYTES = 8192
