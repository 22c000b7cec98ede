"""The one-shot modes: a turn from the prompt (and/or piped stdin), and an artifact's replay or
chain. Each builds one `ore.turn.TurnRequest` from the flags, runs it with `run_turn` and shows
the result; the turn itself (context, server, model, the call, checks, saving, the artifact)
is the library's. The REPL is `ore.cli.conversation`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..errors import OreError
from .console import OutputLost, json_text, note, out, print_json, warn
from .options import Options
from .request import (
    configured,
    context_of,
    controls_of,
    files_apply,
    files_of,
    prompt_and_piped,
    server_of,
    system_of,
    with_origins,
)

if TYPE_CHECKING:
    from ..backends import Backend
    from ..turn import Conversation, TurnRequest, TurnResult
    from ..turn_types import RoutingDecision, TurnOptions

__all__ = ["artifact_turn", "conversation_of", "run_and_show", "show_routing", "single_turn"]


def show_routing(decision: RoutingDecision) -> None:
    """The router's decision, on stderr, as soon as it is made."""
    import json

    note("[routing] " + json.dumps(decision.to_dict(), ensure_ascii=False))


def run_and_show(
    o: Options,
    request: TurnRequest,
    controls: TurnOptions,
    backend: Backend | None = None,
    *,
    one_shot: bool = False,
) -> TurnResult:
    """Run `request` (streamed as the display says), then show it: the answer, `--json`,
    `--artifact-out -`, the -u line; a `--schema` failure exits 1 after all of that. A turn
    answered but not kept (a session or artifact that cannot be written) is shown all the
    same, then its one error line (exit 1): the answer is never lost. A `one_shot` turn (the
    process's only one) is logged once the process has exited (`keep_turn`); a REPL's turns
    each before the next prompt."""
    from dataclasses import replace

    from ..turn import TurnNotKept, run_turn
    from .present import Display, Sink, after_call, deliver, finish
    from .turn_logging import keep_turn, logging_enabled

    # The log keeps the turn's artifact document, which `keep_turn` makes from the result (after
    # the exit at a terminal): the turn builds no artifact for it.
    logged = logging_enabled(o.no_log, o.no_config)
    display = Display.of(o, controls)
    sink = Sink(display)
    sink.open()
    not_kept: TurnNotKept | None = None
    try:
        result = run_turn(
            replace(request, stream=display.stream),
            backend=backend,
            on_token=sink.token,
            on_thinking=sink.thinking,
            on_routing=show_routing,
            on_warning=warn,
        )
    except TurnNotKept as exc:
        result, not_kept = exc.result, exc
    finally:
        sink.close()  # an error line never continues the reasoning's line or a live view
    after_call(result, display, sink)
    asked, saved = request.conversation, result.conversation
    if asked is not None and saved is not None and saved.name != asked.name:
        note(f"session '{asked.name}' holds another session: this turn is saved as '{saved.name}'")
    # The answer first, flushed (`out` flushes), then the log's write: a log held locked by
    # another process delays only the exit, and a signal in that wait never costs the answer.
    # The write stays synchronous: the next `--continue` finds the turn.
    try:
        deliver(result, display, sink, not_kept)
        if o.as_json:
            print_json(result.to_dict())
        if result.artifact is not None and o.artifact_out == "-":
            from ..artifacts import dumps_artifact

            out(json_text(dumps_artifact(result.artifact, o.artifact_version)), nl=False)
    except OutputLost:
        if logged:  # stdout is gone; the turn is still kept, as a session keeps it
            keep_turn(result, request, after_exit=one_shot)
        raise
    if logged:
        keep_turn(result, request, after_exit=one_shot)
    finish(result, display, not_kept)
    return result


def conversation_of(o: Options, *, create: bool = True) -> Conversation | None:
    """The conversation the session flags name (None without one). `--continue` from a logged
    one-shot turn goes on from that turn in a new session, written when this turn completes."""
    if o.seed is not None:
        from ..turn import Conversation

        return Conversation(o.seed, o.save_session, 0, o.history)
    if o.session_name is None:
        return None
    from ..turn import open_conversation

    return open_conversation(
        resume=o.resume_session, save=o.save_session, history=o.history, create=create
    )


def single_turn(o: Options) -> None:
    """One turn from the prompt argument and/or piped stdin; saved when a session is named."""
    from ..turn import TurnRequest, preview

    prompt, piped = prompt_and_piped(o)
    if not prompt:
        raise OreError("the prompt is empty: give one as an argument or pipe text on stdin")
    plan = context_of(o)  # before the session: a refused tool leaves no new session file
    files = files_of(o)
    server = server_of(o)
    controls = controls_of(o, server)
    conversation = conversation_of(o, create=not o.dry_run)
    request = TurnRequest.of(
        prompt,
        model=o.model,
        system=system_of(o.system),
        server=server,
        controls=controls,
        context=plan,
        piped=piped,
        files=files,
        conversation=conversation,
        artifact_out=o.artifact_out,
        artifact_version=o.artifact_version,
    )
    if o.dry_run:
        print_json(with_origins(o, preview(request, on_routing=show_routing, on_warning=warn)))
        return
    run_and_show(o, request, controls, one_shot=True)


def artifact_turn(o: Options) -> None:
    """--artifact-in: replay the artifact's turn (no prompt) or chain from it (a new prompt).

    The artifact is read and validated first, so a bad one costs no model call. The model is
    --model, else the one the artifact recorded (ORE_MODEL does not override an artifact).
    Stdin is read only as the artifact itself (`--artifact-in -`), never as a prompt.
    Replay and chain choose the server by one rule (`ore.backends.choose_backend`): the
    artifact's record fills in what flags and environment leave unset, and no credential is
    ever sent to an address that came from the artifact alone.
    """
    from ..turn import preview, recorded_controls, replay_request
    from ..turn.replay import read_parent

    files_apply(o)
    prompt = prompt_and_piped(o)[0] if o.stdin_prompt else o.prompt
    if prompt is not None and not prompt.strip():
        raise OreError("the prompt is empty: give a new prompt to chain, or none to replay")
    if (o.artifact_in or "").startswith("log:"):  # not a turn id: a usage mistake, as `log show`
        from .turn_logging import parse_ref

        parse_ref(o.artifact_in or "", "--artifact-in")
    parent = read_parent(o.artifact_in or "-")
    recorded = parent.backend
    o = configured(o, replay=True, recorded=recorded.name if recorded else None)
    if prompt is None and parent.messages is not None and o.system is not None:
        raise click.UsageError(
            f"--system cannot be used to replay an {parent.version} artifact: "
            "it replays the recorded messages exactly."
        )
    server = server_of(o, (recorded.name, recorded.base_url) if recorded else None)
    # A replay sends the recorded controls again, each overridden by its flag.
    controls = controls_of(o, server, recorded_controls(parent, prompt))
    request = replay_request(
        parent,
        prompt,
        files=files_of(o) if prompt is not None else (),  # a chain is a new turn: -f applies
        model=o.model,
        system=system_of(o.system),
        server=server,
        controls=controls,
        artifact_out=o.artifact_out,
        artifact_version=o.artifact_version,
    )
    if o.dry_run:
        print_json(with_origins(o, preview(request)))
        return
    run_and_show(o, request, controls, one_shot=True)
