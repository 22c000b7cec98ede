"""The flags of one invocation: which of them cannot be combined, and the parsing of the ones
that carry structured values (`--tool-arg KEY=VALUE`, `--grant PERM`, `-o KEY=VALUE`,
`--keep-alive`, `--think [LEVEL]`)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from .. import model_options as _model_options
from ..errors import OptionError, ToolArgError, ToolError

if TYPE_CHECKING:
    from ..types import Session

__all__ = [
    "MODEL_OPTIONS",
    "STDIN_PROMPT",
    "THINK_LEVELS",
    "Options",
    "check_conflicts",
    "check_values",
    "optional_values",
    "parse_grants",
    "parse_keep_alive",
    "parse_model_options",
    "parse_size",
    "parse_think",
    "parse_tool_args",
    "session_name",
    "shown",
]

#: The prompt argument that means "read the prompt from stdin, and only from stdin".
STDIN_PROMPT = "-"

#: The patterns below are compiled on first use (`re` caches them): compiling all five at
#: import cost every command, `--version` included, about 0.5 ms.
_ARG_KEY = r"[A-Za-z_][A-Za-z0-9_-]*"
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
    max_input: str | None
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
    option: tuple[str, ...]
    keep_alive: str | None
    schema: str | None
    schema_show: bool
    think: str | None
    no_think: bool
    hide_thinking: bool
    attach: tuple[str, ...]
    usage: bool
    extract: bool
    extract_last: bool
    no_log: bool = False
    #: `--continue` from a logged one-shot turn: that turn as the session to go on from.
    seed: Session | None = None
    #: `--continue`: the logged turn's model and backend, which the turn goes on with unless
    #: --model (or a backend flag, variable or file) says otherwise (`ore.config.settle`).
    carried: tuple[str, str | None] | None = None
    #: -f/--file PATH (repeatable; '-': stdin): files sent as context blocks.
    file: tuple[str, ...] = ()
    #: --no-config: ignore $ORE_HOME/config.toml.
    no_config: bool = False
    #: The variable holding the key for the config file's address (`ore.config.settle`).
    key_env: str | None = None
    #: Every value the config decided, with its origin (`ore.config.Settings`), for --dry-run.
    settings: Any = None

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


def session_name(_ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """A click callback for a session name given on the command line (one, or several): a name
    no session can have (`a/b`, `..x`) is a usage error (exit 2), found before anything runs."""
    from ..errors import OreError
    from ..turn import valid_name

    for name in () if value is None else (value,) if isinstance(value, str) else value:
        try:
            valid_name(name)
        except OreError as exc:
            raise click.BadParameter(str(exc), param=param) from None
    return value


def check_conflicts(o: Options) -> None:
    """Upstream's invalid combinations (and this project's additions) are usage errors, exit 2."""
    repl_flag = "--interactive" if o.interactive else "--conversational"
    extract = "--extract-last" if o.extract_last else ("--extract" if o.extract else "")
    extracting = bool(extract)
    stdin_image = "-" in (o.attach or ())
    replay = o.artifact_in is not None and o.prompt is None
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
        (o.think is not None and o.no_think, "--think and --no-think"),
        (o.extract and o.extract_last, "--extract and --extract-last"),
        (extracting and o.as_json, f"{extract} and --json"),
        (extracting and o.schema is not None, f"{extract} and --schema"),
        (extracting and o.artifact_out == "-", f"{extract} and --artifact-out -"),
        (extracting and o.stream is True, f"{extract} and --stream"),
        (o.schema is not None and o.stream is True, "--schema and --stream"),
        (stdin_image and o.repl, "--attach - and a REPL mode"),
        (stdin_image and o.artifact_in == "-", "--attach - and --artifact-in -"),
        (replay and bool(o.attach), "--attach and a replay (it re-reads the recorded images)"),
        (stdin_image and o.stdin_prompt, "--attach - and the prompt '-' (both read stdin)"),
        (stdin_image and o.no_stdin, "--attach - and --no-stdin"),
        ("-" in (o.file or ()) and o.no_stdin, "-f - and --no-stdin"),
        ("-" in (o.file or ()) and o.stdin_prompt, "-f - and the prompt '-' (both read stdin)"),
        ((o.file or ()).count("-") > 1, "-f - and another -f - (stdin is read once)"),
        ("-" in (o.file or ()) and o.artifact_in == "-", "-f - and --artifact-in -"),
        ("-" in (o.file or ()) and stdin_image, "-f - and --attach - (both read stdin)"),
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
    if o.max_input is not None:
        parse_size(o.max_input, "--max-input")
    if o.artifact_in is not None and not o.artifact_in.strip():
        raise click.BadParameter("give a path, or '-' for stdin", param_hint="--artifact-in")
    if o.artifact_out is not None and not o.artifact_out.strip():
        raise click.BadParameter("give a path, or '-' for stdout", param_hint="--artifact-out")
    if o.schema_show and o.schema is None:
        raise click.UsageError("--schema-show needs --schema SCHEMA.")
    if stdin_image and o.prompt is None and not o.dry_run:
        raise click.UsageError(
            "with --attach -, stdin holds the image: give the prompt as an argument."
        )


def check_values(o: Options) -> None:
    """The structured values (-o, --tool-arg, --tool, --grant, --think, --keep-alive) checked
    before anything runs, so each mistake is a usage error (exit 2) with the valid choices."""
    try:
        parse_model_options(o.option)
        parse_keep_alive(o.keep_alive)
        parse_think(o.think, o.no_think)
        args = parse_tool_args(o.tool_arg)
        if o.grant:
            parse_grants(o.grant)
        if o.tool is not None:
            _check_tool(o.tool, args)
    except (OptionError, ToolError) as exc:
        raise click.UsageError(exc.message) from None


def _check_tool(name: str, args: dict[str, str]) -> None:
    from ..tools import TOOL_REGISTRY

    tool = TOOL_REGISTRY.get(name)
    if tool is None:
        known = ", ".join(sorted(TOOL_REGISTRY))
        raise click.UsageError(f"unknown tool {shown(name)} for --tool: use one of {known}")
    known_args = tool.schema.get("properties", {})
    if tool.schema.get("additionalProperties") is False:
        for key in args:
            if key not in known_args:
                accepted = ", ".join(sorted(known_args)) or "none"
                raise click.UsageError(
                    f"--tool-arg {key}: tool '{name}' has no argument {key!r} "
                    f"(it accepts: {accepted})"
                )


def parse_tool_args(values: Iterable[str]) -> dict[str, str]:
    """`--tool-arg KEY=VALUE` values as a dict; the value may itself contain '='.

    :raises ToolArgError: (exit 2) for a value without '=', an invalid key, or a repeated key.
    """
    args: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep:
            raise ToolArgError(f"--tool-arg {shown(value)} is not KEY=VALUE")
        if not re.fullmatch(_ARG_KEY, key):
            raise ToolArgError(
                f"--tool-arg {shown(value)} has an invalid key: use letters, digits, '_' or '-'"
            )
        if key in args:
            raise ToolArgError(f"--tool-arg {key} is given more than once: give it once")
        args[key] = rest
    return args


def shown(value: str) -> str:
    """A value quoted back in an error line, cut to a readable length."""
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


_SIZE = r"\s*([0-9]+)\s*([KMG]?)(?:i?B)?\s*"


def parse_size(value: str, flag: str = "--max-size") -> int:
    """`--max-size`, `--max-input`: a whole number of bytes, with an optional K, M or G suffix
    (powers of 1024). `flag` names the flag in a usage error."""
    match = re.fullmatch(_SIZE, value, re.IGNORECASE)
    if match is None or int(match.group(1)) == 0:
        raise click.BadParameter(
            f"{shown(value)} is not a size: use bytes, or a number with K, M or G (e.g. 64M)",
            param_hint=flag,
        )
    return int(match.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[match.group(2).upper()]


# -- turn controls: -o KEY=VALUE, --keep-alive, --think ------------------------------------------

#: `-o KEY=VALUE`: the model options ORE knows (`ore.model_options`, which also checks an
#: artifact's recorded options), as (type, lowest, highest).
MODEL_OPTIONS = _model_options.MODEL_OPTIONS
#: `--think LEVEL`; a bare `--think` is "on".
THINK_LEVELS = ("low", "medium", "high")


def parse_model_options(values: Iterable[str]) -> dict[str, Any]:
    """`-o KEY=VALUE` values, typed and range-checked (`stop` collected into a tuple).

    :raises OptionError: (exit 2) for a value without '=', an unknown key (the known ones are
        listed), a wrong type or range, or a key other than `stop` given twice.
    """
    options: dict[str, Any] = {}
    for value in values or ():
        key, sep, raw = value.partition("=")
        key = key.strip()
        if not sep:
            raise OptionError(f"-o {shown(value)} is not KEY=VALUE (e.g. -o temperature=0.2)")
        if key not in MODEL_OPTIONS:
            raise OptionError(_model_options.unknown_option(key, f"-o {shown(key)}"))
        if key == "stop":
            if not raw:
                raise OptionError("-o stop= needs a text to stop at")
            options["stop"] = (*options.get("stop", ()), raw)
            continue
        if key in options:
            raise OptionError(f"-o {key} is given more than once: give it once")
        options[key] = _typed(key, raw)
    return options


def _typed(key: str, raw: str) -> int | float:
    kind = MODEL_OPTIONS[key][0]
    what = "a whole number" if kind is int else "a number"
    try:
        number: int | float = int(raw.strip()) if kind is int else float(raw.strip())
    except ValueError:
        number = math.nan
    if isinstance(number, float) and not math.isfinite(number):
        raise OptionError(f"-o {key}={shown(raw)[1:-1]}: {key} must be {what}")
    return _model_options.check_model_option(key, number, f"-o {key}={raw.strip()}")


def parse_keep_alive(value: str | None) -> str | int | None:
    """`--keep-alive`: whole seconds (`0` unloads after the answer, `-1` keeps it loaded), or a
    Go duration as Ollama takes it (`5m`, `1h30m`, `-1m`); whole seconds are sent as a number.

    :raises OptionError: (exit 2) for anything else.
    """
    if value is None:
        return None
    from ..config import KEEP_ALIVE_HINT, keep_alive_value  # the config file's check too

    found = keep_alive_value(value)
    if found is None:
        raise OptionError(f"--keep-alive {shown(value)} {KEEP_ALIVE_HINT}")
    return found


def parse_think(think: str | None, no_think: bool) -> bool | str | None:
    """`--think` (True), `--think LEVEL`, `--no-think` (False), or neither (None)."""
    if no_think:
        return False
    if think is None:
        return None
    if think == "on":
        return True
    if think not in THINK_LEVELS:
        raise OptionError(f"--think {shown(think)} is not a level: use {', '.join(THINK_LEVELS)}")
    return think


def optional_values(args: list[str]) -> list[str]:
    """`args` with a bare `--think` made explicit (`--think=on`) unless a level follows it, so
    `ore --think "a question"` does not take the question for a level."""
    fixed: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            return fixed + args[i:]
        following = args[i + 1] if i + 1 < len(args) else None
        fixed.append("--think=on" if arg == "--think" and following not in THINK_LEVELS else arg)
    return fixed
