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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from .. import __version__
from ..errors import ContextTooLong, ModelNotFound, OreError
from .console import is_terminal, note, out, print_json, report
from .context import gather, plan_context
from .options import Options, parse_size

if TYPE_CHECKING:
    from ..artifacts import ExecutionArtifact, Relation
    from ..backends import Backend
    from ..core import Turn
    from ..store import FileSessionStore
    from ..turn_types import Reasoner, TurnContext, TurnOptions
    from ..types import Message, Session
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


def _system(flag: str | None) -> str | None:
    """The persona (data in ore/prompts/aya.txt), or --system TEXT for this invocation."""
    if flag is not None:
        return flag or None
    return _persona()


@functools.cache
def _persona() -> str:
    # Read once per process, not once per REPL turn.
    persona = os.path.join(os.path.dirname(os.path.dirname(__file__)), "prompts", "aya.txt")
    with open(persona, encoding="utf-8") as f:
        return f.read().strip()


def _prompt_of(o: Options) -> str:
    """The user message of a single turn: the argument and/or stdin, by the rule in
    `ore.cli.stdin` (`-` as the argument: stdin alone)."""
    return _prompt_and_piped(o)[0]


def _prompt_and_piped(o: Options) -> tuple[str, str | None]:
    """The user message of a single turn, and the text read from stdin for it (None: none)."""
    from .stdin import prompt_stdin

    image_on_stdin = "-" in (o.attach or ())  # then stdin holds the image, not text
    piped = None if image_on_stdin else prompt_stdin(o.prompt, no_stdin=o.no_stdin, note=note)
    return combine_prompt(None if o.stdin_prompt else o.prompt, piped), piped


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
    an empty answer raises here, before anything is saved or written. `session` is what is
    sent: with --history, the last turns only."""
    from ..core import execute
    from .present import outcome

    history = session.messages if session is not None else ()
    started = time.monotonic()
    sink.open()
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
    except ContextTooLong as exc:
        if history:
            from ..sessions import turn_count

            turns = turn_count(history)
            raise ContextTooLong(
                f"{exc.message}; send only the last turns with --history N "
                f"(this conversation has {turns} turn{'' if turns == 1 else 's'})"
            ) from None
        raise
    finally:
        sink.close()  # an error line never continues the reasoning's line or a live view
    return outcome(turn, display, sink, time.monotonic() - started, history=history)


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
        _write_artifact_stdout(o.artifact_version, artifact)
    finish(result, display)


def single_turn(o: Options) -> None:
    """One turn from the prompt argument and/or piped stdin; saved when a session is named."""
    from ..backends.select import backend_name, model_for, requested_model
    from .controls import turn_options

    prompt, piped = _prompt_and_piped(o)
    if not prompt:
        raise OreError("the prompt is empty: give one as an argument or pipe text on stdin")
    plan = plan_context(o)  # before the session: a refused tool leaves no new session file
    controls = turn_options(o, backend_name(o.backend))
    session = sent = saving = None
    if o.session_name is not None:
        from ..sessions import last_turns

        session, saving = _open_session(o, create=not o.dry_run)
        sent = last_turns(session, o.history)
    if o.dry_run:
        ctx = gather(prompt, plan, piped)
        _dry_run(requested_model(o.model), _user(prompt), sent, ctx, system=_system(o.system),
                 controls=controls)  # fmt: skip
        return
    from .present import Display, Sink

    _check_artifact_out(o.artifact_out)
    # Tools, grants and skills are checked (and the tool run) before the server is contacted,
    # so a refusal is reported as itself, with no request made.
    ctx = gather(prompt, plan, piped)
    backend = backend_for(o)
    reasoner = backend.reasoner(model_for(o.model, backend))
    display = Display.of(o, controls)
    sink = Sink(display)
    result = _execute(
        reasoner, _user(prompt), sent, ctx, system=_system(o.system), display=display, sink=sink,
        controls=controls,
    )  # fmt: skip
    turn = result.turn
    kept = ""
    if saving is not None and turn.session is not None and session is not None and sent is not None:
        saving.save(session.append(*turn.session.messages[len(sent.messages) :]), turn)
        kept = f"; the turn is saved in session '{saving.name}'"
    artifact = None
    if o.artifact_out is not None:
        artifact = _artifact(turn, backend, prompt=prompt, model_id=reasoner.model_id, ctx=ctx)
        kept += _write_artifact_file(o.artifact_out, o.artifact_version, artifact)
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
    from ..turn_types import TurnContext

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


def _write_artifact_file(dest: str | None, version: str, artifact: ExecutionArtifact) -> str:
    """Write the artifact to --artifact-out PATH (atomically); say so, for an error message.
    `--artifact-out -` is written last, to stdout, by `_write_artifact_stdout`."""
    from ..artifacts import write_artifact

    if dest is None or dest == "-":
        return ""
    write_artifact(artifact, dest, version=version)
    return f"; the artifact is written to {dest}"


def _write_artifact_stdout(version: str, artifact: ExecutionArtifact) -> None:
    from ..artifacts import dumps_artifact

    out(dumps_artifact(artifact, version), nl=False)


def artifact_turn(o: Options) -> None:
    """--artifact-in: replay the artifact's turn (no prompt) or chain from it (a new prompt).

    The artifact is read and validated first, so a bad one costs no model call. The model is
    --model, else the one the artifact recorded (ORE_MODEL does not override an artifact).
    Stdin is read only as the artifact itself (`--artifact-in -`), never as a prompt.
    """
    from ..artifacts import plan_turn, read_artifact
    from ..backends import backend_name
    from ..turn_types import TurnContext
    from .controls import turn_options
    from .present import Display, Sink

    prompt = _prompt_of(o) if o.stdin_prompt else o.prompt
    if prompt is not None and not prompt.strip():
        raise OreError("the prompt is empty: give a new prompt to chain, or none to replay")
    parent = read_artifact(o.artifact_in or "-")
    if prompt is None and parent.messages is not None and o.system is not None:
        raise click.UsageError(
            f"--system cannot be used to replay an {parent.version} artifact: "
            "it replays the recorded messages exactly."
        )
    plan = plan_turn(parent, prompt, system=_system(o.system))
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
        kept = _write_artifact_file(o.artifact_out, o.artifact_version, artifact)
    _show(o, result, display, sink, kept=kept, artifact=artifact)


@dataclass(slots=True)
class _Saving:
    """Where a session's turns are saved: the session `name`, which already holds the first
    `saved` messages of the conversation (none yet for a new session continued from another)."""

    name: str
    session_id: str
    saved: int

    def save(self, session: Session, turn: Turn) -> None:
        """Append what `session` (the whole conversation) holds beyond what is saved, and
        remember the model the turn used."""
        from ..sessions import record_model

        store = _store()
        store.append(self.name, session.messages[self.saved :], session_id=self.session_id)
        record_model(store, self.name, turn.response.model_id)
        self.saved = len(session.messages)


def _open_session(o: Options, *, create: bool = True) -> tuple[Session, _Saving]:
    """The session the turns continue, and where they are saved.

    - `--resume-session NAME` (with or without `--save-session NAME`): NAME must exist; turns
      are appended to it.
    - `--save-session NAME`: NAME is continued if it exists, else created (with `create=False`,
      as for --dry-run, nothing is written and a new session stays in memory).
    - `--resume-session A --save-session B`: A's history continues into a new session B, written
      with A's messages when the first turn completes; A is never written. B must not exist yet.
    """
    from ..types import Session

    store = _store()
    if o.resume_session is not None:
        session = store.load(o.resume_session)
        if not o.forks:
            return session, _Saving(o.resume_session, session.id, len(session.messages))
        target = o.save_session
        assert target is not None
        if store.exists(target):
            raise OreError(
                f"session '{target}' already exists: --resume-session {o.resume_session} "
                f"--save-session {target} starts a new session; pick a new name, or continue "
                f"'{target}' with --resume-session {target}"
            )
        fork = Session(messages=session.messages)
        return fork, _Saving(target, fork.id, 0)
    assert o.save_session is not None
    if create:
        session = store.open_or_create(o.save_session)
    elif store.exists(o.save_session):
        session = store.load(o.save_session)
    else:
        session = Session()
    return session, _Saving(o.save_session, session.id, len(session.messages))


def repl(o: Options) -> int:
    """-i, -c, or a session flag without a prompt: turns read from the terminal or a pipe.

    Slash commands (`ore.cli.slash`) change what the next turn carries; none calls a model.
    """
    from ..backends import backend_name, model_for
    from ..paths import ore_home
    from ..sessions import last_turns
    from ..types import Session
    from .controls import turn_options
    from .present import Display, Sink, deliver, finish
    from .repl import read_lines, run_repl
    from .slash import Conversation, run_command

    plan = plan_context(o)
    controls = turn_options(o, backend_name(o.backend))  # the same for every turn
    backend = backend_for(o)
    session: Session | None = None
    saving: _Saving | None = None
    if o.session_name is not None:
        session, saving = _open_session(o)
    elif not o.interactive:
        session = Session()
    conv = Conversation(
        model=model_for(o.model, backend),
        system=_system(o.system),
        session=session,
        name=o.save_to,
        history=o.history,
    )
    display = Display.of(o, controls)
    saving_in: dict[str, _Saving | None] = {"to": saving}

    def turn(line: str) -> None:
        current = conv.session
        sent = last_turns(current, conv.history) if current is not None else None
        ctx = gather(line, plan)
        reasoner = backend.reasoner(conv.model)
        sink = Sink(display)
        try:
            outcome = _execute(
                reasoner, _user(line), sent, ctx, system=conv.system, display=display, sink=sink,
                controls=controls,
            )  # fmt: skip
        except ModelNotFound as exc:
            if conv.model_chosen:  # a /model typo need not end the REPL
                raise OreError(f"{exc.message}; or /model NAME") from None
            raise
        result = outcome.turn
        kept = ""
        if current is not None and sent is not None and result.session is not None:
            whole = current.append(*result.session.messages[len(sent.messages) :])
            if conv.name is not None:
                to = saving_in["to"]
                if to is None or to.name != conv.name:
                    # /save or /fork wrote the conversation so far under a new name
                    to = saving_in["to"] = _Saving(conv.name, current.id, len(current.messages))
                to.save(whole, result)
                kept = f"; the turn is saved in session '{conv.name}'"
            conv.session = whole
        deliver(outcome, display, sink, kept=kept)
        finish(outcome, display)

    interactive_terminal = is_terminal(sys.stdin)
    if interactive_terminal:
        mode = "interactive (each turn stateless)" if o.interactive else "conversational"
        where = f", session '{conv.name}'" if conv.name else ""
        note(
            f"ORE {__version__} {mode}, model {conv.model}{where}. "
            "/help for commands, /exit or Ctrl-D to leave."
        )
    lines = read_lines("> ", history=ore_home() / "history")
    if o.prompt:
        lines = _prepend(o.prompt, lines)
    return run_repl(
        lines,
        turn,
        report=report,
        keep_going=interactive_terminal,
        command=lambda line: run_command(line, conv, _store),
    )


def _prepend(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest
