"""One ORE turn as a library call: `run_turn(request) -> TurnResult`.

The chain every turn goes through, in order, written once: refuse an unwritable artifact path,
gather the context (route, activate the skill, run the gated tool), choose the server and the
model, execute (the core's one reasoner call), check the answer (empty, cut, schema), append
it to the saved session, build and write the artifact. Nothing is printed and nothing of click
or rich is imported: what a person should see arrives through the callbacks and the result.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ContextTooLong
from .context import gather
from .request import Conversation, Server, TurnRequest

if TYPE_CHECKING:
    from ..artifacts import ExecutionArtifact
    from ..backends import Backend
    from ..core import Turn
    from ..turn_types import Reasoner, RoutingDecision, TurnContext, TurnOptions
    from ..types import Session
    from .result import TurnResult

__all__ = [
    "available_models",
    "backend_kind",
    "choose_model",
    "close",
    "connect",
    "preview",
    "recorded_controls",
    "recorded_turn_options",
    "refusal",
    "replay_request",
    "run_turn",
]


def connect(server: Server | None = None) -> Backend:
    """The backend `server` names (unset values from the environment); nothing is sent yet."""
    server = server if server is not None else Server()
    from ..backends import DEFAULT_LIMITS, Limits, choose_backend

    name, url = server.recorded if server.recorded is not None else (None, None)
    limits = Limits(
        max_seconds=server.max_seconds or DEFAULT_LIMITS.max_seconds,
        max_bytes=server.max_bytes or DEFAULT_LIMITS.max_bytes,
    )
    return choose_backend(
        server.backend,
        server.base_url,
        timeout=server.timeout,
        limits=limits,
        recorded_name=name,
        recorded_url=url,
    )


def choose_model(model: str | None, backend: Backend) -> str:
    """`model`, else ORE_MODEL, else the backend's default (its model list asked only then)."""
    from ..backends import model_for

    return model_for(model, backend)


def available_models(server: Server | None = None) -> tuple[list[str], str | None]:
    """The server's models and the one a turn would pick by default.

    :raises NoModels: when the server has none.
    """
    from ..backends.select import default_model, no_models

    backend = connect(server)
    try:
        models = backend.list_models()
    finally:
        close(backend)
    if not models:
        raise no_models(backend.address, backend.name)
    return models, default_model(models)


def refusal(kind: str, controls: TurnOptions) -> str | None:
    """Why the kind of server `kind` (`backend_kind`) cannot honour `controls` (e.g. `num_ctx`
    on an OpenAI-compatible server), or None; known before anything is built or asked."""
    from ..backends.select import backend_refusal

    return backend_refusal(kind, controls)


def backend_kind(server: Server) -> str:
    """The kind of server a turn goes to ("ollama", "openai", a preset), asking nothing."""
    from ..backends.select import backend_name

    return backend_name(server.backend, server.recorded[0] if server.recorded else None)


def requested_model(model: str | None) -> str | None:
    """The model the caller named, or ORE_MODEL; None when only the server could say."""
    from ..backends.select import requested_model as named

    return named(model)


def recorded_controls(parent: ExecutionArtifact, prompt: str | None = None) -> Mapping[str, Any]:
    """The controls a replay of `parent` sends again (its recorded options, schema, thinking,
    images), in their JSON form; empty for a chain, which is a new turn."""
    from ..artifacts import plan_turn

    return plan_turn(parent, prompt).controls


def recorded_turn_options(recorded: Mapping[str, Any]) -> TurnOptions:
    """A replayed artifact's recorded controls as `TurnOptions`, through the checks the command
    line makes: options as `-o` checks them, `keep_alive` a duration or seconds, `think` a bool
    or a level, `schema` an object. An artifact is data from anywhere: a bad field is an
    `OptionError` naming it. Images are not re-read here (the recording holds only their hashes;
    the command line re-reads and checks the files)."""
    from ..errors import OptionError
    from ..model_options import check_model_options
    from ..turn_types import NO_TURN_OPTIONS, TurnOptions

    if not recorded:
        return NO_TURN_OPTIONS
    where = "the artifact's input.{}"
    keep_alive = recorded.get("keep_alive")
    if keep_alive is not None and (
        isinstance(keep_alive, bool) or not isinstance(keep_alive, str | int)
    ):
        raise OptionError(f"{where.format('keep_alive')} must be a duration or a number of seconds")
    think = recorded.get("think")
    if think is not None and not isinstance(think, bool) and think not in ("low", "medium", "high"):
        raise OptionError(f"{where.format('think')} must be true, false, low, medium or high")
    schema = recorded.get("schema")
    if schema is not None and not isinstance(schema, Mapping):
        raise OptionError(f"{where.format('schema')} must be a JSON Schema object")
    return TurnOptions(
        options=check_model_options(recorded.get("options"), where.format("options")),
        keep_alive=keep_alive,
        schema=schema,
        think=think,
    )


