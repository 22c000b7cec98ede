"""Every error ORE raises on purpose, under one root.

    OreError                  exit 1 unless a subclass says otherwise
    ├── DataError             a contract (message, session, artifact ...) read from untrusted data is malformed
    ├── OptionError           a turn control (-o, --keep-alive, --schema, --think) is malformed, or
    │                         the chosen backend cannot send it (a usage error, exit 2)
    ├── ModelError            the model server could not give an answer
    │   ├── ServerUnreachable     nothing listens at the configured address, or it timed out
    │   ├── ModelNotFound         the server does not have the requested model
    │   ├── NoModels              the server has no models at all
    │   └── ContextTooLong        the server refused a prompt longer than the model's context
    ├── StoreError            a session could not be found, read, named or written
    ├── ToolError             a tool is unknown, got a bad argument, or failed
    │   └── ToolArgError          a --tool-arg is not KEY=VALUE (a usage error, exit 2)
    ├── GateRejected          the permission gate refused a tool
    ├── RouteError            the router could not do what was asked
    ├── SkillError            a skill is unknown, malformed, or asked for something outside itself
    ├── ArtifactError         an execution artifact is unreadable or invalid
    ├── ConfigError           the config file ($ORE_HOME/config.toml) is unreadable or malformed
    └── GraphError            a codebase graph query could not be answered

`message` is the single line the CLI prints (after "Error: "); it says what went wrong and what to
do next. Context travels as keyword-only attributes, never parsed back out of the message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from json import JSONDecodeError

__all__ = [
    "ArtifactError",
    "ConfigError",
    "ContextTooLong",
    "DataError",
    "GateRejected",
    "GraphError",
    "ModelError",
    "ModelNotFound",
    "NoModels",
    "OptionError",
    "OreError",
    "RouteError",
    "ServerUnreachable",
    "SkillError",
    "StoreError",
    "ToolArgError",
    "ToolError",
    "json_error_words",
]


class OreError(Exception):
    """Base for every error ORE raises on purpose. `message` is the line the CLI prints."""

    exit_code: ClassVar[int] = 1

    def __init__(self, message: str) -> None:
        # One line, always: a multi-line message would break "one line on stderr".
        message = " ".join(str(message).split())
        super().__init__(message)
        self.message = message


class DataError(OreError):
    """Raised when a contract read from untrusted data (JSON on disk, stdin) is malformed."""


class OptionError(OreError):
    """Raised when a turn control is malformed (a wrong type or range, an unknown key, a schema
    that is not JSON Schema) or the chosen backend cannot honour it: a usage error, found before
    any request."""

    exit_code: ClassVar[int] = 2


class ModelError(OreError):
    """Raised when the model server cannot give an answer."""


class ServerUnreachable(ModelError):
    """Raised when nothing answers at the model server's address (refused, reset or timed out)."""

    def __init__(self, message: str, *, address: str) -> None:
        super().__init__(message)
        self.address = address


class ModelNotFound(ModelError):
    """Raised when the server does not have the requested model."""

    def __init__(self, message: str, *, model: str, available: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.model = model
        self.available = available


class NoModels(ModelError):
    """Raised when the server lists no models at all."""


class ContextTooLong(ModelError):
    """Raised when the server refuses the messages as longer than the model's context window."""


class StoreError(OreError):
    """Raised when a session cannot be found, read, named or written."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class ToolError(OreError):
    """Raised when a tool is unknown, gets a bad argument, or fails."""

    def __init__(self, message: str, *, tool: str | None = None) -> None:
        super().__init__(message)
        self.tool = tool


class ToolArgError(ToolError):
    """Raised when a `--tool-arg` is not KEY=VALUE or repeats a key: a usage error."""

    exit_code: ClassVar[int] = 2


class GateRejected(OreError):
    """Raised when the permission gate refuses to run a tool."""

    def __init__(self, message: str, *, tool: str, missing: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.tool = tool
        self.missing = missing


class RouteError(OreError):
    """Raised when routing cannot be done as asked."""


class SkillError(OreError):
    """Raised when a skill is unknown or malformed, or a resource lies outside its folder."""

    def __init__(self, message: str, *, skill: str | None = None) -> None:
        super().__init__(message)
        self.skill = skill


class ArtifactError(OreError):
    """Raised when an execution artifact cannot be read or does not validate."""


class GraphError(OreError):
    """Raised when a codebase graph query cannot be answered (missing root, unknown file ...)."""


class ConfigError(OreError):
    """Raised when the config file cannot be read or written, or holds a malformed value; the
    message names the file and, where known, the line."""

    def __init__(self, message: str, *, path: object = None, line: int | None = None) -> None:
        super().__init__(message)
        self.path = None if path is None else str(path)
        self.line = line


class HomeUnusable(ConfigError):
    """Raised when ORE's home folder itself cannot be read (a symlink loop, a file in its
    place, no permission), so the config file in it cannot even be looked for. A turn goes on
    without the file (one warning): an unusable home never stops a plain turn."""


def json_error_words(exc: JSONDecodeError) -> str:
    """Where and why JSON failed to parse, for a one-line message: "Unterminated string
    starting at line 2 column 5" (the parser's own words, some of which end in "at", are
    never followed by a second "at")."""
    return f"{exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}"
