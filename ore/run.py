"""Running turns at the edge: gather a turn's context, pick the backend and model, execute once,
print, save. Single turns, REPLs, artifact replays and chains, and the listing commands.

Everything here is I/O around the core; the reasoning loop itself is `ore.core.execute`.
Heavy modules (`ollama`, `jsonschema`, `networkx`) are imported inside the functions that need
them, so listing commands stay fast.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import click

from . import __version__
from .console import note, print_json, report
from .errors import OreError
from .options import Options

if TYPE_CHECKING:
    from .artifacts import BackendInfo, ExecutionArtifact, Relation
    from .core import Turn
    from .reasoner import Backend
    from .store import FileSessionStore
    from .types import Message, Session, TurnContext

__all__ = [
    "artifact_turn",
    "combine_prompt",
    "list_models",
    "list_sessions",
    "list_skills",
    "list_tools",
    "repl",
    "single_turn",
]


def _backend(o: Options, recorded: BackendInfo | None = None) -> Backend:
    """The model server for this invocation: --backend (ORE_BACKEND), at --base-url if given.

    For openai the address falls back to ORE_BASE_URL, then OPENAI_BASE_URL; the key comes from
    ORE_API_KEY or OPENAI_API_KEY only (a flag would leave it in shell history and `ps`).
    `recorded` (a replayed artifact's backend) fills in only what flags and environment leave
    unset, and the key is never sent to an address that came from an artifact alone: an
    artifact is untrusted data, and must not be able to send the key to a server of its choice.
    """
    from .reasoner import DEFAULT_TIMEOUT, OllamaBackend

    timeout = o.timeout or DEFAULT_TIMEOUT
    name = o.backend or (recorded.name if recorded is not None else None) or "ollama"
    fallback = recorded.base_url if recorded is not None and recorded.name == name else None
    if name != "openai":
        host = o.base_url or (None if os.environ.get("OLLAMA_HOST") else fallback)
        return OllamaBackend(host, timeout=timeout)
    from .openai_backend import OpenAIBackend, resolve_base_url

    configured = o.base_url or os.environ.get("ORE_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
    if fallback and not (configured and configured.strip()):
        return OpenAIBackend(fallback, None, timeout=timeout)
    key = os.environ.get("ORE_API_KEY", "").strip() or os.environ.get("OPENAI_API_KEY", "")
    return OpenAIBackend(resolve_base_url(o.base_url, os.environ), key or None, timeout=timeout)


def _model(o: Options, backend: Backend) -> str:
    """--model, else ORE_MODEL, else the server's default; the listing is fetched only if needed."""
    from .models import choose_model

    if o.model or os.environ.get("ORE_MODEL", "").strip():
        return choose_model(o.model, None, address=backend.address, backend=backend.name)
    return choose_model(None, backend.list_models(), address=backend.address, backend=backend.name)


def _system(o: Options) -> str | None:
    """The persona (data in ore/prompts/aya.txt), or --system TEXT for this invocation."""
    if o.system is not None:
        return o.system or None
    return _persona()


@functools.cache
def _persona() -> str:
    # Read once per process, not once per REPL turn.
    persona = os.path.join(os.path.dirname(__file__), "prompts", "aya.txt")
    with open(persona, encoding="utf-8") as f:
        return f.read().strip()


def _turn_context(prompt: str, o: Options) -> TurnContext:
    """Tools, skills and routing for one turn, all checked before any model call.

    Grants, tool arguments, the gate and skills are validated here, so a refusal costs no chat
    request. Routing never grants anything and never sets a tool argument beyond what the tool
    marks routable (a routed read-file gets a path inside the working folder, never a root).
    """
    from .types import TurnContext

    if not (o.tool or o.skill or o.route or o.grant or o.skill_resource):
        return TurnContext()  # a plain turn: nothing to gather, nothing more to import
    from . import skills
    from .gate import parse_grants, run_gated
    from .tools import TOOL_REGISTRY, Tool, get_tool, parse_tool_args

    granted = parse_grants(o.grant)
    tool: Tool | None = None
    args: dict[str, str] = {}
    if o.tool is not None:
        args = parse_tool_args(o.tool_arg)
        tool = get_tool(o.tool)
    active = []
    if o.skill is not None:
        active.append(skills.activate(skills.find_skill(o.skill), o.skill_resource))
    routing = None
    if o.route:
        from .router import route, targets_from

        catalog = skills.discover_skills(warn=_skill_warning)
        targets = targets_from(TOOL_REGISTRY.values(), catalog.skills.values())
        routing = route(prompt, targets, o.route_threshold, tools=TOOL_REGISTRY)
        note("[routing] " + json.dumps(routing.to_dict(), ensure_ascii=False))
        if routing.target_type == "skill" and routing.target != o.skill:
            active.append(skills.activate(catalog.get(routing.target or "")))
        elif routing.target_type == "tool" and routing.target is not None:
            tool, args = TOOL_REGISTRY[routing.target], dict(routing.args)
    results = (run_gated(tool, args, granted),) if tool is not None else ()
    return TurnContext(tool_results=results, skills=tuple(active), routing=routing)


def _check_turn_flags(o: Options) -> None:
    """Fail fast, before a REPL starts, on a grant, tool, tool argument or skill that every turn
    would refuse; the tool itself still runs before each turn."""
    from . import skills
    from .gate import check, parse_grants
    from .tools import get_tool, parse_tool_args

    granted = parse_grants(o.grant)
    if o.tool is not None:
        parse_tool_args(o.tool_arg)
        check(get_tool(o.tool), granted)
    if o.skill is not None:
        skills.find_skill(o.skill)


def _skill_warning(message: str) -> None:
    click.echo(f"Warning: {message}", err=True)


def _read_stdin() -> str | None:
    """Piped text, or None when stdin is a terminal (or absent)."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    data = sys.stdin.buffer.read()
    return data.decode("utf-8", errors="replace")


def combine_prompt(prompt: str | None, piped: str | None) -> str:
    """The user message: the argument, the piped text, or both (instruction, blank line, text)."""
    parts = [p.strip("\n") for p in (prompt, piped) if p is not None and p.strip()]
    return "\n\n".join(parts)


def _store() -> FileSessionStore:
    from .paths import ore_home
    from .store import FileSessionStore

    return FileSessionStore(ore_home() / "sessions")


# -- rendering one reply -------------------------------------------------------------------------


def _stream_wanted(o: Options) -> bool:
    """--stream/--no-stream if given, else stream only to a terminal (and never with --json)."""
    if o.stream is not None:
        return o.stream
    return not o.as_json and sys.stdout.isatty()


def _on_token(token: str) -> None:
    sys.stdout.write(token)
    sys.stdout.flush()


def _verbose(turn: Turn) -> None:
    meta = dict(turn.response.metadata)
    parts = [f"model={turn.response.model_id}", f"id={turn.response.id}"]
    parts += [f"{k}={v}" for k, v in sorted(meta.items())]
    note("[metadata] " + " ".join(parts))


def _run_turn(
    o: Options,
    reasoner: Any,
    prompt: str,
    session: Session | None,
    ctx: TurnContext,
    *,
    print_answer: bool = True,
) -> Turn:
    """Execute one turn with its gathered context, and print the answer unless told not to."""
    from .types import Message

    return _execute_and_show(
        o,
        reasoner,
        [Message(role="user", content=prompt)],
        session,
        ctx,
        system=_system(o),
        print_answer=print_answer,
    )


def _execute_and_show(
    o: Options,
    reasoner: Any,
    messages: Sequence[Message],
    session: Session | None,
    ctx: TurnContext,
    *,
    system: str | None,
    print_answer: bool,
) -> Turn:
    """The one place a turn is executed and its answer printed (streamed or whole)."""
    from .core import execute

    streaming = print_answer and _stream_wanted(o)
    turn = execute(
        messages,
        session,
        ctx.tool_results,
        ctx.skills,
        reasoner=reasoner,
        system=system,
        on_token=_on_token if streaming else None,
    )
    if print_answer:
        if streaming:
            click.echo("" if turn.response.content.endswith("\n") else "\n", nl=False)
        else:
            click.echo(turn.response.content)
    if o.verbose:
        _verbose(turn)
    return turn


# -- modes ---------------------------------------------------------------------------------------


def _dry_run(o: Options, prompt: str, session: Session | None) -> None:
    from .core import build_messages
    from .types import Message

    ctx = _turn_context(prompt, o)
    sent = build_messages(
        [Message(role="user", content=prompt)],
        session,
        ctx.tool_results,
        ctx.skills,
        system=_system(o),
    )
    model = o.model or os.environ.get("ORE_MODEL", "").strip() or None
    out: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in sent],
    }
    if ctx.routing is not None:
        out["routing"] = ctx.routing.to_dict()
    print_json(out)


def single_turn(o: Options) -> None:
    prompt = combine_prompt(o.prompt, _read_stdin())
    if not prompt:
        raise OreError("the prompt is empty: give one as an argument or pipe text on stdin")
    session = None
    name = o.session_name
    if name is not None:
        session = _open_session(o, create=not o.dry_run)
    if o.dry_run:
        _dry_run(o, prompt, session)
        return
    _check_artifact_out(o)
    # Tools, grants and skills are checked (and the tool run) before the server is contacted,
    # so a refusal is reported as itself, with no request made.
    ctx = _turn_context(prompt, o)
    backend = _backend(o)
    reasoner = backend.reasoner(_model(o, backend))
    shown = not o.as_json and o.artifact_out != "-"
    turn = _run_turn(o, reasoner, prompt, session, ctx, print_answer=shown)
    if name is not None and turn.session is not None and session is not None:
        _store().append(name, turn.session.messages[len(session.messages) :], session_id=session.id)
    if o.as_json:
        out = turn.response.to_dict()
        if ctx.routing is not None:
            out["routing"] = ctx.routing.to_dict()
        print_json(out)
    _write_artifact(o, turn, backend, prompt=prompt, model_id=reasoner.model_id, ctx=ctx)


# -- artifacts: --artifact-out, replay and chaining ------------------


def _check_artifact_out(o: Options) -> None:
    """Refuse an unwritable --artifact-out PATH before any model call."""
    if o.artifact_out is not None:
        from .artifacts import check_destination

        check_destination(o.artifact_out)


def _write_artifact(
    o: Options,
    turn: Turn,
    backend: Backend,
    *,
    prompt: str,
    model_id: str,
    ctx: TurnContext | None = None,
    parent: ExecutionArtifact | None = None,
    relation: Relation | None = None,
) -> None:
    """Write the turn's artifact to --artifact-out (stdout for '-', else atomically to a file)."""
    if o.artifact_out is None:
        return
    from .artifacts import BackendInfo, build_artifact, write_artifact
    from .types import TurnContext

    ctx = ctx if ctx is not None else TurnContext()
    artifact = build_artifact(
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
    write_artifact(artifact, o.artifact_out, version=o.artifact_version)


def artifact_turn(o: Options) -> None:
    """--artifact-in: replay the artifact's turn (no prompt) or chain from it (a new prompt).

    The artifact is read and validated first, so a bad one costs no model call. The model is
    --model, else the one the artifact recorded (ORE_MODEL does not override an artifact).
    Stdin is read only as the artifact itself (`--artifact-in -`), never as a prompt.
    """
    from .artifacts import plan_turn, read_artifact
    from .types import TurnContext

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
    if o.dry_run:
        from .core import build_messages

        sent = build_messages(plan.messages, None, plan.tool_results, system=plan.system)
        messages = [{"role": m.role, "content": m.content} for m in sent]
        print_json({"model": model, "messages": messages})
        return
    _check_artifact_out(o)
    # A replay may reach the server it recorded (when flags and environment name none); a chain
    # never does: the new prompt must not go to an address an artifact chose.
    backend = _backend(o, parent.backend if plan.relation == "replay" else None)
    reasoner = backend.reasoner(model)
    shown = not o.as_json and o.artifact_out != "-"
    turn = _execute_and_show(
        o,
        reasoner,
        plan.messages,
        None,
        TurnContext(tool_results=tuple(plan.tool_results)),
        system=plan.system,
        print_answer=shown,
    )
    if o.as_json:
        print_json(turn.response.to_dict())
    _write_artifact(
        o, turn, backend, prompt=plan.prompt, model_id=model, parent=parent, relation=plan.relation
    )


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
    from .types import Session

    return Session()


def repl(o: Options) -> int:
    from .types import Session

    _check_turn_flags(o)
    backend = _backend(o)
    model = _model(o, backend)
    reasoner = backend.reasoner(model)
    session: Session | None = None
    if not o.interactive:
        session = _open_session(o) if o.session_name is not None else Session()
    state = {"session": session}
    name = o.session_name

    def turn(line: str) -> None:
        current = state["session"]
        result = _run_turn(o, reasoner, line, current, _turn_context(line, o))
        if current is not None and result.session is not None:
            if name is not None:
                new = result.session.messages[len(current.messages) :]
                _store().append(name, new, session_id=current.id)
            state["session"] = result.session

    interactive_terminal = sys.stdin.isatty()
    if interactive_terminal:
        mode = "interactive (each turn stateless)" if o.interactive else "conversational"
        where = f", session '{name}'" if name else ""
        note(f"ORE {__version__} {mode}, model {model}{where}. /exit or Ctrl-D to leave.")
    from .paths import ore_home
    from .repl import read_lines, run_repl

    lines = read_lines("> ", history=ore_home() / "history")
    if o.prompt:
        lines = _prepend(o.prompt, lines)
    return run_repl(lines, turn, report=report, keep_going=interactive_terminal)


def _prepend(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest


def list_sessions() -> None:
    infos = _store().list()
    if not infos:
        note("no saved sessions")
        return
    for info in infos:
        if info.problem is not None:
            click.echo(f"{info.name}\tunreadable: {info.problem}")
        else:
            click.echo(f"{info.name}\t{info.message_count} messages\t{info.id}")


def list_models(o: Options) -> None:
    from .models import default_model, no_models

    backend = _backend(o)
    models = backend.list_models()
    if not models:
        raise no_models(backend.address, backend.name)
    chosen = default_model(models)
    for name in models:
        click.echo(name + ("\t(default)" if name == chosen else ""))


def list_tools() -> None:
    """One line per tool: name, the permissions it needs (or none), description."""
    from .tools import TOOL_REGISTRY

    for name in sorted(TOOL_REGISTRY):
        tool = TOOL_REGISTRY[name]
        click.echo(f"{name}\t{','.join(tool.permissions) or 'none'}\t{tool.description}")


def list_skills() -> None:
    """One line per skill (name, description), from frontmatter only; malformed ones warned."""
    from .skills import discover_skills, skill_roots

    catalog = discover_skills(warn=_skill_warning)
    if not catalog.skills:
        note("no skills found in " + ", ".join(str(r) for r in skill_roots()))
    for meta in catalog.skills.values():
        click.echo(f"{meta.name}\t{meta.description}")
