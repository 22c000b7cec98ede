"""The flags of one invocation: which of them cannot be combined, and the parsing of the ones
that carry structured values (`--tool-arg KEY=VALUE`, `--grant PERM`)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import NamedTuple

import click

from ..errors import ToolArgError, ToolError

__all__ = [
    "STDIN_PROMPT",
    "Options",
    "check_conflicts",
    "parse_grants",
    "parse_size",
    "parse_tool_args",
]

#: The prompt argument that means "read the prompt from stdin, and only from stdin".
STDIN_PROMPT = "-"

_ARG_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_MAX_SHOWN = 120  # characters of a bad value quoted back in an error line


class Options(NamedTuple):
    """Every flag of one invocation, as parsed (a NamedTuple: immutable, and cheaper to import
    than dataclasses on the start-up path of `ore --help`)."""

    prompt: str | None
    no_stdin: bool
    model: str | None
    system: str | None
    list_models: bool
    interactive: bool
    conversational: bool
    save_session: str | None
    resume_session: str | None
    continue_session: bool
    history: int | None
    list_sessions: bool
    stream: bool | None
    verbose: bool
    as_json: bool
    raw: bool
    dry_run: bool
    timeout: float | None
    max_time: float | None
    max_size: str | None
    backend: str | None
    base_url: str | None
    tool: str | None
    tool_arg: tuple[str, ...]
    grant: tuple[str, ...]
    list_tools: bool
    route: bool
    route_threshold: float
    skill: str | None
    skill_resource: tuple[str, ...]
    list_skills: bool
    artifact_out: str | None
    artifact_in: str | None
    artifact_version: str

    @property
    def session_name(self) -> str | None:
        """The session whose history the turn continues: --resume-session, else --save-session
        (`--continue` names one once resolved into `resume_session`)."""
        return self.resume_session or self.save_session

    @property
    def session_flag(self) -> bool:
        """Whether a session flag was given: --save-session, --resume-session or --continue."""
        return self.session_name is not None or self.continue_session

    @property
    def save_to(self) -> str | None:
        """The session every turn is saved to: --save-session, else --resume-session (which
        keeps saving to the session it resumed, as upstream's does)."""
        return self.save_session or self.resume_session

    @property
    def forks(self) -> bool:
        """`--resume-session A --save-session B`: continue A into a new session B, A untouched."""
        return (
            self.resume_session is not None
            and self.save_session is not None
            and self.resume_session != self.save_session
        )

    @property
    def stdin_prompt(self) -> bool:
        """The prompt is `-`: the prompt is stdin, and only stdin."""
        return self.prompt == STDIN_PROMPT

    @property
    def repl(self) -> bool:
        """A REPL runs for -i and -c, and for a session flag without a prompt (upstream: session
        flags imply conversational mode; lines then come from the terminal or the pipe)."""
        if self.interactive or self.conversational:
            return True
        return self.session_flag and self.prompt is None


def check_conflicts(o: Options) -> None:
    """Upstream's invalid combinations (and this project's additions) are usage errors, exit 2."""
    repl_flag = "--interactive" if o.interactive else "--conversational"
    pairs: list[tuple[bool, str]] = [
        (o.interactive and o.conversational, "--interactive and --conversational"),
        (o.interactive and o.save_session is not None, "--interactive and --save-session"),
        (o.interactive and o.resume_session is not None, "--interactive and --resume-session"),
        (o.continue_session and o.interactive, "--continue and --interactive"),
        (o.continue_session and o.save_session is not None, "--continue and --save-session"),
        (o.continue_session and o.resume_session is not None, "--continue and --resume-session"),
        (o.as_json and o.stream is True, "--json and --stream"),
        (o.as_json and o.repl, f"--json and {repl_flag if not o.session_flag else 'a REPL'}"),
        (o.route and o.tool is not None, "--route and --tool"),
        (o.artifact_in is not None and o.repl, "--artifact-in and a REPL mode"),
        (o.artifact_in is not None and o.tool is not None, "--artifact-in and --tool"),
        (o.artifact_in is not None and o.route, "--artifact-in and --route"),
        (o.artifact_in is not None and o.skill is not None, "--artifact-in and --skill"),
        (o.artifact_in is not None and o.session_flag, "--artifact-in and a session flag"),
        (o.artifact_out is not None and o.stream is True, "--artifact-out and --stream"),
        (o.artifact_out is not None and o.repl, "--artifact-out and a REPL mode"),
        (o.artifact_out == "-" and o.as_json, "--artifact-out - and --json"),
        (o.dry_run and o.repl, "--dry-run and a REPL mode"),
        (o.dry_run and o.artifact_out is not None, "--dry-run and --artifact-out"),
        (o.no_stdin and o.stdin_prompt, "--no-stdin and the prompt '-' (read stdin)"),
        (o.no_stdin and o.repl, "--no-stdin and a REPL mode (it reads its lines from stdin)"),
        (o.stdin_prompt and o.repl, "the prompt '-' (read stdin) and a REPL mode"),
        (o.stdin_prompt and o.artifact_in == "-", "the prompt '-' and --artifact-in -"),
        (o.no_stdin and o.artifact_in == "-", "--no-stdin and --artifact-in -"),
    ]
    for conflict, what in pairs:
        if conflict:
            raise click.UsageError(f"{what} cannot be used together.")
    if o.tool_arg and o.tool is None:
        raise click.UsageError("--tool-arg needs --tool NAME.")
    if o.skill_resource and o.skill is None:
        raise click.UsageError("--skill-resource needs --skill NAME.")
    if o.history is not None and not (o.session_flag or o.conversational):
        raise click.UsageError(
            "--history N needs a conversation: --resume-session, --save-session, --continue or -c."
        )
    if not 0.0 <= o.route_threshold <= 1.0:
        raise click.BadParameter("must be between 0 and 1", param_hint="--route-threshold")
    if o.timeout is not None and not (math.isfinite(o.timeout) and o.timeout > 0):
        raise click.BadParameter("must be a positive number of seconds", param_hint="--timeout")
    if o.max_time is not None and not (math.isfinite(o.max_time) and o.max_time > 0):
        raise click.BadParameter("must be a positive number of seconds", param_hint="--max-time")
    if o.max_size is not None:
        parse_size(o.max_size)
    if o.artifact_in is not None and not o.artifact_in.strip():
        raise click.BadParameter("give a path, or '-' for stdin", param_hint="--artifact-in")
    if o.artifact_out is not None and not o.artifact_out.strip():
        raise click.BadParameter("give a path, or '-' for stdout", param_hint="--artifact-out")


def parse_tool_args(values: Iterable[str]) -> dict[str, str]:
    """`--tool-arg KEY=VALUE` values as a dict; the value may itself contain '='.

    :raises ToolArgError: (exit 2) for a value without '=', an invalid key, or a repeated key.
    """
    args: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep:
            raise ToolArgError(f"--tool-arg {_shown(value)} is not KEY=VALUE")
        if not _ARG_KEY.fullmatch(key):
            raise ToolArgError(
                f"--tool-arg {_shown(value)} has an invalid key: use letters, digits, '_' or '-'"
            )
        if key in args:
            raise ToolArgError(f"--tool-arg {key} is given more than once: give it once")
        args[key] = rest
    return args


def _shown(value: str) -> str:
    text = value if len(value) <= _MAX_SHOWN else value[:_MAX_SHOWN] + "..."
    return repr(text)


def parse_grants(values: Iterable[str]) -> frozenset[str]:
    """The granted permissions from `--grant` values; an unknown one is an error (exit 1).

    Repeats are harmless. Matching is exact (no case folding): a permission is a name to type
    deliberately, not to guess.
    """
    from ..tools.gate import PERMISSIONS

    granted = set()
    for value in values:
        if value not in PERMISSIONS:
            raise ToolError(
                f"unknown permission {value!r} for --grant: use one of {', '.join(PERMISSIONS)}"
            )
        granted.add(value)
    return frozenset(granted)


_SIZE = re.compile(r"\s*([0-9]+)\s*([KMG]?)(?:i?B)?\s*", re.IGNORECASE)


def parse_size(value: str) -> int:
    """`--max-size`: a whole number of bytes, with an optional K, M or G suffix (powers of 1024)."""
    match = _SIZE.fullmatch(value)
    if match is None or int(match.group(1)) == 0:
        raise click.BadParameter(
            f"{value!r} is not a size: use bytes, or a number with K, M or G (e.g. 64M)",
            param_hint="--max-size",
        )
    return int(match.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[match.group(2).upper()]
