"""Replay and chaining: the one turn an artifact asks for, as plain data for `execute`.

Replay (no new prompt) sends what the artifact recorded; chaining (a new prompt) passes the
artifact's answer as turn-scoped context, marked as coming from that artifact, and never stored in
a session. Either way the caller makes exactly one reasoner call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any, Literal

from .._frozen import contract
from ..types import Message, ToolResult
from ._contract import ExecutionArtifact

__all__ = ["ArtifactTurn", "artifact_context", "plan_turn"]


@contract
class ArtifactTurn:
    """The one turn an artifact asks for: what to send and how it relates to the artifact.

    :param relation: "replay" (no new prompt) or "chain" (a new prompt, the parent's answer as
        turn-scoped context).
    :param messages: the input messages for `execute` (a v2 replay: every recorded message).
    :param system: the system text for `execute` (None for a v2 replay: it is in `messages`).
    :param model_id: the recorded model; callers let `--model` override it.
    :param controls: the turn controls to send again (a v3 replay: the recorded ones, in their
        JSON form; callers let flags override each); empty for a chain, a new turn.
    """

    parent: ExecutionArtifact
    relation: Literal["replay", "chain"]
    prompt: str
    messages: tuple[Message, ...]
    tool_results: tuple[ToolResult, ...]
    system: str | None
    model_id: str
    controls: Mapping[str, Any] = field(default_factory=dict)


def artifact_context(parent: ExecutionArtifact) -> ToolResult:
    """The parent's answer as turn-scoped context, marked "[Artifact:<execution_id>]"."""
    return ToolResult(
        tool_name=parent.execution_id,
        output=parent.output.content,
        kind="artifact",
        metadata={"artifact_version": parent.version, "model_id": parent.output.model_id},
    )


def plan_turn(
    parent: ExecutionArtifact, prompt: str | None = None, *, system: str | None = None
) -> ArtifactTurn:
    """Replay `parent` (no prompt) or chain from it (a prompt).

    A v2 replay sends the recorded messages exactly and ignores `system`; a v1 replay sends
    `input.prompt` under `system` (the persona); a chain sends `system`, the parent's answer as an
    artifact context message, then `prompt`.
    """
    if prompt is None:
        if parent.messages is not None:
            return ArtifactTurn(
                parent,
                "replay",
                parent.prompt,
                parent.messages,
                (),
                None,
                parent.model_id,
                parent.controls,
            )
        message = Message(role="user", content=parent.prompt)
        return ArtifactTurn(
            parent, "replay", parent.prompt, (message,), (), system, parent.model_id
        )
    message = Message(role="user", content=prompt)
    context = (artifact_context(parent),)
    return ArtifactTurn(parent, "chain", prompt, (message,), context, system, parent.model_id)
