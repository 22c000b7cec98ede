"""`ore mcp`: the codebase graph served over MCP on stdio with the official SDK's low-level
`Server` (the only module of ORE that imports `mcp`).

The tools, their input schemas and descriptions come from `ore.mcp.tools` (the graph's table of
operations); each call is answered by the warm graph (`ore.graph.serve.WarmGraph`) in a worker
thread, one at a time, so the event loop keeps reading stdin. stdout carries only the protocol;
the server ends when its client closes stdin.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from .._version import __version__
from ..graph.serve import WarmGraph
from .inbound import Inbound
from .tools import TOOLS, Reply, call_tool, sendable
from .wire import Ledger, Wire

__all__ = ["serve"]

INSTRUCTIONS = (
    "ORE's codebase graph of one folder (fixed when the server started): central files, "
    "dependents and dependencies, symbols, duplicates, similar code, conventions, where new "
    "code belongs. Every tool is read-only and calls no model; results are the same JSON as "
    "`ore graph COMMAND --json`. Start with `signature` or `top_files` on an unfamiliar tree; "
    "before writing code, ask `duplicates` (with the snippet) and `place`."
)


def _tools() -> list[types.Tool]:
    return [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema=spec.input_schema,
            annotations=types.ToolAnnotations(
                read_only_hint=True, destructive_hint=False, open_world_hint=False
            ),
        )
        for spec in TOOLS.values()
    ]


def _result(reply: Reply) -> types.CallToolResult:
    reply = sendable(reply)  # every result and error leaves here: valid Unicode, as the CLI's
    text = reply.text if not reply.note else f"{reply.text}\n({reply.note})"
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text)]
    if reply.error:
        return types.CallToolResult(content=content, is_error=True)
    structured: dict[str, Any] = {"result": reply.data}
    if reply.note:
        structured["note"] = reply.note
    return types.CallToolResult(content=content, structured_content=structured)


def build(warm: WarmGraph, lock: anyio.Lock | None = None) -> Server[Any]:
    """The server answering from `warm`, one call at a time under `lock`."""
    listed = _tools()
    lock = anyio.Lock() if lock is None else lock

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        async with lock:  # one graph, one answer at a time
            try:
                reply = await anyio.to_thread.run_sync(
                    call_tool, warm, params.name, params.arguments
                )
            except Exception as exc:
                reply = Reply(f"{params.name} failed: {type(exc).__name__}: {exc}", error=True)
        return _result(reply)

    return Server(
        "ore",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call,
    )


def serve(root: str | os.PathLike[str]) -> None:
    """Serve the graph of `root` (GraphError at once when it is not a folder) until stdin
    closes; the tree is indexed at the first call, so a client's start-up never waits on it."""
    warm = WarmGraph(root, ahead=True)  # an edit is read when its event comes
    lock = anyio.Lock()
    server = build(warm, lock)

    async def main() -> None:
        # Every request taken in is answered on the wire before the server ends (`ore.mcp.wire`):
        # stdin's messages are read and judged (`Inbound`: what is no message is answered with
        # its JSON-RPC error) and relayed; stdout is written and counted by `Wire`.
        ledger = Ledger(Wire())
        inbox, taken = anyio.create_memory_object_stream[Any](0)
        outbox, written = anyio.create_memory_object_stream[Any](0)
        replies = ledger.counted(outbox)
        # stdin closed when ORE started (`ore mcp <&-`): no messages, whatever fd 0 is now
        inbound = Inbound(replies, fd=0 if sys.stdin is not None else None, owed=ledger.owed)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(ledger.wire.pump, written)
            tasks.start_soon(ledger.relay, inbound.messages(), inbox)
            tasks.start_soon(_end_on_signals, warm, lock, ledger)
            options = server.create_initialization_options()
            await server.run(taken, replies, options)
            tasks.cancel_scope.cancel()

    try:
        anyio.run(main)
    except BaseExceptionGroup as group:
        # A client that went away without closing our stdin first (it crashed, or closed its
        # end of our stdout) is the end of the session, as stdin's end is: no traceback.
        _gone, rest = group.split(BrokenPipeError)
        if rest is not None:
            raise rest from None
        _quiet_stdout()
    except BrokenPipeError:
        _quiet_stdout()
    finally:
        warm.close()  # the cache of the last edit is on disk before the process ends


async def _end_on_signals(warm: WarmGraph, lock: anyio.Lock, ledger: Ledger) -> None:
    """Ctrl-C, SIGTERM or SIGHUP end the server now (exit 128 + N), as they end every ore
    command: stdin is read in a thread no cancellation reaches, so the usual way out
    would wait for the client's next line. No request is taken in after the signal; the calls
    under way finish and their answers are written and flushed first (`Ledger.settled`), and
    the cache's writes are whole; a second signal ends the process at once."""
    ending = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if _heeded(s)]
    with anyio.open_signal_receiver(*ending) as received:
        async for signum in received:
            for each in ending:
                signal.signal(each, signal.SIG_DFL)
            ledger.closing = True
            await ledger.settled()
            async with lock:
                warm.close()
            os._exit(128 + signum)


def _heeded(signum: int) -> bool:
    """Whether `signum` ends ore here: not when it is ignored (`nohup ore mcp`)."""
    return signal.getsignal(signum) is not signal.SIG_IGN


def _quiet_stdout() -> None:
    """stdout's reader is gone: point it at /dev/null so flushing at exit raises nothing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
    finally:
        os.close(devnull)
