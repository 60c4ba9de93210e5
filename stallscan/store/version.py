"""The package version and the database schema version (no imports: read by store.db, the CLI's --version
and the build backend, pyproject.toml's [tool.hatch.version])."""

__version__ = "0.1.0"
SCHEMA_VERSION = 2  # bump when rows an older version wrote would be wrong now (see schema_check.MIGRATIONS)
