"""The turn modes: one turn from a prompt, a REPL of turns, and an artifact's replay or chain.

Each mode takes the parsed flags once, resolves them into plain values (a backend, a model, a
context plan, how to show the answer) and hands those down; the reasoning loop itself is
`ore.core.execute`. Heavy modules (`ollama`, `jsonschema`, `networkx`) are imported inside the
functions that need them, so listing commands stay fast.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from .. import __version__
from ..errors import OreError
from .console import is_terminal, note, out, print_json, report
from .context import gather, plan_context
from .options import Options, parse_size

if TYPE_CHECKING:
    from ..artifacts import ExecutionArtifact, Relation
    from ..backends import Backend
    from ..core import Turn
    from ..store import FileSessionStore
    from ..types import Message, Reasoner, Session, TurnContext, TurnOptions
    from .present import Display, Outcome, Sink

__all__ = ["artifact_turn", "backend_for", "combine_prompt", "repl", "single_turn"]


def backend_for(o: Options, recorded: tuple[str, str | None] | None = None) -> Backend:
    """The backend the flags (and environment) name; see `ore.backends.select.choose_backend`."""
    from ..backends import DEFAULT_LIMITS, Limits, choose_backend

    name, url = recorded if recorded is not None else (None, None)
    limits = Limits(
        max_seconds=o.max_time or DEFAULT_LIMITS.max_seconds,
        max_bytes=parse_size(o.max_size) if o.max_size else DEFAULT_LIMITS.max_bytes,
    )
    return choose_backend(
        o.backend, o.base_url, timeout=o.timeout, limits=limits, recorded_name=name,
        recorded_url=url,
    )  # fmt: skip


def _system(o: Options) -> str | None:
    """The persona (data in ore/prompts/aya.txt), or --system TEXT for this invocation."""
    if o.system is not None:
        return o.system or None
    return _persona()


@functools.cache
def _persona() -> str:
    # Read once per process, not once per REPL turn.
    persona = os.path.join(os.path.dirname(os.path.dirname(__file__)), "prompts", "aya.txt")
    with open(persona, encoding="utf-8") as f:
        return f.read().strip()


def _read_stdin() -> str | None:
    """Piped text, or None when stdin is a terminal (or absent)."""
    if sys.stdin is None or is_terminal(sys.stdin):
        return None
    data = sys.stdin.buffer.read()
    return data.decode("utf-8", errors="replace")


def combine_prompt(prompt: str | None, piped: str | None) -> str:
    """The user message: the argument, the piped text, or both (instruction, blank line, text)."""
    parts = [p.strip("\n") for p in (prompt, piped) if p is not None and p.strip()]
    return "\n\n".join(parts)


def _store() -> FileSessionStore:
    from ..store import default_store

    return default_store()


# -- executing one turn --------------------------------------------------------------------------


def _execute(
    reasoner: Reasoner,
    messages: Sequence[Message],
    session: Session | None,
    ctx: TurnContext,
    *,
    system: str | None,
    display: Display,
    sink: Sink,
    controls: TurnOptions,
) -> Outcome:
    """The one place a turn is executed (streamed through `sink` when the display says so);
    an empty answer raises here, before anything is saved or written."""
    from ..core import execute
    from .present import outcome

    started = time.monotonic()
    try:
        turn = execute(
            messages,
            session,
            ctx.tool_results,
            ctx.skills,
            reasoner=reasoner,
            system=system,
            on_token=sink.token if display.stream else None,
            options=controls,
            on_thinking=sink.thinking if display.stream else None,
        )
    finally:
        sink.close_reasoning()  # an error line never continues the reasoning's line
    return outcome(turn, display, sink, time.monotonic() - started)


def _user(prompt: str) -> list[Message]:
    from ..types import Message

    return [Message(role="user", content=prompt)]


# -- modes ---------------------------------------------------------------------------------------


def _dry_run(
    model: str | None, messages: Sequence[Message], session: Session | None, ctx: TurnContext, *,
    system: str | None, controls: TurnOptions,
) -> None:  # fmt: skip
    """Print exactly what one turn would send, in order, with every control; call nothing."""
    from ..core import build_messages

    sent = build_messages(messages, session, ctx.tool_results, ctx.skills, system=system)
    out: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in sent],
        **controls.to_dict(),
    }
    if ctx.routing is not None:
        out["routing"] = ctx.routing.to_dict()
    print_json(out)


def _show(
    o: Options, result: Outcome, display: Display, sink: Sink, *, kept: str,
    artifact: ExecutionArtifact | None = None, routing: Mapping[str, Any] | None = None,
) -> None:  # fmt: skip
    """After the turn is saved: the answer, `--json`, `--artifact-out -`, then `finish`."""
    from .present import deliver, finish, response_json

    deliver(result, display, sink, kept=kept)
    if o.as_json:
        print_json(response_json(result, routing))
    if artifact is not None and o.artifact_out == "-":
        _write_artifact_stdout(o, artifact)
    finish(result, display)


def single_turn(o: Options) -> None:
    """One turn from the prompt argument and/or piped stdin; saved when a session is named."""
    from ..backends import backend_name, model_for, requested_model
    from .controls import turn_options
    from .present import Display, Sink

    piped = None if "-" in (o.attach or ()) else _read_stdin()  # stdin may hold the image
    prompt = combine_prompt(o.prompt, piped)
    if not prompt:
        raise OreError("the prompt is empty: give one as an argument or pipe text on stdin")
    plan = plan_context(o)  # before the session: a refused tool leaves no new session file
    controls = turn_options(o, backend_name(o.backend))
    session = None
    name = o.session_name
    if name is not None:
        session = _open_session(o, create=not o.dry_run)
    if o.dry_run:
        ctx = gather(prompt, plan)
        system = _system(o)
        _dry_run(requested_model(o.model), _user(prompt), session, ctx, system=system,
                 controls=controls)  # fmt: skip
        return
    _check_artifact_out(o.artifact_out)
    # Tools, grants and skills are checked (and the tool run) before the server is contacted,
    # so a refusal is reported as itself, with no request made.
    ctx = gather(prompt, plan)
    backend = backend_for(o)
    reasoner = backend.reasoner(model_for(o.model, backend))
    display = Display.of(o, controls)
    sink = Sink(display)
    result = _execute(
        reasoner, _user(prompt), session, ctx, system=_system(o), display=display, sink=sink,
        controls=controls,
    )  # fmt: skip
    turn = result.turn
    kept = ""
    if name is not None and turn.session is not None and session is not None:
        _store().append(name, turn.session.messages[len(session.messages) :], session_id=session.id)
        kept = f"; the turn is saved in session '{name}'"
    artifact = None
    if o.artifact_out is not None:
        artifact = _artifact(turn, backend, prompt=prompt, model_id=reasoner.model_id, ctx=ctx)
        kept += _write_artifact_file(o, artifact)
    routing = ctx.routing.to_dict() if ctx.routing is not None else None
    _show(o, result, display, sink, kept=kept, artifact=artifact, routing=routing)


# -- artifacts: --artifact-out, replay and chaining ----------------------------------------------


def _check_artifact_out(dest: str | None) -> None:
    """Refuse an unwritable --artifact-out PATH before any model call."""
    if dest is not None:
        from ..artifacts import check_destination

        check_destination(dest)


def _artifact(
    turn: Turn,
    backend: Backend,
    *,
    prompt: str,
    model_id: str,
    ctx: TurnContext | None = None,
    parent: ExecutionArtifact | None = None,
    relation: Relation | None = None,
) -> ExecutionArtifact:
    """The turn as an execution artifact."""
    from ..artifacts import BackendInfo, build_artifact
    from ..types import TurnContext

    ctx = ctx if ctx is not None else TurnContext()
    return build_artifact(
        turn,
        prompt=prompt,
        model_id=model_id,
        backend=BackendInfo(backend.name, backend.address),
        routing=ctx.routing,
        tools=[r.tool_name for r in ctx.tool_results if r.kind == "tool"],
        skills=[s.name for s in ctx.skills],
        parent=parent,
        relation=relation,
    )


def _write_artifact_file(o: Options, artifact: ExecutionArtifact) -> str:
    """Write the artifact to --artifact-out PATH (atomically); say so, for an error message.
    `--artifact-out -` is written last, to stdout, by `_write_artifact_stdout`."""
    from ..artifacts import write_artifact

    if o.artifact_out in (None, "-"):
        return ""
    write_artifact(artifact, o.artifact_out, version=o.artifact_version)
    return f"; the artifact is written to {o.artifact_out}"


def _write_artifact_stdout(o: Options, artifact: ExecutionArtifact) -> None:
    from ..artifacts import dumps_artifact

    out(dumps_artifact(artifact, o.artifact_version), nl=False)


def artifact_turn(o: Options) -> None:
    """--artifact-in: replay the artifact's turn (no prompt) or chain from it (a new prompt).

    The artifact is read and validated first, so a bad one costs no model call. The model is
    --model, else the one the artifact recorded (ORE_MODEL does not override an artifact).
    Stdin is read only as the artifact itself (`--artifact-in -`), never as a prompt.
    """
    from ..artifacts import plan_turn, read_artifact
    from ..backends import backend_name
    from ..types import TurnContext
    from .controls import turn_options
    from .present import Display, Sink

    if o.session_name is not None:
        raise click.UsageError("--artifact-in and a session flag cannot be used together.")
    if o.prompt is not None and not o.prompt.strip():
        raise OreError("the prompt is empty: give a new prompt to chain, or none to replay")
    parent = read_artifact(o.artifact_in or "-")
    if o.prompt is None and parent.messages is not None and o.system is not None:
        raise click.UsageError(
            f"--system cannot be used to replay an {parent.version} artifact: "
            "it replays the recorded messages exactly."
        )
    plan = plan_turn(parent, o.prompt, system=_system(o))
    model = o.model or plan.model_id
    ctx = TurnContext(tool_results=tuple(plan.tool_results))
    recorded = parent.backend
    kind = backend_name(o.backend, recorded.name if recorded else None)
    controls = turn_options(o, kind, plan.controls)  # a replay sends the recorded ones again
    if o.dry_run:
        _dry_run(model, plan.messages, None, ctx, system=plan.system, controls=controls)
        return
    _check_artifact_out(o.artifact_out)
    # Replay and chain choose the server by one rule (ore.backends.select.choose_backend): the
    # artifact's record fills in what flags and environment leave unset, and no credential is
    # ever sent to an address that came from the artifact alone.
    backend = backend_for(o, (recorded.name, recorded.base_url) if recorded else None)
    reasoner = backend.reasoner(model)
    display = Display.of(o, controls)
    sink = Sink(display)
    result = _execute(
        reasoner, plan.messages, None, ctx, system=plan.system, display=display, sink=sink,
        controls=controls,
    )  # fmt: skip
    artifact = None
    kept = ""
    if o.artifact_out is not None:
        artifact = _artifact(
            result.turn, backend, prompt=plan.prompt, model_id=model, parent=parent,
            relation=plan.relation,
        )  # fmt: skip
        kept = _write_artifact_file(o, artifact)
    _show(o, result, display, sink, kept=kept, artifact=artifact)


def _open_session(o: Options, *, create: bool = True) -> Session:
    """The session named by --resume-session (must exist) or --save-session (created if new;
    with `create=False`, as for --dry-run, nothing is written and a new session stays in memory)."""
    store = _store()
    if o.resume_session is not None:
        return store.load(o.resume_session)
    assert o.save_session is not None
    if create:
        return store.open_or_create(o.save_session)
    if store.exists(o.save_session):
        return store.load(o.save_session)
    from ..types import Session

    return Session()


def repl(o: Options) -> int:
    """-i, -c, or a session flag without a prompt: turns read from the terminal or a pipe."""
    from ..backends import backend_name, model_for
    from ..paths import ore_home
    from ..types import Session
    from .controls import turn_options
    from .present import Display, Sink, deliver, finish
    from .repl import read_lines, run_repl

    plan = plan_context(o)
    controls = turn_options(o, backend_name(o.backend))  # the same for every turn
    backend = backend_for(o)
    model = model_for(o.model, backend)
    reasoner = backend.reasoner(model)
    system, display = _system(o), Display.of(o, controls)
    session: Session | None = None
    if not o.interactive:
        session = _open_session(o) if o.session_name is not None else Session()
    state = {"session": session}
    name = o.session_name

    def turn(line: str) -> None:
        current = state["session"]
        ctx = gather(line, plan)
        sink = Sink(display)
        result = _execute(
            reasoner, _user(line), current, ctx, system=system, display=display, sink=sink,
            controls=controls,
        )  # fmt: skip
        kept = ""
        new_session = result.turn.session
        if current is not None and new_session is not None:
            if name is not None:
                new = new_session.messages[len(current.messages) :]
                _store().append(name, new, session_id=current.id)
                kept = f"; the turn is saved in session '{name}'"
            state["session"] = new_session
        deliver(result, display, sink, kept=kept)
        finish(result, display)

    interactive_terminal = is_terminal(sys.stdin)
    if interactive_terminal:
        mode = "interactive (each turn stateless)" if o.interactive else "conversational"
        where = f", session '{name}'" if name else ""
        note(f"ORE {__version__} {mode}, model {model}{where}. /exit or Ctrl-D to leave.")
    lines = read_lines("> ", history=ore_home() / "history")
    if o.prompt:
        lines = _prepend(o.prompt, lines)
    return run_repl(lines, turn, report=report, keep_going=interactive_terminal)


def _prepend(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest
