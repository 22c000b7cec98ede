"""From the flags of one invocation to the parts of an `ore.turn.TurnRequest`: the server, the
system prompt, the checked context plan, the conversation and the controls. Each mode
(`ore.cli.turns`, `ore.cli.conversation`) builds its requests from these and nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .options import Options, parse_grants, parse_model_options, parse_size, parse_tool_args

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..config import Setting
    from ..turn import ContextPlan, Server
    from ..turn.files import ContextFile
    from ..turn_types import TurnOptions

__all__ = [
    "combine_prompt",
    "configured",
    "context_of",
    "controls_of",
    "files_apply",
    "files_of",
    "input_limit",
    "server_of",
    "system_of",
    "with_origins",
]


#: `ore.backends.select.BACKENDS`, spelled out so that no backend is imported to check a name.
_BACKENDS = ("ollama", "openai", "deepseek")
#: Where a backend the user chose comes from (an artifact's is not the user's: `route`; the
#: logged turn `--continue` goes on from is the user's own).
_CHOSEN = ("flag", "environment", "file", "log")


def _check_address(address: Setting, backend: str) -> None:
    """An address given by a flag or its environment variable that no turn could use is a
    usage error (exit 2) naming where it came from, before anything is sent; the file's is the
    file's error. The value is not repeated: it may hold a user and password."""
    if address.value is None or address.origin not in ("flag", "environment"):
        return
    from ..config import address_problem
    from ..errors import OptionError

    why = address_problem(address.value, backend)
    if why is not None:
        like = "127.0.0.1:11434" if backend == "ollama" else "http://127.0.0.1:8080/v1"
        verb = "give" if address.origin == "flag" else "set"
        raise OptionError(
            f"{address.source} is not an address ORE can use ({why}); {verb} it like {like}"
        )


def configured(o: Options, *, replay: bool = False, recorded: str | None = None) -> Options:
    """The flags with the config file's defaults filled in by the one precedence rule
    (`ore.config.settle`: flag > environment > file > built-in), aliases resolved.

    A replay or chain (`replay`) takes only the server from the file (and the alias of a
    `--model`): the artifact's recorded model, system prompt and controls are not overridden
    by defaults, as they are not by ORE_MODEL. `recorded` is its artifact's backend: the file's
    address and key are for the file's backend, never for the one an artifact chose.

    :raises ConfigError: the file is broken (one line naming it and the line).
    """
    from ..config import load_config, settle
    from .console import warn

    files_apply(o)

    def unusable(why: str) -> None:
        # The turn log lives there too: one line says both (`logging_enabled` then keeps out).
        without = "the config file" if o.no_log else "the config file and the turn log"
        warn(f"{why}; going on without {without}")

    config = load_config(ignore=o.no_config, on_unusable_home=unusable)
    if replay:  # the file's turn defaults are not the artifact's: only its server counts
        from dataclasses import replace

        config = replace(config, model=None, system=None, keep_alive=None, options={})
    found = settle(
        config,
        model=o.model,
        backend=o.backend,
        base_url=o.base_url,
        keep_alive=o.keep_alive,
        system=o.system,
        options=parse_model_options(o.option),
        recorded=recorded,
        continued=o.carried,
    )
    chosen = found.backend
    if chosen.value is not None and chosen.value not in _BACKENDS:
        from ..errors import ConfigError, OptionError

        where = f"{chosen.source}={chosen.value}"
        if chosen.origin == "file":
            raise ConfigError(
                f"config file {chosen.source}: backend '{chosen.value}' is not one of "
                f"{', '.join(_BACKENDS)}; fix it (ore config set backend NAME) or run with "
                "--no-config",
                path=chosen.source,
            )
        if chosen.origin == "artifact":  # the artifact's content, not a flag: exit 1
            from ..errors import ArtifactError

            raise ArtifactError(
                f"the artifact records backend '{chosen.value}', which is not one of "
                f"{', '.join(_BACKENDS)}; give the backend to use with --backend"
            )
        raise OptionError(
            f"{where} is not a backend (as --backend); choose one of {', '.join(_BACKENDS)}"
        )
    _check_address(found.base_url, chosen.value or "ollama")
    server_only = {
        "backend": found.backend.value if found.backend.origin in _CHOSEN else None,
        "base_url": found.base_url.value if found.base_url.origin in ("flag", "file") else None,
        "key_env": found.api_key_env.value,
        "settings": found,
    }
    if replay:
        return o._replace(model=config.resolve_alias(o.model), **server_only)
    flagged = {value.partition("=")[0].strip() for value in o.option}
    defaults = (
        [
            f"{key}={item}"
            for key, value in found.options.value.items()
            if key not in flagged
            for item in (value if isinstance(value, list | tuple) else [value])
        ]
        if found.options.value
        else []
    )
    _check_file_options(defaults, found.options.source)
    return o._replace(
        model=found.model.value,
        keep_alive=found.keep_alive.value,
        system=found.system.value,
        option=(*defaults, *o.option),
        **server_only,
    )


def files_apply(o: Options) -> None:
    """`-f` goes with one new turn (a chain from an artifact is one): with a replay or a REPL
    it is a usage mistake, said before any artifact or file is read."""
    from ..errors import OptionError

    if o.file and o.repl:
        raise OptionError(
            "-f sends files with one new turn, not with a REPL (-i, -c, a session flag); "
            "ask in one turn"
        )
    if o.file and o.artifact_in is not None and o.prompt is None:
        raise OptionError(
            "-f goes with a new prompt: a replay (--artifact-in with no prompt) sends the "
            "recorded turn as it was, its -f files' text included; give a prompt to chain "
            "from it with -f"
        )


