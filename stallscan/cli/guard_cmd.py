"""`stallscan guard` (the Stop hook itself) and `stallscan guard install | uninstall | status`.

The hook path never comes here when run as `stallscan guard [--mode ...]`: stallscan.run (the console script) hands it to
stallscan.guard.hook before typer is imported (a hook must start fast). This group serves the subcommands
and `stallscan guard` run through `app` (tests' CliRunner).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from stallscan.store.errors import StallscanError

from . import _guard, app
from ._lazy import Console, default_db_path

guard_app = typer.Typer(
    help="Live guard: a Stop hook for Claude Code and Codex that re-prompts a silent plan-as-answer ending.",
    invoke_without_command=True,
)
app.add_typer(guard_app, name="guard")


def _harness(claude: bool, codex: bool) -> list[str]:
    if claude == codex and not claude:
        raise StallscanError("say which harness", hint="stallscan guard install --claude (or --codex, or both)")
    return [h for h, on in (("claude", claude), ("codex", codex)) if on]


ClaudeOpt = typer.Option(False, "--claude", help="Claude Code settings.json (hooks.Stop and SubagentStop).")
CodexOpt = typer.Option(False, "--codex", help="Codex hooks.json (hooks.Stop and SubagentStop).")
ScopeOpt = typer.Option("user", "--scope", help="user (~/.claude, ~/.codex) or project (./.claude, ./.codex).")
ProjectOpt = typer.Option(None, "--project", help="Project directory for --scope project (default: cwd).")


@guard_app.callback()
def guard_main(ctx: typer.Context) -> None:
    """Without a subcommand: run as the hook (hook JSON on stdin; see docs/guard.md)."""
    if ctx.invoked_subcommand is None:
        from stallscan.guard.hook import main

        raise typer.Exit(main([]))


def _default_log() -> str:
    return str(Path(default_db_path()).resolve().parent / "stallscan-guard.jsonl")


@guard_app.command("install")
@_guard
def install_cmd(
    claude: bool = ClaudeOpt,
    codex: bool = CodexOpt,
    scope: str = ScopeOpt,
    project: str | None = ProjectOpt,
    mode: str = typer.Option("observe", "--mode", help="observe (decide and log only) or enforce (block)."),
    log: str | None = typer.Option(None, "--log", help="Guard log (default: stallscan-guard.jsonl beside the db)."),
) -> None:
    """Write the guard's hook entries (idempotent; the first install keeps a byte copy; prints the diff)."""
    from stallscan.guard import install as gi

    con = Console()
    for h in _harness(claude, codex):
        ch = gi.install(gi.target(h, scope, project), mode, log or _default_log())
        con.print(f"{h}: {ch.action} {ch.target.path}" + (f" ({ch.note})" if ch.note else ""), highlight=False)
        if ch.diff:
            sys.stdout.write(ch.diff)
        if h == "codex":
            con.print(
                "codex: hooks need `[features] hooks = true` in config.toml (older releases: codex_hooks), and Codex asks to trust a new hook",
                highlight=False,
            )


@guard_app.command("uninstall")
@_guard
def uninstall_cmd(
    claude: bool = ClaudeOpt, codex: bool = CodexOpt, scope: str = ScopeOpt, project: str | None = ProjectOpt
) -> None:
    """Remove exactly what install wrote (the original bytes come back when the file is unchanged since)."""
    from stallscan.guard import install as gi

    con = Console()
    for h in _harness(claude, codex):
        ch = gi.uninstall(gi.target(h, scope, project))
        con.print(f"{h}: {ch.action} {ch.target.path}" + (f" ({ch.note})" if ch.note else ""), highlight=False)
        if ch.diff:
            sys.stdout.write(ch.diff)


@guard_app.command("status")
@_guard
def status_cmd(
    claude: bool = ClaudeOpt,
    codex: bool = CodexOpt,
    scope: str = ScopeOpt,
    project: str | None = ProjectOpt,
    out: str = typer.Option("table", "--format", help="table or json."),
) -> None:
    """What is installed where, in which mode, and what the guard log has recorded."""
    from stallscan.guard import install as gi

    hs = [h for h, on in (("claude", claude), ("codex", codex)) if on] or ["claude", "codex"]
    rows = [gi.status(gi.target(h, scope, project)) for h in hs]
    if out == "json":
        sys.stdout.write(json.dumps(rows, indent=1) + "\n")
        return
    con = Console()
    for r in rows:
        if r.get("error"):
            con.print(f"{r['harness']} ({r['scope']}): {r['file']}: {r['error']}", highlight=False)
            continue
        if not r["installed"]:
            con.print(f"{r['harness']} ({r['scope']}): not installed ({r['file']})", highlight=False)
            continue
        con.print(
            f"{r['harness']} ({r['scope']}): installed in {r['file']} for {', '.join(r['events'])}, "
            f"mode {r['mode']}, log {r['log']}",
            highlight=False,
        )
        if r.get("log_records") is not None:
            dec = ", ".join(f"{k} {v}" for k, v in sorted(r["log_decisions"].items())) or "none"
            con.print(f"  log: {r['log_records']} decisions ({dec}); last {r['log_last']}", highlight=False)
