"""What one ORE turn is asked to do: the request `ore.turn.run_turn` takes.

A request holds every choice the turn makes (server, model, system prompt, context, controls,
where the conversation comes from and is saved, where the artifact goes) as plain values, so a
Python caller, the single turn, an artifact replay and each REPL turn describe a turn the same
way and differ only in how they build the request and show the result (`ore.turn.result`).
"""

from __future__ import annotations

import functools
import os
from dataclasses import field
from typing import TYPE_CHECKING, Any

from .._frozen import contract
from ..turn_types import NO_TURN_OPTIONS, TurnOptions
from .context import ContextPlan
from .files import ContextFile

if TYPE_CHECKING:
    from ..artifacts import ExecutionArtifact, Relation
    from ..types import Message, Session, ToolResult

__all__ = ["Conversation", "Server", "TurnRequest", "persona"]


@functools.cache
def persona() -> str:
    """ORE's default system prompt (Aya, data in ore/prompts/aya.txt), read once a process
    (by path: `importlib.resources` costs a dry run 7 ms of imports)."""
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "prompts", "aya.txt")
    with open(path, encoding="utf-8") as f:
        return f.read().strip()


@contract
class Server:
    """Which model server a turn talks to; unset values come from the environment
    (`ORE_BACKEND`, `OLLAMA_HOST`, `ORE_BASE_URL`, ...) by `ore.backends.choose_backend`.

    :param backend: "ollama", "openai" or a preset ("deepseek"); None: ORE_BACKEND, else Ollama.
    :param base_url: the server's address (`--base-url`).
    :param timeout: seconds to wait for the server to answer at all.
    :param max_seconds: the most one call may take (`--max-time`); None: the default limit.
    :param max_bytes: the most one answer may hold (`--max-size`); None: the default limit.
    :param recorded: the backend name and address an artifact recorded; they fill in only what
        the rest leaves unset, and never receive a credential.
    :param key_env: the environment variable holding the key for `base_url` (the config
        file's `api_key_env`, given only for the address the file configured); None: the
        backend's own variables.
    """

    backend: str | None = None
    base_url: str | None = None
    timeout: float | None = None
    max_seconds: float | None = None
    max_bytes: int | None = None
    recorded: tuple[str, str | None] | None = None
    key_env: str | None = None


@contract
class Conversation:
    """Where a turn's history comes from and where the turn is kept.

    :param session: the whole conversation so far.
    :param name: the saved session the turn is appended to; None keeps it in memory only.
    :param saved: how many of `session`'s messages the saved session already holds (0 for a
        new session, or one continued from another under a new name).
    :param history: send only the last N turns (`--history N`); None sends them all.
    """

    session: Session
    name: str | None = None
    saved: int = 0
    history: int | None = None


@contract
class TurnRequest:
    """One turn, fully described. Only `messages` is required.

    :param messages: the new messages of this turn (usually one user message).
    :param prompt: the prompt as an artifact records it (default: the last message's text).
    :param model: the model; None: ORE_MODEL, else the server's default (asked only then).
    :param system: the system prompt; ORE's persona unless given, None for none at all.
    :param server: which server (ignored when `run_turn` is given a backend).
    :param controls: model options, schema, thinking, images.
    :param context: the checked tool, grants, skill and routing (`plan_context`).
    :param tool_results: context already gathered, sent before the plan's (an artifact's
        answer when chaining).
    :param piped: text read from stdin, which some tools take as an argument.
    :param files: text files sent as context (`-f`), each a marked block before the tool
        output at the head of the user message; turn-scoped, recorded in the artifact by name,
        size and sha256.
    :param conversation: the session the turn continues and is saved to; None: a lone turn.
    :param artifact_out: build the execution artifact and write it to this path; "-" builds
        it without writing (the caller prints it); None: no artifact.
    :param artifact_version: the artifact format to write.
    :param parent: the artifact this turn replays or chains from, and how (`relation`).
    :param stream: ask the model to stream (`run_turn`'s `on_token` then receives pieces).
    """

    messages: tuple[Message, ...]
    prompt: str | None = None
    model: str | None = None
    system: str | None = field(default_factory=persona)
    server: Server = field(default_factory=Server)
    controls: TurnOptions = NO_TURN_OPTIONS
    context: ContextPlan = field(default_factory=ContextPlan)
    tool_results: tuple[ToolResult, ...] = ()
    piped: str | None = None
    files: tuple[ContextFile, ...] = ()
    conversation: Conversation | None = None
    artifact_out: str | None = None
    artifact_version: str | None = None
    parent: ExecutionArtifact | None = None
    relation: Relation | None = None
    stream: bool = False

    @classmethod
    def of(cls, prompt: str, **fields: Any) -> TurnRequest:
        """A request for one user message `prompt`: `TurnRequest.of("hi", model="llama3.2")`."""
        from ..types import Message

        return cls(messages=(Message(role="user", content=prompt),), **fields)

    @property
    def recorded_prompt(self) -> str:
        if self.prompt is not None:
            return self.prompt
        return self.messages[-1].content if self.messages else ""
