"""The client's messages as `ore mcp` reads them: stdin cut into lines of at most `MAX_LINE`
bytes, and each line judged as a JSON-RPC 2.0 message before the SDK's server sees it.

The SDK's own stdio reader hands the server whatever its parser makes of a line, and the server
answers nothing it cannot read: a request whose `params` is a string, a lone surrogate, a batch,
or an `id` of the wrong type (the parser takes such a line for a notification) waited forever for
an answer. It also read a line of any length into memory. Here every line is either a message
passed on, or a JSON-RPC error answered at once: -32700 for what is not JSON, -32600 for JSON
that is no message, with the line's `id` when it has a usable one (else null, as JSON-RPC says).
Blank lines are nothing and get nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import IO, Any, Protocol

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["MAX_LINE", "Inbound", "Rejected", "judge"]

#: The longest line read (64 MiB): a tool's largest argument, an 8 MiB snippet, is at most
#: 48 MiB once JSON escapes every character as `\uXXXX`.
MAX_LINE = 64 * 1024 * 1024

#: What a line over `MAX_LINE` is skipped in, to its end, without keeping it.
_SKIP = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Rejected:
    """A line that is no message: the error it is answered with."""

    ident: str | int | None
    code: int
    message: str

    def answer(self) -> SessionMessage:
        error = types.ErrorData(code=self.code, message=self.message)
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=self.ident, error=error))


def judge(line: bytes) -> SessionMessage | Rejected | None:
    """What one line of stdin is: a message for the server, an error to answer, or nothing
    (a blank line). Pure: the SDK's parser first (the common case costs one parse), then the
    line read again only when it failed or claims to be a notification."""
    if not line.strip():
        return None
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return _rejected(line, exc)
    if isinstance(message, types.JSONRPCNotification):
        # The parser ignores an `id` it cannot use (true, 1.5, null, an object) and reads a
        # request as a notification, which is never answered: such a line is refused instead.
        raw = _loads(line)
        if isinstance(raw, dict) and "id" in raw:
            return Rejected(None, types.INVALID_REQUEST, _ID_PROBLEM)
    return SessionMessage(message)


_ID_PROBLEM = "Invalid request: id must be a string or an integer"


def _rejected(line: bytes, exc: ValidationError) -> Rejected:
    raw = _loads(line)
    if raw is _NOT_JSON:
        return Rejected(None, types.PARSE_ERROR, "Parse error: a line must be one JSON object")
    ident = _ident(raw)
    if any(error["type"] == "json_invalid" for error in exc.errors()):
        # JSON Python reads and the SDK's parser does not: a lone surrogate, say
        return Rejected(ident, types.PARSE_ERROR, "Parse error: the line is not valid JSON text")
    return Rejected(ident, types.INVALID_REQUEST, f"Invalid request: {_problem(raw, ident)}")


def _problem(raw: Any, ident: str | int | None) -> str:
    """What makes JSON that parsed no JSON-RPC message, said so a client's author can mend it."""
    if isinstance(raw, list):
        return "a batch is not supported; send one message a line"
    if not isinstance(raw, dict):
        return "a message is a JSON object"
    if raw.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in raw and ident is None:
        return "id must be a string or an integer"
    if "method" in raw:
        if not isinstance(raw["method"], str):
            return "method must be a string"
        return "params must be an object"
    if "result" in raw or "error" in raw:
        if ident is None:
            return "a response has an id"
        if "result" in raw:
            return "result must be an object"
        return "error must be an object with an integer code and a string message"
    return "a message has a method, or a result or an error"


_NOT_JSON = object()


def _loads(line: bytes) -> Any:
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _NOT_JSON


def _ident(raw: Any) -> str | int | None:
    """The line's `id` when it is one a client can match its answer by."""
    ident = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool)):
        return ident
    return None


class Replies(Protocol):
    """Where an error answer goes: the server's write stream (`Ledger.counted`)."""

    async def send(self, item: Any) -> None: ...


class Inbound:
    """stdin, owned: read through a private duplicate of fd 0 (fd 0 itself then reads the null
    device, so nothing else in the process can take the client's bytes, as the SDK's transport
    does), cut into bounded lines, each judged (`judge`); errors go to `replies`."""

    def __init__(self, replies: Replies, limit: int = MAX_LINE, fd: int = 0) -> None:
        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
        if fd == 0:
            devnull = os.open(os.devnull, os.O_RDONLY)
            try:
                os.dup2(devnull, 0)
            finally:
                os.close(devnull)
        self._file: IO[bytes] = os.fdopen(private, "rb")
        self._replies, self._limit = replies, limit

    async def messages(self) -> AsyncIterator[SessionMessage]:
        """The client's messages until stdin ends; what is no message is answered here."""
        over = Rejected(
            None, types.INVALID_REQUEST, f"Invalid request: a line over {self._limit} bytes"
        )
        while True:
            # A thread no cancellation reaches, abandoned on cancel: the process is ending then.
            line = await anyio.to_thread.run_sync(self._line, abandon_on_cancel=True)
            if line == b"":
                self._file.close()  # only at the end: an abandoned read may still hold it else
                return
            judged = over if line is None else judge(line)
            if isinstance(judged, Rejected):
                await self._replies.send(judged.answer())
            elif judged is not None:
                yield judged

    def _line(self) -> bytes | None:
        """The next line, b"" at the end, or None for a line over the limit: read to its end
        and dropped, never held."""
        line = self._file.readline(self._limit + 1)
        if len(line) <= self._limit or line.endswith(b"\n"):
            return line
        while line and not line.endswith(b"\n"):
            line = self._file.readline(_SKIP)
        return None
