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

# every other name a walk opens to look at (the first SNIFF_BYTES): taken when they hold a record of a known
# format, e.g. an `opencode run --format json` stream saved as run.log (issue 25) or a transcript without a
# suffix. Detection is by content; the suffixes above only spare the sniff. At most SNIFF_MAX_FILES files are
# sniffed per run (a walk through a source tree stays cheap); the rest are left out unopened. Files left
# out are counted by suffix.
SNIFF_BYTES = 8192
SNIFF_MAX_FILES = 10_000
