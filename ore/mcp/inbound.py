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
import stat
from collections.abc import AsyncIterator, Container
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["MAX_LINE", "Cutter", "Inbound", "Rejected", "judge"]

#: The longest line read (64 MiB): a tool's largest argument, an 8 MiB snippet, is at most
#: 48 MiB once JSON escapes every character as `\uXXXX`.
MAX_LINE = 64 * 1024 * 1024

#: The most read from stdin at once.
_CHUNK = 64 * 1024


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


def _rejected(line: bytes, exc: ValidationError) -> Rejected | None:
    raw = _loads(line)
    if raw is _NOT_JSON:
        return Rejected(None, types.PARSE_ERROR, "Parse error: a line must be one JSON object")
    if isinstance(raw, dict) and "method" not in raw and ("result" in raw or "error" in raw):
        return None  # a response from the client, malformed: a response is never answered
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
    """The line's `id` when it is one a client can match its answer by, and that an answer
    can carry (a string holding a lone surrogate cannot be written as JSON text)."""
    ident = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(ident, int) and not isinstance(ident, bool):
        return ident
    if isinstance(ident, str):
        try:
            ident.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return ident
    return None


class Replies(Protocol):
    """Where an error answer goes: the server's write stream (`Ledger.counted`)."""

    async def send(self, item: Any) -> None: ...


class Cutter:
    """Bytes as they come, cut into lines of at most `limit` bytes (the newline not counted).
    A longer line is dropped as it comes, never held, and given as None once it ends."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._held = bytearray()
        self._over = False

    def feed(self, chunk: bytes) -> list[bytes | None]:
        """The lines `chunk` ends (what follows its last newline is held for the next)."""
        lines: list[bytes | None] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if not self._over:
                self._held += chunk[start:] if end < 0 else chunk[start:end]
                if len(self._held) > self._limit:
                    self._held.clear()
                    self._over = True
            if end < 0:
                return lines
            lines.append(self.end())
            start = end + 1

    def end(self) -> bytes | None:
        """The line held (at the end of the input: one with no newline after it)."""
        line = None if self._over else bytes(self._held)
        self._held.clear()
        self._over = False
        return line


class Inbound:
    """stdin, owned: read through a private duplicate of fd 0 (fd 0 itself then reads the null
    device, so nothing else in the process can take the client's bytes, as the SDK's transport
    does), cut into bounded lines (`Cutter`), each judged (`judge`); errors go to `replies`.

    A pipe, socket or terminal is read when the event loop sees it readable: a request wakes
    the loop itself, not a thread that then wakes the loop (the SDK's way, which an idle server
    paid for on each call). Anything else (`ore mcp < requests.jsonl`: a file, which epoll
    cannot watch) is read in a worker thread."""

    def __init__(
        self,
        replies: Replies,
        limit: int = MAX_LINE,
        fd: int | None = 0,
        owed: Container[Any] = (),
    ) -> None:
        """`fd` None: stdin was closed when ORE started (`ore mcp <&-`), and its number may
        now be a descriptor of ORE's own: there are no messages. `owed`: the ids of requests
        taken in and not answered yet; an error for a line reusing one goes out as null, so
        that request still gets its one answer."""
        self._replies, self._limit, self._owed = replies, limit, owed
        self._fd = -1
        if fd is None:
            return
        self._fd = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
        if fd == 0:
            devnull = os.open(os.devnull, os.O_RDONLY)
            try:
                os.dup2(devnull, 0)
            finally:
                os.close(devnull)
        mode = os.fstat(self._fd).st_mode
        self._polled = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(self._fd)

    async def messages(self) -> AsyncIterator[SessionMessage]:
        """The client's messages until stdin ends; what is no message is answered here."""
        if self._fd < 0:
            return
        cutter = Cutter(self._limit)
        while True:
            chunk = await self._chunk()
            lines = cutter.feed(chunk) if chunk else [cutter.end()]
            for line in lines:
                judged = self._over() if line is None else judge(line)
                if isinstance(judged, Rejected):
                    if judged.ident is not None and judged.ident in self._owed:
                        judged = Rejected(None, judged.code, judged.message)
                    await self._replies.send(judged.answer())
                elif judged is not None:
                    yield judged
            if not chunk:
                os.close(self._fd)
                return

    def _over(self) -> Rejected:
        return Rejected(
            None, types.INVALID_REQUEST, f"Invalid request: a line over {self._limit} bytes"
        )

    async def _chunk(self) -> bytes:
        """What stdin holds next (b"" at its end, or when it cannot be read any more)."""
        try:
            if self._polled:
                await anyio.wait_readable(self._fd)
                return os.read(self._fd, _CHUNK)
            # Not cancellable in the thread, abandoned on cancel: the process is ending then.
            return await anyio.to_thread.run_sync(os.read, self._fd, _CHUNK, abandon_on_cancel=True)
        except OSError:  # a terminal hung up (EIO): the client is gone, as at the end
            return b""
