"""One ORE turn as a library call: `run_turn(request) -> TurnResult`.

The chain every turn goes through, in order, written once: refuse an unwritable artifact path,
gather the context (route, activate the skill, run the gated tool), choose the server and the
model, execute (the core's one reasoner call), check the answer (empty, cut, schema), then keep
it: append it to the saved session, write the artifact. Once the model has answered, nothing
that fails while keeping it loses the answer: `TurnNotKept` carries the whole result. Nothing is
printed and nothing of click or rich is imported: what a person should see arrives through the
callbacks and the result.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ContextTooLong
from .context import gather
from .request import Conversation, TurnRequest
from .server import choose_model, close, connect, requested_model

if TYPE_CHECKING:
    from ..artifacts import ExecutionArtifact
    from ..backends import Backend
    from ..core import Turn
    from ..turn_types import Reasoner, RoutingDecision, TurnContext
    from ..types import Message, Session
    from .result import TurnResult

__all__ = ["artifact_of", "document_of", "preview", "run_turn"]


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
    if request.files:
        from .files import file_results

        ctx = replace(ctx, tool_results=file_results(request.files) + ctx.tool_results)
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
        saved).
    :raises TurnNotKept: the model answered and the session or the artifact could not be
        written: its `result` holds the answer and what was kept, its message what was not.
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


def _run(
    request: TurnRequest,
    ctx: TurnContext,
    backend: Backend,
    on_token: Callable[[str], None] | None,
    on_thinking: Callable[[str], None] | None,
) -> TurnResult:
    """The turn past its context: the model, the call, the checks, saving, the artifact."""
    from .answer import answer_warnings, structured
    from .result import TurnNotKept, TurnResult

    model = choose_model(request.model, backend)
    served = (backend.name, backend.address)
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
    artifact = None
    if request.artifact_out is not None:
        artifact = _artifact(request, turn, ctx, served, model)
    # The answer exists from here on: keeping it may fail, the answer is never lost to that.
    after, kept, failed = _keep(request, turn, history, artifact)
    result = TurnResult(
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
        served=served,
    )
    if failed:
        raise TurnNotKept("; ".join([*failed, *kept]), result)
    return result


def _keep(
    request: TurnRequest,
    turn: Turn,
    history: Session | None,
    artifact: ExecutionArtifact | None,
) -> tuple[Conversation | None, list[str], list[str]]:
    """Keep an answered turn: appended to the saved session, the artifact written. Each is
    tried whatever became of the other. The conversation after the turn (holding it in memory
    when the session could not be written), what was kept and what failed, one phrase each."""
    from ..errors import OreError
    from .saving import append_turn

    conversation = request.conversation
    kept: list[str] = []
    failed: list[str] = []
    after = None
    if conversation is not None and history is not None and turn.session is not None:
        whole = conversation.session.append(*turn.session.messages[len(history.messages) :])
        try:
            after = append_turn(conversation, whole, turn.response.model_id)
        except OreError as exc:
            after = Conversation(whole, conversation.name, conversation.saved, conversation.history)
            failed.append(f"the turn is not saved in session '{conversation.name}': {exc.message}")
        else:
            if after.name is not None and after.name != conversation.name:
                kept.append(
                    f"the turn is saved in session '{after.name}' "
                    f"('{conversation.name}' holds another session)"
                )
            elif after.name is not None:
                kept.append(f"the turn is saved in session '{after.name}'")
    if artifact is not None and request.artifact_out not in (None, "-"):
        from ..artifacts import write_artifact

        try:
            write_artifact(artifact, request.artifact_out, version=request.artifact_version)
        except OreError as exc:
            failed.append(f"the artifact is not written: {exc.message}")
        else:
            kept.append(f"the artifact is written to {request.artifact_out}")
    return after, kept, failed


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
        # --history N helps only when the conversation, not this turn's prompt, is the bulk
        if history is not None and _size(history.messages) >= _size(request.messages):
            from ..sessions import turn_count

            turns = turn_count(history.messages)
            raise ContextTooLong(
                f"{exc.message}; send only the last turns with --history N "
                f"(this conversation has {turns} turn{'' if turns == 1 else 's'})"
            ) from None
        raise


def _size(messages: Sequence[Message]) -> int:
    return sum(len(m.content) for m in messages)


def _drop(piece: str) -> None:
    """A streamed piece nobody asked to see."""


def artifact_of(request: TurnRequest, result: TurnResult) -> ExecutionArtifact:
    """The execution artifact of a turn `run_turn` ran for `request` without building one
    (`artifact_out` None): the same document `artifact_out` would have had, stamped now."""
    from ..artifacts import document_artifact

    return document_artifact(document_of(request, result))


def document_of(request: TurnRequest, result: TurnResult) -> dict[str, Any]:
    """The artifact's document (`ore.exec.v3`) of a turn `run_turn` ran for `request`: what
    `artifact_of` reads, without its classes. The `ore` command logs a one-shot turn's this
    way (after its exit at a terminal)."""
    if result.served is None:
        raise ValueError("this result does not say which backend answered")
    return _document(request, result.turn, result.context, result.served, result.model)


def _artifact(
    request: TurnRequest,
    turn: Turn,
    ctx: TurnContext,
    served: tuple[str, str | None],
    model: str,
) -> ExecutionArtifact:
    """The turn as an execution artifact."""
    from ..artifacts import document_artifact

    return document_artifact(_document(request, turn, ctx, served, model))


def _document(
    request: TurnRequest,
    turn: Turn,
    ctx: TurnContext,
    served: tuple[str, str | None],
    model: str,
) -> dict[str, Any]:
    """The turn's artifact document: the one place a turn's parts are named for it."""
    from ..artifacts import turn_document

    return turn_document(
        turn,
        prompt=request.recorded_prompt,
        model_id=model,
        backend=served,
        routing=ctx.routing,
        tools=[r.tool_name for r in ctx.tool_results if r.kind == "tool"],
        skills=[s.name for s in ctx.skills],
        parent_id=request.parent.execution_id if request.parent is not None else None,
        relation=request.relation,
        files=[f.record() for f in request.files],
    )
