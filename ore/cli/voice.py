"""click's usage errors in ORE's one voice (`in_one_voice`): flags unquoted, a mistyped flag
that names a model option pointed at `-o`, a value from the environment named by its
variable, a command a group does not have named with the closest ones, a bad `--think LEVEL`
named with its levels. Loaded only when a usage error is raised: start-up never pays for it."""

from __future__ import annotations

import re
from typing import Any

import click

from .options import THINK_LEVELS, shown

__all__ = ["in_one_voice"]

_QUOTED_FLAG = r"'(-{1,2}[A-Za-z0-9][A-Za-z0-9_-]*)'"


def _model_option_like(flag: str) -> str | None:
    """The model option (`-o KEY=VALUE`) a mistyped flag names or nearly names, ORE's own name
    for another tool's (`--max-tokens`: num_predict); None when it looks like none."""
    from ..model_options import MODEL_OPTIONS, OTHER_NAMES

    folded = flag.lstrip("-").lower().replace("-", "_")
    if folded in OTHER_NAMES:
        return OTHER_NAMES[folded]
    import difflib  # only for a mistake: start-up stays cheap

    near = difflib.get_close_matches(folded, list(MODEL_OPTIONS), n=1, cutoff=0.8)
    return near[0] if near else None


def in_one_voice(exc: click.ClickException, args: list[str]) -> None:
    """Make a usage error of click's speak as ORE's own do: flags unquoted, a value from the
    environment named by its variable, a bad `--think LEVEL` named with its levels."""
    said: Any = exc  # click types `message` and `possibilities` Final; ORE rewords them once
    if isinstance(exc, click.NoSuchOption):
        said.message, said.possibilities = exc.format_message(), None  # "Did you mean --x?"
        option = _model_option_like(exc.option_name)
        if option is not None:  # `--temprature 1`: a model option typed as a flag
            said.message = (
                f"No such option {exc.option_name}: model options go through -o, "
                f"e.g. -o {option}=VALUE"
            )
    said.message = re.sub(_QUOTED_FLAG, r"\1", exc.message)
    if not isinstance(exc, click.UsageError) or exc.ctx is None:
        return
    unknown = re.match(_NO_COMMAND, exc.message)
    if unknown is not None and isinstance(exc.ctx.command, click.Group):
        said.message = _no_command(exc.ctx, unknown.group(2))
        no_such: Any = getattr(click.exceptions, "NoSuchCommand", ())  # click 8.4 and later
        if isinstance(exc, no_such):
            said.possibilities = None  # click would add its own "Did you mean"
        return
    if isinstance(exc, click.BadParameter):
        param = exc.param or _param_hinted(exc.ctx, exc.param_hint)
        if isinstance(param, click.Option):  # an argument keeps click's name for it: its metavar
            flags = " / ".join(param.opts)
            source = exc.ctx.get_parameter_source(param.name or "")
            envvar = getattr(param, "envvar", None)
            if source is click.core.ParameterSource.ENVIRONMENT and isinstance(envvar, str):
                exc.param_hint = f"the environment variable {envvar} (for {flags})"
            elif exc.param_hint is None:
                exc.param_hint = flags
        return
    if exc.message.startswith("Got unexpected extra argument"):
        level = _bad_think_level(args)
        if level is not None:
            said.message = (
                f"--think {shown(level)} is not a level: use {', '.join(THINK_LEVELS)}, or "
                "--think alone before the prompt"
            )


#: click's words for a command a group does not have (`ore config shw`).
_NO_COMMAND = r"No such command (['\"])(.*)\1\."


def _no_command(ctx: click.Context, name: str) -> str:
    """A command a group does not have, in ORE's voice: the closest and all of them."""
    import difflib

    assert isinstance(ctx.command, click.Group)
    commands = ctx.command.list_commands(ctx)
    near = difflib.get_close_matches(name, commands, n=2, cutoff=0.6)
    hint = f" did you mean {' or '.join(near)}?" if near else ""
    return f"no command '{name}' in {ctx.command_path};{hint} commands: {', '.join(commands)}"


def _param_hinted(ctx: click.Context, hint: object) -> click.Parameter | None:
    if not isinstance(hint, str):
        return None
    return next((p for p in ctx.command.params if hint in p.opts), None)


def _bad_think_level(args: list[str]) -> str | None:
    """The word after a bare `--think` when it is not a level (`--think extreme "q"`)."""
    for i, arg in enumerate(args[:-1]):
        if arg == "--":
            return None
        if arg == "--think=on" and i + 1 < len(args):
            following = args[i + 1]
            if not following.startswith("-") and following not in THINK_LEVELS:
                return following
    return None