def _check_file_options(defaults: list[str], source: str) -> None:
    """The file's default options, checked as `-o` is but reported as the file's mistake (one
    line naming it and --no-config): the user typed no `-o`."""
    from ..errors import ConfigError, OptionError

    for default in defaults:
        try:
            parse_model_options([default])
        except OptionError as exc:
            key = default.partition("=")[0]
            reason = exc.message.removeprefix(f"-o {default}: ").removeprefix("-o ")
            raise ConfigError(
                f"config file {source}: options.{key}: {reason}; fix it "
                "(ore config edit) or run with --no-config",
                path=source,
            ) from None


def with_origins(o: Options, shown: dict[str, Any]) -> dict[str, Any]:
    """A dry run's preview with where each configurable value came from (flag, environment,
    file or default: `ore.config.settle`), so the config file's effect is visible."""
    if o.settings is None:
        return shown
    settings = o.settings.to_dict()
    # The address as the destination shows it: never a user, password or query it carried.
    settings["base_url"]["value"] = shown.get("destination", {}).get("address")
    if o.artifact_in is not None and o.model is None and shown.get("model") is not None:
        # A replay or chain sends the artifact's model unless --model is given (ORE_MODEL and
        # the file's default do not override it): say so, not the setting left unused.
        settings["model"] = {
            "value": shown["model"],
            "origin": "artifact",
            "source": "--artifact-in",
        }
    return {**shown, "settings": settings}


def server_of(o: Options, recorded: tuple[str, str | None] | None = None) -> Server:
    """The server the flags (and environment) name; `recorded` is an artifact's backend."""
    from ..turn import Server

    return Server(
        backend=o.backend,
        base_url=o.base_url,
        timeout=o.timeout,
        max_seconds=o.max_time,
        max_bytes=parse_size(o.max_size) if o.max_size else None,
        recorded=recorded,
        key_env=o.key_env,
    )


def files_of(o: Options) -> tuple[ContextFile, ...]:
    """The `-f` files, read and checked (regular files only, size-capped each and together,
    text; one named twice is sent once) before any request or session file; `-` reads stdin
    once (then it is not the prompt)."""
    if not o.file:
        return ()
    from ..turn.files import read_context_files
    from .console import note

    # '-' given twice, or with --attach -, is a usage mistake (`check_conflicts`).
    return read_context_files(o.file, _stdin_file, note)


def _stdin_file(limit: int) -> bytes:
    """`-f -`: at most `limit` bytes of stdin, when something is piped in."""
    import sys

    from ..errors import OreError

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None or sys.stdin.isatty():
        raise OreError("-f - reads a file from stdin, but nothing is piped in")
    data: bytes = stream.read(limit)
    return data


def system_of(flag: str | None) -> str | None:
    """The persona (data in ore/prompts/aya.txt), or --system TEXT (`''`: none at all)."""
    if flag is not None:
        return flag or None
    from ..turn import persona

    return persona()


def context_of(o: Options) -> ContextPlan:
    """The context flags checked once (exit 2 for a malformed one, 1 for a refusal), before
    any model is called or any session file is created."""
    from ..turn import ContextPlan, plan_context

    if not (o.tool or o.skill or o.route or o.grant or o.skill_resource):
        return ContextPlan()  # a plain turn: nothing to check, nothing more to import
    return plan_context(
        tool=o.tool,
        tool_args=parse_tool_args(o.tool_arg) if o.tool is not None else None,
        grants=parse_grants(o.grant),
        skill=o.skill,
        skill_resources=o.skill_resource,
        route_threshold=o.route_threshold if o.route else None,
    )


def controls_of(
    o: Options, server: Server, recorded: Mapping[str, Any] | None = None
) -> TurnOptions:
    """The turn's controls (`ore.cli.controls.turn_options`) for the kind of server named."""
    from ..turn import backend_kind
    from .controls import turn_options

    return turn_options(o, backend_kind(server), recorded)


def combine_prompt(prompt: str | None, piped: str | None) -> str:
    """The user message: the argument, the piped text, or both (instruction, blank line, text)."""
    parts = [p.strip("\n") for p in (prompt, piped) if p is not None and p.strip()]
    return "\n\n".join(parts)


def prompt_and_piped(o: Options) -> tuple[str, str | None]:
    """The user message of a single turn, and the text read from stdin for it (None: none),
    by the rule in `ore.cli.stdin` (`-` as the argument: stdin alone)."""
    from .console import note
    from .stdin import prompt_stdin

    # Then stdin holds the image or the -f file, not the prompt.
    image_on_stdin = "-" in (o.attach or ()) or "-" in (o.file or ())
    piped = (
        None
        if image_on_stdin
        else prompt_stdin(o.prompt, no_stdin=o.no_stdin, note=note, limit=input_limit(o))
    )
    return combine_prompt(None if o.stdin_prompt else o.prompt, piped), piped


def input_limit(o: Options) -> int:
    """The most stdin a turn's prompt takes (`--max-input`, `ORE_MAX_INPUT`); the REPL's
    piped lines too."""
    from .stdin import MAX_INPUT

    return parse_size(o.max_input, "--max-input") if o.max_input else MAX_INPUT
