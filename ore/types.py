"""The data contracts every part of ORE speaks: frozen, explicit, JSON round-trippable.

Each contract has `to_dict()` (plain JSON types) and `from_dict()` (which treats its input as
untrusted and raises `DataError` naming the field that is wrong). Timestamps are Unix seconds as
floats and ids are uuid4 strings, as upstream ORE wrote them, so files stay compatible.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from typing import Any, Literal

from ._frozen import contract
from .errors import DataError

# The contracts of a turn in flight (routing, a turn's context and controls, the `Reasoner`
# protocol) are in `ore.turn_types`: commands that run no turn (`--list-skills`, `session list`)
# must not pay for defining them. Every contract is made with `ore._frozen.contract`, a frozen
# slotted dataclass at a quarter of `@dataclass(frozen=True, slots=True)`'s cost to define.


__all__ = [
    "ROLES",
    "ActiveSkill",
    "Message",
    "Response",
    "Session",
    "SkillMetadata",
    "ToolResult",
    "Usage",
    "count_of",
    "messages_to_dicts",
    "new_id",
    "now",
    "valid_text",
]

ROLES = ("system", "user", "assistant")
Role = Literal["system", "user", "assistant"]


def new_id() -> str:
    """A fresh uuid4 string: the id format of every ORE contract. Built here as `uuid.uuid4`
    builds it (16 random bytes, version 4, RFC 4122 variant): importing `uuid` loads `platform`,
    3-6 ms that a library user's `import ore.types` need not pay (the CLI's click loads it)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def now() -> float:
    """The current time as Unix seconds: the timestamp format of every ORE contract."""
    return time.time()


def valid_text(text: str) -> str:
    """`text` made valid Unicode: each lone surrogate (from undecodable argv bytes, a server's
    `\\udcff` escape, a damaged file) becomes U+FFFD, and a split pair is joined again.

    The one place text from outside is made fit to store, send and print: every `Message` and
    `Response` passes its text through here, so a session that already holds a lone surrogate
    still loads, and none is ever written or sent.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


# -- helpers for reading untrusted dicts -------------------------------------------------------


def _require_mapping(data: object, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise DataError(f"{what} must be a JSON object, not {type(data).__name__}")
    return data


def _str(data: Mapping[str, Any], key: str, what: str, *, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        if key not in data and default is None:
            raise DataError(f"{what} is missing the field '{key}'")
        raise DataError(f"{what} field '{key}' must be a string")
    return value


def _float(data: Mapping[str, Any], key: str, what: str, *, default: float | None = None) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        if key not in data and default is None:
            raise DataError(f"{what} is missing the field '{key}'")
        raise DataError(f"{what} field '{key}' must be a number")
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        number = math.inf
    if not math.isfinite(number):
        raise DataError(f"{what} field '{key}' must be a finite number")
    return number


def _dict(data: Mapping[str, Any], key: str, what: str) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, Mapping):
        raise DataError(f"{what} field '{key}' must be an object")
    return dict(value)


def count_of(value: object, scale: int = 1) -> int | None:
    """A number from untrusted JSON (a server's reply, a stored file) as a whole number, times
    `scale`; None for anything that is not a finite number (a bool, NaN, infinity, a string)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    scaled = value * scale
    if isinstance(scaled, float) and not math.isfinite(scaled):
        return None
    return round(scaled)


# -- contracts -------------------------------------------------------------------------------


@contract
class Message:
    """One message of a conversation. `role` is system, user or assistant."""

    role: Role
    content: str
    id: str = field(default_factory=new_id)
    timestamp: float = field(default_factory=now)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise DataError(f"message role must be one of {', '.join(ROLES)}, not {self.role!r}")
        object.__setattr__(self, "content", valid_text(self.content))

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "content": self.content,
            "id": self.id,
            "timestamp": self.timestamp,
        }

    @classmethod
    def from_dict(cls, data: object) -> Message:
        d = _require_mapping(data, "message")
        role = _str(d, "role", "message")
        if role not in ROLES:
            raise DataError(f"message role must be one of {', '.join(ROLES)}, not {role!r}")
        return cls(
            role=role,  # type: ignore[arg-type]
            content=_str(d, "content", "message"),
            id=_str(d, "id", "message", default=new_id()),
            timestamp=_float(d, "timestamp", "message", default=now()),
        )


