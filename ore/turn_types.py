"""The contracts of a turn in flight: what the router may pick and picked, a turn's gathered
context and its extra request fields (options, format, thinking, images), and the `Reasoner`
protocol the core calls. Importable from `ore.types` like every contract; defined here so that
commands that run no turn never define them (see `ore.types`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, Protocol

from ._frozen import contract
from .errors import DataError
from .types import (
    ActiveSkill,
    Message,
    Response,
    ToolResult,
    _dict,
    _float,
    _require_mapping,
    _str,
    new_id,
    now,
)

__all__ = [
    "NO_TURN_OPTIONS",
    "Image",
    "Reasoner",
    "RoutingDecision",
    "RoutingTarget",
    "TurnContext",
    "TurnOptions",
]


@contract
class RoutingTarget:
    """Something the router may pick: a tool or a skill, with the hint phrases that select it."""

    name: str
    target_type: Literal["tool", "skill"]
    description: str = ""
    hints: tuple[str, ...] = ()


@contract
class RoutingDecision:
    """What the router decided for one prompt, and why. `target` is None on fallback."""

    target: str | None
    target_type: Literal["tool", "skill", "fallback"]
    confidence: float
    args: Mapping[str, str] = field(default_factory=dict)
    reasoning: str = ""
    id: str = field(default_factory=new_id)
    timestamp: float = field(default_factory=now)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "target_type": self.target_type,
            "confidence": self.confidence,
            "args": dict(self.args),
            "reasoning": self.reasoning,
            "id": self.id,
            "timestamp": self.timestamp,
        }

    @classmethod
    def from_dict(cls, data: object) -> RoutingDecision:
        d = _require_mapping(data, "routing decision")
        target = d.get("target")
        if target is not None and not isinstance(target, str):
            raise DataError("routing decision field 'target' must be a string or null")
        target_type = _str(d, "target_type", "routing decision")
        if target_type not in ("tool", "skill", "fallback"):
            raise DataError("routing decision field 'target_type' must be tool, skill or fallback")
        args = _dict(d, "args", "routing decision")
        return cls(
            target=target,
            target_type=target_type,  # type: ignore[arg-type]
            confidence=_float(d, "confidence", "routing decision"),
            args={str(k): str(v) for k, v in args.items()},
            reasoning=_str(d, "reasoning", "routing decision", default=""),
            id=_str(d, "id", "routing decision", default=new_id()),
            timestamp=_float(d, "timestamp", "routing decision", default=now()),
        )


@contract
class TurnContext:
    """Turn-scoped context the edge gathers before one execute call; never stored anywhere.

    :param tool_results: tool output (and upstream artifact answers) for this turn only.
    :param skills: activated skills' instructions for this turn only.
    :param routing: the router's decision, when `--route` was given.
    """

    tool_results: tuple[ToolResult, ...] = ()
    skills: tuple[ActiveSkill, ...] = ()
    routing: RoutingDecision | None = None


@contract
class Image:
    """An image attached to one turn (`--attach`): turn-scoped like a tool result, never stored
    in a session. `name` is the path as given ("-" for stdin); what is recorded of it (in an
    artifact) is `record()`: never the bytes."""

    name: str
    media_type: str
    data: bytes = field(repr=False)

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def sha256(self) -> str:

        import hashlib  # not at import time: 3.5 ms that a dry run need not pay

        return hashlib.sha256(self.data).hexdigest()

    def record(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "media_type": self.media_type,
            "size": self.size,
            "sha256": self.sha256,
        }


@contract
class TurnOptions:
    """What one turn asks of the model besides its messages; per invocation, never stored in a
    session. The core passes it to the one reasoner call untouched; each backend puts it on its
    wire (see docs/turn-controls.md). All default: the request is exactly a plain turn's.

    :param options: model options by Ollama's names (`temperature`, `num_predict`, `stop` as a
        list, ...), already typed and range-checked.
    :param keep_alive: Ollama's `keep_alive` (seconds as an int, or a duration such as "5m").
    :param schema: a JSON Schema the answer must follow (Ollama `format`, OpenAI
        `response_format`).
    :param think: True/False, or a level ("low", "medium", "high"); None lets the server decide.
    :param images: images for the turn's user message.
    """

    options: Mapping[str, Any] = field(default_factory=dict)
    keep_alive: str | int | None = None
    schema: Mapping[str, Any] | None = None
    think: bool | str | None = None
    images: tuple[Image, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of what is set (images as their records), as `--dry-run` shows it and
        an artifact records it; `{}` when nothing is."""
        data: dict[str, Any] = {}
        if self.options:
            data["options"] = {
                k: list(v) if isinstance(v, tuple) else v for k, v in self.options.items()
            }
        if self.keep_alive is not None:
            data["keep_alive"] = self.keep_alive
        if self.schema is not None:
            data["schema"] = dict(self.schema)
        if self.think is not None:
            data["think"] = self.think
        if self.images:
            data["images"] = [image.record() for image in self.images]
        return data


#: A turn with no extra request fields.
NO_TURN_OPTIONS = TurnOptions()


class Reasoner(Protocol):
    """Turns an ordered message list into one response, by one call to a model.

    The core calls nothing else; `ore.backends` provides the implementations. `options` are the
    turn's extra request fields (none by default: a plain request).
    """

    @property
    def model_id(self) -> str: ...

    def complete(
        self, messages: Sequence[Message], options: TurnOptions = NO_TURN_OPTIONS
    ) -> Response:
        """Return the whole answer at once."""
        ...

    def stream(
        self,
        messages: Sequence[Message],
        on_token: Callable[[str], None],
        options: TurnOptions = NO_TURN_OPTIONS,
        on_thinking: Callable[[str], None] | None = None,
    ) -> Response:
        """Pass each piece of the answer to `on_token` (and of the reasoning, if any, to
        `on_thinking`) as it arrives, then return the whole."""
        ...
