"""Command-line interface (the only package that imports typer; everything else is core).

`app` is the `stallscan` console script. Each command lives in its own module, on that module's own
`app` (a typer.Typer); COMMANDS names the module, and the root group (_Lazy) imports only the module of
the command being run (`--version` imports none, `--help` all, to list them). Command modules import
cli.common and cli.options, never this module: the imports run one way."""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperArgument, TyperGroup

from stallscan.store.version import __version__


# Arguments are named by their metavar (SESSION, QUERY, [PATH]...); typer would add a type label such as
# <str> after it, which says nothing to a user. (Options show their metavar or <a|b> choices already.)
def _no_type_label(self: TyperArgument, ctx: object) -> None:
    return None


setattr(TyperArgument, "display_type_rich", _no_type_label)  # noqa: B010  (mypy: no method assignment)


# command -> the module of stallscan.cli that registers it, in the order `--help` lists them
COMMANDS = {
    "ingest": "ingest_cmd",
    "sql": "ingest_cmd",
    "report": "report_cmd",
    "export": "export_cmd",
    "boundaries": "boundaries_cmd",
    "sweep": "sweep_cmd",
    "stalls": "stalls_cmd",
    "show": "show_cmd",
    "sessions": "sessions_cmd",
    "guard": "guard_cmd",
    "spark": "spark_cmd",
    "check": "check_cmd",
}


def _usage_error(exc: Exception, where: str = "stallscan") -> None:
    """A click usage error: printed and exited here; anything else returns (the caller re-raises it)."""
    from .usage import fail, is_click_error

    if is_click_error(exc):
        fail(exc, where)


class _Lazy(TyperGroup):
    """The root group: a command's module is imported when the command is looked up (run, or listed by
    --help), and its typer registration turned into the click command then."""

    # usage errors (parsing the root's arguments, or a command's, or raised by a command) leave as
    # stallscan's `error:` + `hint:` lines (stallscan.cli.usage), not click's usage block
    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().make_context(*args, **kwargs)
        except Exception as exc:
            _usage_error(exc)
            raise

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:
            _usage_error(exc, f"{ctx.command_path} {ctx.invoked_subcommand or ''}".strip())
            raise

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            from typer.main import get_command_from_info, get_command_name, get_group_from_info

            own = importlib.import_module(f"{__name__}.{COMMANDS[cmd_name]}").app  # the module's typer app
            short, markup = app.pretty_exceptions_short, app.rich_markup_mode
            for info in own.registered_commands:
                if cmd_name == (info.name or get_command_name(getattr(info.callback, "__name__", ""))):
                    self.commands[cmd_name] = get_command_from_info(
                        info, pretty_exceptions_short=short, rich_markup_mode=markup
                    )
            for group in own.registered_groups:
                if group.name == cmd_name:
                    self.commands[cmd_name] = get_group_from_info(
                        group, pretty_exceptions_short=short, rich_markup_mode=markup, suggest_commands=True
                    )
            if cmd_name in self.commands:
                from .usage import refuse_options_as_values

                refuse_options_as_values(self.commands[cmd_name])
        return self.commands.get(cmd_name)


app = typer.Typer(
    cls=_Lazy,
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help: choices as <a|b>, metavars as written, no <bool>/<str> type labels
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Replay AI-agent transcripts through stall and turn-boundary logic.",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"stallscan {__version__}")
        raise typer.Exit(0)


@app.callback(invoke_without_command=True)
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, expose_value=False, help="Print the version and exit."
    ),
) -> None:
    pass
