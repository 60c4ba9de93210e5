"""typer/click usage errors (unknown option or command, missing argument, bad value) in the shape of every
other error: `error: ...` and `hint: ...` on stderr, exit 2 (docs/errors.md), instead of click's usage
block. The root group (cli._Lazy) catches what click raises while it parses the arguments or invokes a
command, and hands it here."""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import typer

from stallscan.store.errors import EXIT_USAGE, StallscanError

# click's exception classes, from wherever this typer takes click (its own vendored copy, or click)
_X = sys.modules[typer.BadParameter.__module__]


def is_click_error(exc: BaseException) -> bool:
    return isinstance(exc, _X.ClickException)


def fail(exc: Any, where: str = "stallscan") -> NoReturn:
    """Print a click exception as stallscan's error and hint, then exit with its code. `where`: the
    command being parsed, for an error that carries no context (an option missing its value)."""
    no_args = getattr(_X, "NoArgsIsHelpError", None)
    if no_args is not None and isinstance(exc, no_args):  # a bare group: its help, as click prints it
        exc.show()
        sys.exit(exc.exit_code)
    from .common import _fail

    try:
        message, hint = explain(exc, where)
    except Exception:  # a click this code does not know: its own words, in the same shape
        message, hint = _first(_lower(exc.format_message())), f"{where} -h lists the options and arguments"
    code = EXIT_USAGE if isinstance(exc, _X.UsageError) else getattr(exc, "exit_code", 1)
    try:
        _fail(StallscanError(message, hint=hint, exit_code=code))
    except typer.Exit as done:
        sys.exit(done.exit_code)


def explain(exc: Any, where: str = "stallscan") -> tuple[str, str]:
    """The one-line message and the hint for a click exception."""
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else where
    help_hint = f"{where} -h lists the options and arguments"
    if isinstance(exc, _X.NoSuchOption):
        near = sorted(exc.possibilities or [])
        message = f"{where}: no such option {exc.option_name}"
        return message, (f"did you mean {' or '.join(near)}? " if near else "") + help_hint
    if isinstance(exc, _X.MissingParameter):
        param = exc.param
        kind = exc.param_type or (param.param_type_name if param is not None else "parameter")
        name = _name(param, ctx) if param is not None else ""
        return f"{where}: missing {kind} {name}".rstrip(), help_hint
    if isinstance(exc, _X.BadParameter):
        param = exc.param
        name = exc.param_hint if isinstance(exc.param_hint, str) else _name(param, ctx) if param is not None else ""
        return f"{where}: invalid value for {name}: {_first(exc.message)}", help_hint
    if (
        ctx is not None
        and _is_group(ctx.command)
        and str(exc.message).startswith(("No such command", "Missing command"))
    ):
        names = list(ctx.command.list_commands(ctx))
        word = exc.message.split("'")[1] if exc.message.count("'") >= 2 else ""
        from .common import closest

        near = closest(word, names)
        return _first(_lower(exc.message)), (f"did you mean {' or '.join(near)}? " if near else "") + (
            "commands: " + ", ".join(names)
        )
    message = _first(_lower(exc.format_message()))
    return (message if ctx is not None or where == "stallscan" else f"{where}: {message}"), help_hint


def _name(param: Any, ctx: Any) -> str:
    if getattr(param, "param_type_name", "") == "option":
        return str(max(param.opts, key=len))
    try:
        return str(param.get_error_hint(ctx)).strip("'\"")  # an argument: its metavar (QUERY)
    except Exception:  # an older click's signature: the name is enough
        return str(param.name).upper()


def _is_group(cmd: Any) -> bool:
    return hasattr(cmd, "list_commands")


def _first(text: str) -> str:
    return text.strip().splitlines()[0].rstrip(".") if text.strip() else "usage error"


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:]


def refuse_options_as_values(cmd: Any) -> None:
    """An option that takes a value takes the next word whatever it is, so `report --db --full` would write a
    database named `--full` and drop the flag. After a command's arguments are parsed, a value (of an option
    with one) that is exactly one of the command's own options is a usage error instead (exit 2); a file
    whose name starts with '-' is still reachable as ./-name. Applied to a group's commands as well."""
    make = cmd.make_context

    def make_context(info_name: Any, args: Any, parent: Any = None, **extra: Any) -> Any:
        ctx = make(info_name, args, parent=parent, **extra)
        names = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | set(ctx.help_option_names)
        for param in cmd.params:
            if getattr(param, "param_type_name", "") != "option" or param.is_flag or param.count:
                continue
            value = ctx.params.get(param.name)
            for v in value if isinstance(value, (list, tuple)) else [value]:
                text = os.fspath(v) if isinstance(v, (str, os.PathLike)) else None
                if text is not None and text.split("=", 1)[0] in names:
                    opt = max(param.opts, key=len)
                    named = (
                        param.metavar in ("FILE", "DIR", "PATH") or "path" in str(getattr(param, "type", "")).lower()
                    )
                    raise _X.BadParameter(
                        f"{text} is one of this command's options, not a value: put the value right after {opt}"
                        + (f" (a file named {text}: ./{text})" if named else ""),
                        ctx=ctx,
                        param=param,
                    )
        return ctx

    cmd.make_context = make_context
    for sub in getattr(cmd, "commands", {}).values():
        refuse_options_as_values(sub)
