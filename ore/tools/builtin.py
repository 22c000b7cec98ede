"""The built-in tools that need no graph: `echo` (no permission) and `read-file`
(`filesystem-read`, confined to its root)."""

from __future__ import annotations

import codecs
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import _fs
from .base import (
    PATH_TOKEN,
    Tool,
    after_hint,
    failer,
    pinned_root,
    refusal,
    string_args,
)

if TYPE_CHECKING:
    from ..types import ToolResult

__all__ = [
    "ECHO_HINTS",
    "ECHO_UPSTREAM_ARG",
    "READ_FILE_HINTS",
    "READ_FILE_LIMIT",
    "echo_tool",
    "read_file_tool",
]

#: The most bytes `read-file` injects into a turn; longer files are cut here, and it says so.
READ_FILE_LIMIT = 64 * 1024


ECHO_HINTS = ("echo", "repeat after me", "say back", "repeat this")

#: Upstream ORE's name for the echoed message; a routed echo sets it as well as `text`.
ECHO_UPSTREAM_ARG = "msg"

_ECHO_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "minLength": 1}},
    "additionalProperties": {"type": "string"},
}


def _echo(args: Mapping[str, Any]) -> ToolResult:
    """`text` alone (or with upstream's `msg` holding the same text, as a routed echo sets both)
    is handed back verbatim; otherwise every argument as a sorted `key=value` line, as upstream's
    echo does, and `(no arguments)` for none."""
    from ..types import ToolResult

    text = args.get("text")
    others = {k: v for k, v in args.items() if k != "text"}
    if text is not None and (not others or others == {ECHO_UPSTREAM_ARG: text}):
        return ToolResult(tool_name="echo", output=text)
    if not args:
        return ToolResult(tool_name="echo", output="(no arguments)")
    return ToolResult(
        tool_name="echo", output="\n".join(f"{k}={v}" for k, v in sorted(args.items()))
    )


def _echo_extract(prompt: str) -> dict[str, str]:
    match = after_hint(prompt, ECHO_HINTS)
    rest = prompt[match.end() :].strip(" \t\r\n:,") if match else ""
    text = rest or prompt.strip()
    return {"text": text, ECHO_UPSTREAM_ARG: text} if text else {}


def echo_tool() -> Tool:
    """`echo`: hands its arguments back as tool output (any `--tool-arg KEY=VALUE`, or none).
    Needs no permission."""
    return Tool(
        name="echo",
        description="Inject its arguments: text=... verbatim, any other KEY=VALUE as a line.",
        permissions=(),
        schema=_ECHO_SCHEMA,
        handler=_echo,
        hints=ECHO_HINTS,
        extractor=_echo_extract,
        routable_args=frozenset({"text", ECHO_UPSTREAM_ARG}),
    )


READ_FILE_HINTS = (
    "read file",
    "read the file",
    "show file",
    "show the file",
    "show me the file",
    "cat file",
    "open file",
    "open the file",
    "print file",
    "contents of file",
    "contents of the file",
)


def _read_file_extract(prompt: str) -> dict[str, str]:
    """The path right after a read-file hint: quoted, or up to the next space (trailing
    punctuation dropped). Never `root`: a routed read is confined to the working folder."""
    match = after_hint(prompt, READ_FILE_HINTS)
    if match is None:
        return {}
    token = PATH_TOKEN.match(prompt, match.end())
    if token is None:
        return {}
    quoted = token.group(1) or token.group(2) or token.group(3)
    path = quoted if quoted is not None else token.group(4).rstrip(".,;:!?)]}>'\"")
    return {"path": path} if path else {}


def read_file_tool(limit: int = READ_FILE_LIMIT) -> Tool:
    """`read-file`: injects one UTF-8 text file from inside its root (the working folder, unless
    a `root` argument is given on the command line). Needs `filesystem-read`.

    The root is pinned by descriptor and the path walked from it one component at a time
    (`ore._fs.open_beneath`): a symlink is followed only while it stays inside, and a swap of
    any folder, the root's parents included, can make the read fail, never reach outside.
    Directories, devices, FIFOs and binary files are refused; at most `limit` bytes are
    injected, and the output says when it was cut.
    """

    def handler(args: Mapping[str, Any]) -> ToolResult:
        return _read_file(args["path"], args.get("root"), limit)

    return Tool(
        name="read-file",
        description="Inject a text file from the working folder (--tool-arg path=FILE).",
        permissions=("filesystem-read",),
        schema=string_args(["path", "root"], ["path"]),
        handler=handler,
        hints=READ_FILE_HINTS,
        extractor=_read_file_extract,
        routable_args=frozenset({"path"}),
    )


def _read_file(path: str, root_arg: str | None, limit: int) -> ToolResult:
    from ..types import ToolResult

    fail = failer("read-file")
    # The root is pinned by descriptor and the path walked from it (`ore._fs.open_beneath`):
    # nothing is opened again by name, so no folder swapped for a symlink, the root's parents
    # included, can lead outside; a FIFO or device is refused unopened.
    with pinned_root(fail, root_arg) as root:
        try:
            fd, shown = _fs.open_beneath(root, path)
        except OSError as exc:
            raise refusal(fail, root.path, path, exc) from exc
        except ValueError as exc:  # a NUL in the path
            raise fail(str(exc)) from exc
    try:
        size = os.fstat(fd).st_size
        data = _fs.read_fd(fd, limit=limit)
    except OSError as exc:
        raise refusal(fail, root.path, path, exc) from exc
    finally:
        os.close(fd)
    truncated = len(data) > limit or size > limit
    data = data[:limit]
    if b"\0" in data:
        raise fail(f"refused: {path} looks like a binary file (it contains NUL bytes)")
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=not truncated)
    except UnicodeDecodeError as exc:
        raise fail(f"refused: {path} looks like a binary file (it is not UTF-8 text)") from exc
    size = max(size, len(data))
    output = f"File: {shown} ({size} bytes)\n{text}"
    if truncated:
        output += f"\n[read-file: truncated to the first {limit} of {size} bytes]"
    meta = {"path": os.path.join(root.path, shown), "bytes": size, "truncated": truncated}
    return ToolResult(tool_name="read-file", output=output, metadata=meta)
