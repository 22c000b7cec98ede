"""What `ore mcp` owes its client, kept between stdin, stdout and the SDK's server: every
request taken in is answered on the wire before the server ends, whether it ends because stdin
closed or because of a signal.

The SDK alone cancels the calls under way when stdin ends (a client piping its requests then
closing stdin lost their answers), and a signal could end the process between a call's return
and its answer's write. Here the client's messages (`ore.mcp.inbound`) are relayed
(`Ledger.relay`): when stdin ends, the end is passed on only once every request taken in is answered; its write stream is
counted (`Ledger.counted`), and stdout is `Wire`, which writes each message whole to the
descriptor and counts it flushed. `Ledger.settled` waits for both. Nothing here imports the
SDK: messages are read by their JSON-RPC fields (`id`, `method`).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import AsyncIterator
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

__all__ = ["Ledger", "Wire"]

#: How often `settled` looks again while answers are still owed (only while the server ends).
_POLL = 0.005


class Wire:
    """stdout, owned: each message written whole to a private duplicate of fd 1 (fd 1 itself
    then points at stderr, so a stray print cannot break the protocol, as the SDK does for the
    stdout it opens), one JSON line each, and counted once written. Unbuffered: nothing is left
    to flush at exit."""

    def __init__(self) -> None:
        self._fd = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
        os.dup2(2, 1)
        self.flushed = 0

    async def pump(self, source: ObjectReceiveStream[Any]) -> None:
        """Write the server's messages (the SDK's `SessionMessage`s) in order until `source`
        closes, as the SDK's stdio transport would."""
        async with source:
            async for item in source:
                text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                await anyio.to_thread.run_sync(_write_all, self._fd, f"{text}\n".encode())
                self.flushed += 1  # every byte written: the message is on the wire


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Ledger:
    """The requests taken in and not yet answered, by id, and the messages given to the
    transport's writer against those it flushed."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.owed: set[Any] = set()  # the ids of the requests taken in and not answered yet
        self.sent = 0  # messages handed to the transport's writer (it flushes them in order)
        self.closing = False  # a signal came: no new request is taken in

    def took(self, item: Any) -> bool:
        """Note a message from the client; False when it is a request not to be taken."""
        message = getattr(item, "message", None)
        method, ident = getattr(message, "method", None), getattr(message, "id", None)
        if method == "notifications/cancelled":  # a cancelled request is never answered
            params = getattr(message, "params", None) or {}
            self.owed.discard(params.get("requestId") if isinstance(params, dict) else None)
        if method is None or ident is None:
            return True
        if self.closing:
            return False
        self.owed.add(ident)
        return True

    def gave(self, item: Any) -> None:
        """Note a message handed to the writer (an answer: its request is no longer owed)."""
        self.sent += 1
        message = getattr(item, "message", None)
        if getattr(message, "method", None) is None:
            self.owed.discard(getattr(message, "id", None))

    def answered(self) -> bool:
        """Whether every request taken in is answered and every message given to the writer
        is flushed."""
        return not self.owed and self.wire.flushed >= self.sent

    async def settled(self) -> None:
        """Return once every request taken in is answered on the wire."""
        while not self.answered():
            await anyio.sleep(_POLL)

    async def relay(self, source: AsyncIterator[Any], sink: ObjectSendStream[Any]) -> None:
        """Pass the client's messages on; when stdin ends, pass the end on only once every
        request taken in is answered (the SDK would cancel the calls under way)."""
        async with sink:
            async for item in source:
                if self.took(item):
                    await sink.send(item)
            await self.settled()

    def counted(self, inner: Any) -> _Counted:
        """The server's write stream, each message noted (`gave`) once the writer has it."""
        return _Counted(inner, self)


class _Counted:
    """A send stream passing every message to `inner` and noting it in the ledger."""

    def __init__(self, inner: Any, ledger: Ledger) -> None:
        self._inner, self._ledger = inner, ledger

    async def send(self, item: Any) -> None:
        await self._inner.send(item)
        self._ledger.gave(item)

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def clone(self) -> _Counted:
        return _Counted(self._inner.clone(), self._ledger)

    async def __aenter__(self) -> _Counted:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()
