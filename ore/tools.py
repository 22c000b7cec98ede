"""Tools: small, explicit pre-reasoning steps whose output reaches one turn and nothing else.

A `Tool` is data plus two functions: it names the permissions it needs (checked by `ore.gate`
before anything runs), a JSON Schema its arguments must satisfy (checked with `jsonschema` before
its handler runs), the hint phrases the router matches, and optionally a way to pull its arguments
out of a prompt. Its output comes back as a `ToolResult`, which the core renders under a
"[Tool:NAME]" header so the model can tell it apart from the user's words.

`jsonschema` is imported only when a tool actually validates arguments, so `ore --list-tools`
stays as fast as `ore --help`.

Built-ins: `echo` (no permission), `read-file` and `codebase` (both `filesystem-read`), see
`default_registry()`. `codebase` imports the graph package (networkx, tree-sitter) only when it
runs.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from . import _fs
from .errors import OreError, ToolArgError, ToolError
from .gate import PERMISSIONS
from .types import ToolResult

__all__ = [
    "READ_FILE_LIMIT",
    "TOOL_REGISTRY",
    "Tool",
    "default_registry",
    "echo_tool",
    "get_tool",
    "parse_tool_args",
    "read_file_tool",
]

#: The most bytes `read-file` injects into a turn; longer files are cut here, and it says so.
READ_FILE_LIMIT = 64 * 1024

_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_ARG_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_MAX_SHOWN = 120  # characters of a bad value quoted back in an error line

Handler = Callable[[Mapping[str, Any]], ToolResult]
Extractor = Callable[[str], Mapping[str, str]]


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool: what it is, what it needs, what arguments it takes, and how to run it.

    :param name: lowercase words joined by `-`, e.g. `read-file`.
    :param permissions: every permission the gate must see granted before the tool runs.
    :param schema: JSON Schema (draft 2020-12) for the arguments, a JSON object of strings.
    :param handler: does the work on validated arguments; raises `ToolError` when it cannot.
    :param hints: phrases that make the router pick this tool.
    :param extractor: pulls arguments out of a prompt when the router picks this tool.
    :param routable_args: the only argument names a routed call may set; anything else the
        extractor returns is dropped, so prompt text can never widen what the tool touches.
    """

    name: str
    description: str
    permissions: tuple[str, ...]
    schema: Mapping[str, Any]
    handler: Handler = field(repr=False)
    hints: tuple[str, ...] = ()
    extractor: Extractor | None = field(default=None, repr=False)
    routable_args: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"tool name {self.name!r} must be lowercase words joined by '-'")
        unknown = [p for p in self.permissions if p not in PERMISSIONS]
        if unknown:
            raise ValueError(f"tool {self.name!r} asks for unknown permissions {unknown}")

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments as a plain dict if they satisfy the schema, else a one-line ToolError
        naming the argument at fault."""
        from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]

        data = dict(args)
        errors = Draft202012Validator(self.schema).iter_errors(data)
        first = min(errors, key=lambda e: (list(e.path), str(e.validator)), default=None)
        if first is not None:
            raise ToolError(self._explain(first, data), tool=self.name)
        return data

    def run(self, args: Mapping[str, Any]) -> ToolResult:
        """Validate `args`, then run the handler. The gate (`ore.gate.run_gated`) comes first."""
        clean = self.validate(args)
        try:
            return self.handler(clean)
        except OreError:
            raise
        except OSError as exc:
            raise ToolError(f"tool '{self.name}' failed: {exc}", tool=self.name) from exc

    def extract_args(self, prompt: str) -> dict[str, str]:
        """Arguments for a routed call, taken from the prompt; only `routable_args` survive."""
        if self.extractor is None:
            return {}
        found = self.extractor(prompt)
        return {k: v for k, v in found.items() if k in self.routable_args}

    def _explain(self, error: Any, args: Mapping[str, Any]) -> str:
        known = sorted(self.schema.get("properties", {}))
        accepted = ", ".join(known) or "none"
        if error.validator == "required":
            missing = [k for k in error.validator_value if k not in args]
            name = missing[0] if missing else "?"
            return (
                f"tool '{self.name}' is missing the argument '{name}': add --tool-arg {name}=VALUE"
            )
        if error.validator == "additionalProperties":
            extra = sorted(k for k in args if k not in known)
            name = extra[0] if extra else "?"
            return f"tool '{self.name}' has no argument '{name}' (it accepts: {accepted})"
        where = f"argument '{error.path[0]}'" if error.path else "arguments"
        if error.validator == "enum":
            return f"tool '{self.name}': {where} must be one of {', '.join(error.validator_value)}"
        detail = str(error.message)
        if len(detail) > _MAX_SHOWN:
            detail = detail[:_MAX_SHOWN] + "..."
        return f"tool '{self.name}': {where} is invalid: {detail}"


# -- arguments from the command line -----------------------------------------------------------


def parse_tool_args(values: Iterable[str]) -> dict[str, str]:
    """`--tool-arg KEY=VALUE` values as a dict; the value may itself contain '='.

    :raises ToolArgError: (exit 2) for a value without '=', an invalid key, or a repeated key.
    """
    args: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep:
            raise ToolArgError(f"--tool-arg {_shown(value)} is not KEY=VALUE")
        if not _ARG_KEY.fullmatch(key):
            raise ToolArgError(
                f"--tool-arg {_shown(value)} has an invalid key: use letters, digits, '_' or '-'"
            )
        if key in args:
            raise ToolArgError(f"--tool-arg {key} is given more than once: give it once")
        args[key] = rest
    return args


def _shown(value: str) -> str:
    text = value if len(value) <= _MAX_SHOWN else value[:_MAX_SHOWN] + "..."
    return repr(text)


# -- built-in tools ----------------------------------------------------------------------------


def _string_args(properties: Iterable[str], required: Iterable[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {k: {"type": "string", "minLength": 1} for k in properties},
        "required": list(required),
        "additionalProperties": False,
    }


def _after_hint(prompt: str, hints: Iterable[str]) -> re.Match[str] | None:
    """The earliest place a hint occurs in the prompt as whole words (case-insensitive)."""
    best: re.Match[str] | None = None
    for hint in hints:
        words = hint.split()
        if not words:
            continue
        body = r"[\s\-_]+".join(re.escape(w) for w in words)
        match = re.search(rf"(?<!\w){body}(?!\w)", prompt, re.IGNORECASE)
        if match and (best is None or match.start() < best.start()):
            best = match
    return best


ECHO_HINTS = ("echo", "repeat after me", "say back", "repeat this")


def _echo(args: Mapping[str, Any]) -> ToolResult:
    return ToolResult(tool_name="echo", output=args["text"])


def _echo_extract(prompt: str) -> dict[str, str]:
    match = _after_hint(prompt, ECHO_HINTS)
    rest = prompt[match.end() :].strip(" \t\r\n:,") if match else ""
    text = rest or prompt.strip()
    return {"text": text} if text else {}


def echo_tool() -> Tool:
    """`echo`: hands its `text` argument back as tool output. Needs no permission."""
    return Tool(
        name="echo",
        description="Inject the text argument verbatim (a harmless tool for trying the gate).",
        permissions=(),
        schema=_string_args(["text"], ["text"]),
        handler=_echo,
        hints=ECHO_HINTS,
        extractor=_echo_extract,
        routable_args=frozenset({"text"}),
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
_PATH_TOKEN = re.compile(r"""\s*(?:"([^"\n]+)"|'([^'\n]+)'|`([^`\n]+)`|(\S+))""")