#: `Usage`'s fields and the `Response.metadata` keys that carry them, in the order the keys are
#: written. The token counts are written twice, under Ollama's names and under OpenAI's (upstream
#: ORE 1.3's), so that readers of either find them.
_USAGE_KEYS = (
    ("tokens_out", "eval_count"),
    ("tokens_in", "prompt_eval_count"),
    ("eval_ns", "eval_duration"),
    ("prompt_ns", "prompt_eval_duration"),
    ("total_ns", "total_duration"),
    ("load_ns", "load_duration"),
    ("finish_reason", "done_reason"),
    ("wall_ms", "duration_ms"),
    ("tokens_in", "prompt_tokens"),
    ("tokens_out", "completion_tokens"),
    ("total_tokens", "total_tokens"),
)


@contract
class Usage:
    """What one model call cost, as the server reported it: the typed view of the counts and
    durations in `Response.metadata`. A field is None when the server did not say.

    :param tokens_in: prompt tokens the server read (Ollama's `prompt_eval_count`, OpenAI's
        `usage.prompt_tokens`).
    :param tokens_out: tokens generated (`eval_count`, `usage.completion_tokens`).
    :param total_tokens: the server's total (`usage.total_tokens`), else in + out.
    :param total_ns: the server's time for the whole request, in nanoseconds (Ollama's
        `total_duration`).
    :param load_ns: time spent loading the model (Ollama's `load_duration`).
    :param prompt_ns: time reading the prompt (`prompt_eval_duration`, llama-server's
        `timings.prompt_ms`).
    :param eval_ns: time generating (`eval_duration`, llama-server's `timings.predicted_ms`).
    :param wall_ms: the whole call as ORE's clock saw it, in milliseconds (`duration_ms`).
    :param finish_reason: why the answer ended: "stop", "length" (the token limit), ...
        (Ollama's `done_reason`, OpenAI's `finish_reason`).
    """

    tokens_in: int | None = None
    tokens_out: int | None = None
    total_tokens: int | None = None
    total_ns: int | None = None
    load_ns: int | None = None
    prompt_ns: int | None = None
    eval_ns: int | None = None
    wall_ms: int | None = None
    finish_reason: str | None = None

    @property
    def seconds(self) -> float | None:
        """The call's duration: ORE's own clock (`wall_ms`), else the server's (`total_ns`)."""
        if self.wall_ms is not None:
            return self.wall_ms / 1000
        if self.total_ns is not None:
            return self.total_ns / 1e9
        return None

    def to_metadata(self) -> dict[str, Any]:
        """The metadata keys these fields are written under (those that are set), as `--json`,
        sessions and artifacts carry them."""
        out: dict[str, Any] = {}
        for name, key in _USAGE_KEYS:
            value = getattr(self, name)
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> Usage:
        """Read back from metadata (a backend's, or one stored in an artifact, untrusted): the
        first of a field's keys that holds a finite number (a string for `finish_reason`) wins;
        anything else is left unset."""
        found: dict[str, Any] = {}
        for name, key in _USAGE_KEYS:
            if name in found:
                continue
            value = metadata.get(key)
            if name == "finish_reason":
                value = value if isinstance(value, str) else None
            else:
                value = count_of(value)
            if value is not None:
                found[name] = value
        return cls(**found)


_NO_USAGE = Usage()


