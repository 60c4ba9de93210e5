"""stallscan: replay AI-agent transcripts through stall and turn-boundary logic."""

__version__ = "0.1.0"
SCHEMA_VERSION = 2  # bump when rows an older version wrote would be wrong now (see db.MIGRATIONS)
