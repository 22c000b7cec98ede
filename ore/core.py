"""The irreducible loop: input -> one reasoner call -> output.

Everything a turn depends on arrives as an argument: the new input messages, the session, the
turn-scoped tool results and skills, the system text and the reasoner itself. `execute` makes exactly
one reasoner call, does no other I/O, keeps no state between calls and mutates nothing it was
given; the session that includes this turn comes back as a new value.

The message list sent to the reasoner is, in this order::

    [system persona] + [skills, role=system] + [tool results, role=user] + session history + input
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .types import ActiveSkill, Message, Reasoner, Response, Session, ToolResult

__all__ = ["Turn", "build_messages", "execute", "render_skill", "render_tool_result"]


@dataclass(frozen=True, slots=True)
class Turn:
    """The outcome of one execution.

    :param response: what the reasoner answered.
    :param session: the session including this turn's input and answer (None without a session).
    :param sent: exactly the message list the reasoner received.
    """

    response: Response
    session: Session | None
    sent: tuple[Message, ...]


def render_skill(skill: ActiveSkill) -> Message:
    """A skill's instructions as the system message the reasoner sees."""
    return Message(role="system", content=f"[Skill:{skill.name}]\n{skill.instructions}")


def render_tool_result(result: ToolResult) -> Message:
    """A tool's (or an upstream artifact's) output as a user message marked with its source."""
    label = "Artifact" if result.kind == "artifact" else "Tool"
    return Message(role="user", content=f"[{label}:{result.tool_name}]\n{result.output}")


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
        recorded turn passes the whole recorded list (with no session and no system), which is
        why other roles are allowed here, but never system messages alongside a session.
    :param session: prior turns, or None for a stateless turn.
    :param tool_results: turn-scoped tool output, injected after skills and before history.
    :param skills: turn-scoped skill instructions, injected right after the system persona.
    :param system: the persona or one-shot system prompt; None or empty sends none.
    """
    if not messages:
        raise ValueError("a turn needs at least one input message")
    if session is not None and any(m.role == "system" for m in messages):
        raise ValueError("system messages are never stored in a session: pass them as `system`")
    head = (Message(role="system", content=system),) if system else ()
    return (
        head
        + tuple(render_skill(s) for s in skills)
        + tuple(render_tool_result(r) for r in tool_results)
        + (session.messages if session is not None else ())
        + tuple(messages)
    )


def execute(
    messages: Sequence[Message],
    session: Session | None = None,
    tool_results: Sequence[ToolResult] = (),
    skills: Sequence[ActiveSkill] = (),
    *,
    reasoner: Reasoner,
    system: str | None = None,
    on_token: Callable[[str], None] | None = None,
) -> Turn:
    """Run one turn: build the message list, make exactly one reasoner call, return the outcome.

    :param on_token: when given, the reasoner streams and each piece of text is passed here as it
        arrives; the returned response holds the whole text either way.

    If the call raises (a server error, Ctrl-C), nothing was changed: the caller's session is still
    the one it had, so a cancelled reply leaves no half turn behind.
    """
    sent = build_messages(messages, session, tool_results, skills, system=system)
    response = reasoner.complete(sent) if on_token is None else reasoner.stream(sent, on_token)
    new_session = None
    if session is not None:
        answer = Message(role="assistant", content=response.content, timestamp=response.timestamp)
        new_session = session.append(*messages, answer)
    return Turn(response=response, session=new_session, sent=sent)