def replay_request(
    parent: ExecutionArtifact, prompt: str | None = None, **fields: Any
) -> TurnRequest:
    """The request that replays `parent` (no prompt) or chains from it (a new prompt): its
    messages, system prompt, context and (for a replay) the controls it recorded, checked as
    `-o` checks options (`recorded_turn_options`). `fields` set the rest (`model` overrides the
    recorded one; `controls` the recorded ones; `system` is used by a chain and by a replay of
    an artifact that recorded no messages)."""
    from ..artifacts import plan_turn
    from .request import persona

    system = fields.pop("system", persona())
    plan = plan_turn(parent, prompt, system=system)
    recorded = parent.backend
    server = fields.pop("server", Server())
    if recorded is not None and server.recorded is None:
        from dataclasses import replace

        server = replace(server, recorded=(recorded.name, recorded.base_url))
    if "controls" not in fields:
        fields["controls"] = recorded_turn_options(plan.controls)
    return TurnRequest(
        messages=plan.messages,
        prompt=plan.prompt,
        model=fields.pop("model", None) or plan.model_id,
        system=plan.system,
        server=server,
        tool_results=plan.tool_results,
        parent=parent,
        relation=plan.relation,
        **fields,
    )


def _context(
    request: TurnRequest,
    on_routing: Callable[[RoutingDecision], None] | None,
    on_warning: Callable[[str], None] | None,
) -> TurnContext:
    from dataclasses import replace

    ctx = gather(
        request.recorded_prompt,
        request.context,
        request.piped,
        on_routing=on_routing,
        on_warning=on_warning,
    )
    if request.tool_results:
        ctx = replace(ctx, tool_results=request.tool_results + ctx.tool_results)
    return ctx


