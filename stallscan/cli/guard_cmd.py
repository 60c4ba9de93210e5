"""`stallscan guard` (the Stop hook itself) and `stallscan guard install | uninstall | status`.

The hook's own entry is `stallscan-guard` (or `python -m stallscan.guard`, which `guard install` writes):
it loads no typer, rich or duckdb (a hook runs at every turn end and must start fast). `stallscan guard
[--mode ...]` without a subcommand hands its arguments to the same stallscan.guard.hook.main.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from stallscan.store.errors import StallscanError

from ._lazy import Console, default_db_path
from .common import _guard, out_format
from .options import Json

app = typer.Typer()  # this module's commands (stallscan.cli.COMMANDS names it)


class _HookGroup(TyperGroup):
    """`stallscan guard ARGS`: ARGS not naming a subcommand (none, or the hook's own options) run the hook."""

    def invoke(self, ctx: Any) -> Any:
        args = [*ctx._protected_args, *ctx.args]
        if args and args[0] not in self.commands:
            from stallscan.guard.hook import main

            ctx.exit(main(args))
        return super().invoke(ctx)


guard_app = typer.Typer(
    cls=_HookGroup,
    help="Live guard: a Stop hook for Claude Code and Codex that re-prompts a silent plan-as-answer ending.",
    invoke_without_command=True,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
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
    log_path = log or _default_log()
    for h in _harness(claude, codex):
        ch = gi.install(gi.target(h, scope, project), mode, log_path)
        con.print(f"{h}: {ch.action} {ch.target.path}" + (f" ({ch.note})" if ch.note else ""), highlight=False)
        if ch.diff:
            sys.stdout.write(ch.diff)
        if h == "codex":
            con.print(
                "codex: hooks need `[features] hooks = true` in config.toml (older releases: codex_hooks), and Codex asks to trust a new hook",
                highlight=False,
            )
    if scope == "project":  # the log must not end up in the project's commits
        note = gi.ignore_log(project, log_path)
        if note:
            con.print(f"log: {note}", highlight=False)


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
    if scope == "project" and not any(
        gi.status(gi.target(h, scope, project)).get("installed") for h in gi.HARNESS_NAMES
    ):
        note = gi.unignore_log(project)
        if note:
            con.print(f"log: {note}", highlight=False)


@guard_app.command("status")
@_guard
def status_cmd(
    claude: bool = ClaudeOpt,
    codex: bool = CodexOpt,
    scope: str = ScopeOpt,
    project: str | None = ProjectOpt,
    out: str = typer.Option("table", "--format", metavar="<table|json>", help="Output format."),
    as_json: Json = False,
) -> None:
    """What is installed where, in which mode, and what the guard log has recorded."""
    from stallscan.guard import install as gi

    out = out_format(out, as_json, ("table", "json"))
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
            f"{r['harness']} ({r['scope']}): installed in {r['file']} for {', '.join(r['events']) or 'no event'}, "
            f"mode {r['mode'] or 'observe (the default)'}, "
            f"log {r['log'] or 'stallscan-guard.jsonl beside the database (the default)'}",
            highlight=False,
        )
        if r.get("log_records"):
            dec = ", ".join(f"{k} {v}" for k, v in sorted(r["log_decisions"].items()))
            con.print(f"  log: {r['log_records']} decisions ({dec}); last at {r['log_last']}", highlight=False)
        elif r.get("log"):
            con.print("  log: no decision recorded yet", highlight=False)
