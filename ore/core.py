"""The irreducible loop: input -> one reasoner call -> output.

Everything a turn depends on arrives as an argument: the new input messages, the session, the
turn-scoped tool results and skills, the system text and the reasoner itself. `execute` makes exactly
one reasoner call, does no other I/O, keeps no state between calls and mutates nothing it was
given; the session that includes this turn comes back as a new value.

The message list sent to the reasoner has one shape that every chat template accepts::

    [one system message: persona, then each skill as a marked block]
    + session history (user and assistant, alternating)
    + [one user message: each tool or artifact result as a marked block, then the input]

Shape 2 (ORE 0.11): tool results used to be separate user messages before the history, and each
skill a system message of its own (shape 1, ORE 0.6 to 0.10). Chat templates keep only the first
system message, or refuse two user messages in a row, so both now travel in the turn's own
messages. Tool output stays in a user message, marked: untrusted text never gains the system role.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ._frozen import contract
from .turn_types import NO_TURN_OPTIONS, Reasoner, TurnOptions
from .types import ActiveSkill, Message, Response, Session, ToolResult

__all__ = ["Turn", "build_messages", "execute", "render_skill", "render_tool_result"]


@contract
class Turn:
    """The outcome of one execution.

    :param response: what the reasoner answered.
    :param session: the session including this turn's input and answer (None without a session).
    :param sent: exactly the message list the reasoner received.
    :param options: exactly the extra request fields it received with them.
    """

    response: Response
    session: Session | None
    sent: tuple[Message, ...]
    options: TurnOptions = NO_TURN_OPTIONS


def _block(kind: str, name: str, text: str) -> str:
    """`text` between `[KIND:NAME]` and `[/KIND:NAME]` lines, so where it ends is never a guess."""
    end = "" if text.endswith("\n") else "\n"
    return f"[{kind}:{name}]\n{text}{end}[/{kind}:{name}]"


def render_skill(skill: ActiveSkill) -> str:
    """A skill's instructions as the marked block the system message carries."""
    return _block("Skill", skill.name, skill.instructions)


def render_tool_result(result: ToolResult) -> str:
    """A tool's (or an upstream artifact's) output as the marked block the user message carries."""
    kind = {"artifact": "Artifact", "file": "File"}.get(result.kind, "Tool")
    return _block(kind, result.tool_name, result.output)


def build_messages(
    messages: Sequence[Message],
    session: Session | None = None,
    tool_results: Sequence[ToolResult] = (),
    skills: Sequence[ActiveSkill] = (),
    *,
    system: str | None = None,
) -> tuple[Message, ...]:
    """The exact message list one turn sends: pure, so `--dry-run` can show it without a call.

    :param messages: this turn's input, appended last. Normally one user message; a replay of a
        recorded turn passes the whole recorded list (with no session, no system, no skills and
        no tool results), which comes back unchanged.
    :param session: prior turns, or None for a stateless turn.
    :param tool_results: turn-scoped tool output, as marked blocks at the head of the last input
        message (which must then be a user message), before the user's own words.
    :param skills: turn-scoped skill instructions, as marked blocks after the persona in the one
        system message.
    :param system: the persona or one-shot system prompt; None or empty sends none (the system
        message then holds only the skills, if any).
    """
    if not messages:
        raise ValueError("a turn needs at least one input message")
    if session is not None and any(m.role == "system" for m in messages):
        raise ValueError("system messages are never stored in a session: pass them as `system`")
    parts = ([system] if system else []) + [render_skill(s) for s in skills]
    head = (Message(role="system", content="\n\n".join(parts)),) if parts else ()
    turn = tuple(messages)
    if tool_results:
        last = turn[-1]
        if last.role != "user":
            raise ValueError(
                "tool results go in the turn's user message: the input must end with one"
            )
        blocks = [render_tool_result(r) for r in tool_results]
        content = "\n\n".join([*blocks, last.content])
        turn = (
            *turn[:-1],
            Message(role="user", content=content, id=last.id, timestamp=last.timestamp),
        )
    return head + (session.messages if session is not None else ()) + turn


def execute(
    messages: Sequence[Message],
    session: Session | None = None,
    tool_results: Sequence[ToolResult] = (),
    skills: Sequence[ActiveSkill] = (),
    *,
    reasoner: Reasoner,
    system: str | None = None,
    on_token: Callable[[str], None] | None = None,
    options: TurnOptions = NO_TURN_OPTIONS,
    on_thinking: Callable[[str], None] | None = None,
) -> Turn:
    """Run one turn: build the message list, make exactly one reasoner call, return the outcome.

    :param on_token: when given, the reasoner streams and each piece of text is passed here as it
        arrives; the returned response holds the whole text either way.
    :param options: the turn's extra request fields (model options, schema, thinking, images),
        passed to the reasoner call untouched; never stored in the session.
    :param on_thinking: with `on_token`, each piece of the model's reasoning is passed here.

    If the call raises (a server error, Ctrl-C), nothing was changed: the caller's session is still
    the one it had, so a cancelled reply leaves no half turn behind.
    """
    sent = build_messages(messages, session, tool_results, skills, system=system)
    if on_token is None:
        response = reasoner.complete(sent, options)
    else:
        response = reasoner.stream(sent, on_token, options, on_thinking)
    new_session = None
    if session is not None:
        answer = Message(role="assistant", content=response.content, timestamp=response.timestamp)
        new_session = session.append(*messages, answer)
    return Turn(response=response, session=new_session, sent=sent, options=options)