@contract
class Response:
    """What a reasoner returns for one call. `metadata` holds backend counts and durations.

    Known metadata keys (present when the backend gives them): `eval_count`, `prompt_eval_count`,
    `eval_duration`, `prompt_eval_duration`, `total_duration`, `load_duration` (durations in
    integer nanoseconds), `done_reason`, `duration_ms`, `prompt_tokens`, `completion_tokens`,
    `total_tokens`, `backend`. Read the counts and durations through `usage`, their typed view:
    a response made without one (read from a session or an artifact, which store the metadata
    only) derives it from `metadata`. It is not part of the JSON form, which `metadata` is.

    `thinking` is the model's reasoning, apart from the answer in `content` (a thinking model's
    own field, or an inline `<think>...</think>` block split from the start of the text); it is
    never part of `content`, so it never reaches stdout or a session.
    """

    content: str
    model_id: str
    id: str = field(default_factory=new_id)
    timestamp: float = field(default_factory=now)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    thinking: str = ""
    usage: Usage = _NO_USAGE

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", valid_text(self.content))
        object.__setattr__(self, "model_id", valid_text(self.model_id))
        object.__setattr__(self, "thinking", valid_text(self.thinking))
        if self.metadata and self.usage == _NO_USAGE:
            object.__setattr__(self, "usage", Usage.from_metadata(self.metadata))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form; `thinking` only when there was some (so a plain answer's keys are
        exactly upstream's)."""
        data: dict[str, Any] = {
            "id": self.id,
            "model_id": self.model_id,
            "content": self.content,
            "timestamp": self.timestamp,
            "metadata": dict(self.metadata),
        }
        if self.thinking:
            data["thinking"] = self.thinking
        return data

    @classmethod
    def from_dict(cls, data: object) -> Response:
        d = _require_mapping(data, "response")
        return cls(
            content=_str(d, "content", "response"),
            model_id=_str(d, "model_id", "response"),
            id=_str(d, "id", "response"),
            timestamp=_float(d, "timestamp", "response"),
            metadata=_dict(d, "metadata", "response"),
            thinking=_str(d, "thinking", "response", default=""),
        )


@contract
class Session:
    """An ordered, append-only history of user and assistant messages.

    Immutable: `append()` returns a new Session, so a caller's session is never changed behind
    its back. The system message is never part of a session.
    """

    messages: tuple[Message, ...] = ()
    id: str = field(default_factory=new_id)
    created_at: float = field(default_factory=now)

    def __post_init__(self) -> None:
        if any(m.role == "system" for m in self.messages):
            raise DataError("a session never holds system messages")

    def append(self, *messages: Message) -> Session:
        """A new session with `messages` added at the end; this one is left as it was."""
        return replace(self, messages=self.messages + tuple(messages))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created_at": self.created_at,
            "messages": [m.to_dict() for m in self.messages],
        }

    @classmethod
    def from_dict(cls, data: object) -> Session:
        d = _require_mapping(data, "session")
        raw = d.get("messages")
        if not isinstance(raw, list):
            raise DataError("session field 'messages' must be a list")
        messages = []
        for index, item in enumerate(raw):
            try:
                messages.append(Message.from_dict(item))
            except DataError as exc:
                raise DataError(f"session message {index}: {exc.message}") from exc
        if any(m.role == "system" for m in messages):
            raise DataError("a session never holds system messages")
        return cls(
            messages=tuple(messages),
            id=_str(d, "id", "session"),
            created_at=_float(d, "created_at", "session"),
        )


@contract
class ToolResult:
    """The output of one tool run (or one upstream artifact): turn-scoped, never stored.

    `kind` says where the text came from, so the model can tell it apart from the user's words:
    the core renders it as "[Tool:NAME]", "[Artifact:NAME]" or "[File:NAME]" (a `-f` file)
    above the output.
    """

    tool_name: str
    output: str
    status: Literal["ok", "error"] = "ok"
    id: str = field(default_factory=new_id)
    timestamp: float = field(default_factory=now)
    metadata: Mapping[str, Any] = field(default_factory=dict)
    kind: Literal["tool", "artifact", "file"] = "tool"

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool_name": self.tool_name,
            "output": self.output,
            "status": self.status,
            "id": self.id,
            "timestamp": self.timestamp,
            "metadata": dict(self.metadata),
            "kind": self.kind,
        }


@contract
class ActiveSkill:
    """A skill's level-2 instructions, loaded because the skill was activated for this turn."""

    name: str
    instructions: str


@contract
class SkillMetadata:
    """A skill's level-1 metadata, read from its frontmatter alone."""

    name: str
    description: str
    hints: tuple[str, ...] = ()
    path: str = ""
    license: str | None = None
    compatibility: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "hints": list(self.hints),
            "path": self.path,
            "license": self.license,
            "compatibility": self.compatibility,
            "metadata": dict(self.metadata),
            "allowed_tools": list(self.allowed_tools),
        }


def messages_to_dicts(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The JSON form of a message list (used by --dry-run, artifacts and stores)."""
    return [m.to_dict() for m in messages]