def _read_file_extract(prompt: str) -> dict[str, str]:
    """The path right after a read-file hint: quoted, or up to the next space (trailing
    punctuation dropped). Never `root`: a routed read is confined to the working folder."""
    match = _after_hint(prompt, READ_FILE_HINTS)
    if match is None:
        return {}
    token = _PATH_TOKEN.match(prompt, match.end())
    if token is None:
        return {}
    quoted = token.group(1) or token.group(2) or token.group(3)
    path = quoted if quoted is not None else token.group(4).rstrip(".,;:!?)]}>'\"")
    return {"path": path} if path else {}


def read_file_tool(limit: int = READ_FILE_LIMIT) -> Tool:
    """`read-file`: injects one UTF-8 text file from inside its root (the working folder, unless
    a `root` argument is given on the command line). Needs `filesystem-read`.

    The path is resolved with every symlink followed, and refused when the result lies outside
    the root; it is then opened race-free (`ore._fs.open_inside`: a folder swapped for a symlink
    meanwhile is refused, never followed); directories, devices, FIFOs and binary files are
    refused; at most `limit` bytes are injected, and the output says when it was cut.
    """

    def handler(args: Mapping[str, Any]) -> ToolResult:
        return _read_file(args["path"], args.get("root"), limit)

    return Tool(
        name="read-file",
        description="Inject a text file from the working folder (--tool-arg path=FILE).",
        permissions=("filesystem-read",),
        schema=_string_args(["path", "root"], ["path"]),
        handler=handler,
        hints=READ_FILE_HINTS,
        extractor=_read_file_extract,
        routable_args=frozenset({"path"}),
    )


