"""stallscan: replay AI-agent transcripts through stall and turn-boundary logic.

Notebook use: `s = stallscan.open("stallscan.duckdb")` (see stallscan.api); loaded on first use, so
`import stallscan` (and the CLI) does not pay for polars.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
SCHEMA_VERSION = 2  # bump when rows an older version wrote would be wrong now (see db.MIGRATIONS)

_EXPORTS = {"open": "stallscan.api", "Stallscan": "stallscan.api"}

__all__ = ["SCHEMA_VERSION", "Stallscan", "__version__", "open"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


_GUARD_SUBCOMMANDS = ("install", "uninstall", "status", "--help", "-h")


def run() -> None:
    """The `stallscan` console script. `stallscan guard [--option ...]` (the Stop hook) runs
    stallscan.guard.hook straight away, before the CLI (typer, rich, duckdb) is imported: the hook runs at
    every turn end and must start fast. Everything else goes to the typer app in stallscan.cli."""
    import sys

    argv = sys.argv[1:]
    if argv == ["--version"]:  # answered before typer builds every command (typer 0.29 loads pydantic for that)
        sys.stdout.write(f"stallscan {__version__}\n")
        return
    if argv[:1] == ["ingest"] and _ingest_unchanged(argv[1:]):
        return
    if argv[:1] == ["guard"] and not any(a in _GUARD_SUBCOMMANDS for a in argv[1:2]):
        from stallscan.guard.hook import main

        sys.exit(main(argv[1:]))
    if argv[:1] == ["report"]:  # an unchanged report is printed again before the CLI (and duckdb) load
        from stallscan.report import cache

        if cache.serve(argv[1:]):
            return
        cache.ARGV = argv[1:]
    from stallscan.cli import run as cli_run

    cli_run()


def _ingest_unchanged(argv: list[str]) -> bool:
    """`stallscan ingest` with every file unchanged: print what the CLI would print, without loading it
    (typer and pydantic build every command's options first). False: the CLI runs the command."""
    from stallscan.ingest.quick import unchanged_run

    done = unchanged_run(argv)
    if done is None:
        return False
    res, out = done
    if out == "json":
        import json
        import sys

        sys.stdout.write(json.dumps(res.as_dict(), indent=2) + "\n")
        return True
    import os

    from rich.console import Console

    from stallscan.report.render import ingest_summary

    width = os.environ.get("COLUMNS", "")
    err = Console(stderr=True, soft_wrap=True, width=int(width) if width.isdigit() else None)
    if res.searched:
        err.print("no PATH given; found these usual log folders: " + ", ".join(res.searched), highlight=False)
    err.print(ingest_summary(res))
    return True