def preview(
    request: TurnRequest,
    *,
    on_routing: Callable[[RoutingDecision], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Exactly what `run_turn(request)` would send, as `--dry-run` prints it: the model (None
    unless named: choosing a default would ask the server), where it would go (the backend and
    its address, without credentials), the messages in order, every control, and the routing
    decision. The tool runs (its output is part of what is sent); no model is called and
    nothing is written.

    :raises ArtifactError: when the request replays an artifact whose backend the flags and
        environment do not allow, as `run_turn` would.
    """
    from ..backends.select import destination
    from ..core import build_messages

    name, url = request.server.recorded or (None, None)
    # Refused before the tool runs, as run_turn would refuse it.
    where = destination(
        request.server.backend, request.server.base_url, recorded_name=name, recorded_url=url
    )
    ctx = _context(request, on_routing, on_warning)
    history = _sent_history(request.conversation)
    sent = build_messages(
        request.messages, history, ctx.tool_results, ctx.skills, system=request.system
    )
    shown: dict[str, Any] = {
        "model": requested_model(request.model),
        "destination": where,
        "messages": [{"role": m.role, "content": m.content} for m in sent],
        **request.controls.to_dict(),
    }
    if ctx.routing is not None:
        shown["routing"] = ctx.routing.to_dict()
    return shown


def run_turn(
    request: TurnRequest,
    *,
    backend: Backend | None = None,
    on_token: Callable[[str], None] | None = None,
    on_thinking: Callable[[str], None] | None = None,
    on_routing: Callable[[RoutingDecision], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> TurnResult:
    """Run one turn and keep it: the request's context gathered, one reasoner call, the answer
    checked, appended to the request's saved session, its artifact built and written.

    :param backend: reuse a backend (a REPL's); default: `connect(request.server)`.
    :param on_token: with `request.stream`, each piece of the answer as it arrives.
    :param on_thinking: with `request.stream`, each piece of the model's reasoning.
    :param on_routing: the router's decision, as soon as it is made (before the model call).
    :param on_warning: each skill the router's catalogue passed over.
    :raises OreError: a refused tool, an unreachable server, an empty answer (nothing is then
        saved), a session or artifact that cannot be written.
    """
    if request.artifact_out not in (None, "-"):
        from ..artifacts import check_destination

        check_destination(request.artifact_out)  # refused before any model call
    ctx = _context(request, on_routing, on_warning)
    if backend is not None:
        return _run(request, ctx, backend, on_token, on_thinking)
    own = connect(request.server)
    try:
        return _run(request, ctx, own, on_token, on_thinking)
    finally:
        close(own)


def close(backend: Backend) -> None:
    """Close the backend's connections (a backend built by `connect` holds an HTTP client)."""
    closer = getattr(backend, "close", None)
    if closer is not None:
        closer()


def _run(
    request: TurnRequest,
    ctx: TurnContext,
    backend: Backend,
    on_token: Callable[[str], None] | None,
    on_thinking: Callable[[str], None] | None,
) -> TurnResult:
    """The turn past its context: the model, the call, the checks, saving, the artifact."""
    from .answer import answer_warnings, structured
    from .result import TurnResult
    from .saving import append_turn

    model = choose_model(request.model, backend)
    conversation = request.conversation
    history = _sent_history(conversation)
    started = time.monotonic()
    turn = _execute(request, ctx, backend.reasoner(model), history, on_token, on_thinking)
    seconds = time.monotonic() - started
    sent_messages = history.messages if history is not None else ()
    warnings = answer_warnings(turn, sent_messages)  # raises for an empty answer: nothing kept
    data = schema_error = None
    if turn.options.schema is not None:
        data, schema_error = structured(turn.response.content, turn.options.schema)
    kept: list[str] = []
    after = None
    if conversation is not None and history is not None and turn.session is not None:
        whole = conversation.session.append(*turn.session.messages[len(history.messages) :])
        after = append_turn(conversation, whole, turn.response.model_id)
        if after.name is not None and after.name != conversation.name:
            kept.append(
                f"the turn is saved in session '{after.name}' "
                f"('{conversation.name}' holds another session)"
            )
        elif after.name is not None:
            kept.append(f"the turn is saved in session '{after.name}'")
    artifact = None
    if request.artifact_out is not None:
        artifact = _artifact(request, turn, ctx, backend, model)
        if request.artifact_out != "-":
            from ..artifacts import write_artifact

            write_artifact(artifact, request.artifact_out, version=request.artifact_version)
            kept.append(f"the artifact is written to {request.artifact_out}")
    return TurnResult(
        turn=turn,
        model=model,
        context=ctx,
        conversation=after,
        seconds=seconds,
        warnings=warnings,
        data=data,
        schema_error=schema_error,
        artifact=artifact,
        kept=tuple(kept),
    )


def _sent_history(conversation: Conversation | None) -> Session | None:
    """The part of the conversation sent with the turn (`history`: the last N turns)."""
    if conversation is None:
        return None
    from ..sessions import last_turns

    return last_turns(conversation.session, conversation.history)


def _execute(
    request: TurnRequest,
    ctx: TurnContext,
    reasoner: Reasoner,
    history: Session | None,
    on_token: Callable[[str], None] | None,
    on_thinking: Callable[[str], None] | None,
) -> Turn:
    """The one place a turn is executed; a context overflow names `--history N`."""
    from ..core import execute

    try:
        return execute(
            request.messages,
            history,
            ctx.tool_results,
            ctx.skills,
            reasoner=reasoner,
            system=request.system,
            on_token=(on_token or _drop) if request.stream else None,
            options=request.controls,
            on_thinking=on_thinking if request.stream else None,
        )
    except ContextTooLong as exc:
        if history is not None and history.messages:
            from ..sessions import turn_count

            turns = turn_count(history.messages)
            raise ContextTooLong(
                f"{exc.message}; send only the last turns with --history N "
                f"(this conversation has {turns} turn{'' if turns == 1 else 's'})"
            ) from None
        raise


def _drop(piece: str) -> None:
    """A streamed piece nobody asked to see."""


def _artifact(
    request: TurnRequest, turn: Turn, ctx: TurnContext, backend: Backend, model: str
) -> ExecutionArtifact:
    """The turn as an execution artifact."""
    from ..artifacts import BackendInfo, build_artifact

    return build_artifact(
        turn,
        prompt=request.recorded_prompt,
        model_id=model,
        backend=BackendInfo(backend.name, backend.address),
        routing=ctx.routing,
        tools=[r.tool_name for r in ctx.tool_results if r.kind == "tool"],
        skills=[s.name for s in ctx.skills],
        parent=request.parent,
        relation=request.relation,
    )
