"""From the flags of one invocation to the parts of an `ore.turn.TurnRequest`: the server, the
system prompt, the checked context plan, the conversation and the controls. Each mode
(`ore.cli.turns`, `ore.cli.conversation`) builds its requests from these and nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .options import Options, parse_grants, parse_size, parse_tool_args

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..turn import ContextPlan, Server
    from ..turn_types import TurnOptions

__all__ = ["combine_prompt", "context_of", "controls_of", "server_of", "system_of"]


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
    )


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
    from .stdin import MAX_INPUT, prompt_stdin

    image_on_stdin = "-" in (o.attach or ())  # then stdin holds the image, not text
    limit = parse_size(o.max_input, "--max-input") if o.max_input else MAX_INPUT
    piped = (
        None
        if image_on_stdin
        else prompt_stdin(o.prompt, no_stdin=o.no_stdin, note=note, limit=limit)
    )
    return combine_prompt(None if o.stdin_prompt else o.prompt, piped), piped