def _tool_root(fail: Callable[[str], ToolError], root_arg: str | None) -> Path:
    """The folder a file-reading tool is confined to, resolved: the working folder, or the
    `root` argument, which only `--tool-arg root=DIR` on the command line can set (routing
    drops it)."""
    try:
        root = Path(root_arg or os.getcwd()).resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise fail(f"root {root_arg!r} cannot be used: {_fs.os_error_words(exc)}") from exc
    return root


def _inside(
    fail: Callable[[str], ToolError], root: Path, path: str, *, strict: bool = True
) -> Path:
    """`_fs.resolve_inside` (symlinks followed, refused unless inside `root`; with
    `strict=False` the path need not exist yet), its refusals as one-line `ToolError`s."""
    try:
        return _fs.resolve_inside(root, path, strict=strict)
    except OSError as exc:
        raise _refusal(fail, root, path, exc) from exc
    except ValueError as exc:  # a NUL in the path
        raise fail(str(exc)) from exc


def _refusal(fail: Callable[[str], ToolError], root: Path, path: str, exc: OSError) -> ToolError:
    if isinstance(exc, FileNotFoundError):
        return fail(f"no such file: {path}")
    if isinstance(exc, _fs.OutsideRoot):
        return fail(f"refused: {path} resolves outside the allowed folder {root}")
    if isinstance(exc, _fs.NotRegularFile):
        return fail(f"refused: {path} is not a regular file")
    return fail(f"cannot read {path}: {_fs.os_error_words(exc)}")


def _read_file(path: str, root_arg: str | None, limit: int) -> ToolResult:
    fail = _failer("read-file")
    root = _tool_root(fail, root_arg)
    target = _inside(fail, root, path)
    try:
        fd = _fs.open_inside(root, str(target))
    except OSError as exc:
        raise _refusal(fail, root, path, exc) from exc
    try:
        size = os.fstat(fd).st_size
        data = _fs.read_fd(fd, limit=limit)
    except OSError as exc:
        raise _refusal(fail, root, path, exc) from exc
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
    shown = target.relative_to(root).as_posix()
    size = max(size, len(data))
    output = f"File: {shown} ({size} bytes)\n{text}"
    if truncated:
        output += f"\n[read-file: truncated to the first {limit} of {size} bytes]"
    meta = {"path": str(target), "bytes": size, "truncated": truncated}
    return ToolResult(tool_name="read-file", output=output, metadata=meta)


def _failer(tool: str) -> Callable[[str], ToolError]:
    return lambda message: ToolError(f"tool '{tool}': {message}", tool=tool)


# -- the registry ------------------------------------------------------------------------------


def default_registry() -> dict[str, Tool]:
    """A fresh name -> tool mapping of the built-in tools (callers may add their own)."""
    from .codebase_tool import codebase_tool

    return {t.name: t for t in (echo_tool(), read_file_tool(), codebase_tool())}


#: The built-in tools, read-only (upstream's name); pass your own mapping to inject others.
TOOL_REGISTRY: Mapping[str, Tool] = MappingProxyType(default_registry())


def get_tool(name: str, registry: Mapping[str, Tool] | None = None) -> Tool:
    """The tool called `name`, or a ToolError listing the ones that exist."""
    tools = TOOL_REGISTRY if registry is None else registry
    tool = tools.get(name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        raise ToolError(f"unknown tool {name!r}: available tools are {known} (see --list-tools)")
    return tool
