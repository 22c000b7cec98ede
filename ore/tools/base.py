"""The `Tool` type, and what every built-in tool shares: argument schemas, finding a hint in a
prompt, and the folder a file-reading tool is confined to.

A `Tool` is data plus two functions: it names the permissions it needs (checked by
`ore.tools.gate` before anything runs), a JSON Schema its arguments must satisfy (checked with
`jsonschema` before its handler runs), the hint phrases the router matches, and optionally a way
to pull its arguments out of a prompt. Its output comes back as a `ToolResult`, which the core
renders under a "[Tool:NAME]" header so the model can tell it apart from the user's words.

`jsonschema` is imported only when a tool actually validates arguments, so `ore --list-tools`
stays as fast as `ore --help`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _fs
from ..errors import OreError, ToolError
from .gate import PERMISSIONS

if TYPE_CHECKING:
    # Only for annotations: `ore --list-tools` never builds the contracts module.
    from ..types import ToolResult

__all__ = [
    "PATH_TOKEN",
    "Tool",
    "after_hint",
    "failer",
    "inside_root",
    "pinned_root",
    "refusal",
    "string_args",
    "tool_root",
]

_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_MAX_SHOWN = 120  # characters of a bad value quoted back in an error line

Handler = Callable[[Mapping[str, Any]], "ToolResult"]
Extractor = Callable[[str], Mapping[str, str]]
PipedArg = Callable[[Mapping[str, str]], str | None]


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
    :param piped_arg: given a call's arguments, the one argument that the text piped to ORE
        fills (`codebase`'s `snippet`, for the ops that compare code), or None. Text piped on
        stdin is the only thing it can carry: never the prompt's words, never a file.
    """

    name: str
    description: str
    permissions: tuple[str, ...]
    schema: Mapping[str, Any]
    handler: Handler = field(repr=False)
    hints: tuple[str, ...] = ()
    extractor: Extractor | None = field(default=None, repr=False)
    routable_args: frozenset[str] = frozenset()
    piped_arg: PipedArg | None = field(default=None, repr=False)

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

    def piped_args(self, args: Mapping[str, str], piped: str | None) -> dict[str, str]:
        """The argument the piped text fills for a call with `args` (`{}` when the tool takes
        none there, nothing was piped, or the command line already gave that argument)."""
        if self.piped_arg is None or piped is None or not piped.strip():
            return {}
        name = self.piped_arg(args)
        return {} if name is None or name in args else {name: piped}

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


def string_args(properties: Iterable[str], required: Iterable[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {k: {"type": "string", "minLength": 1} for k in properties},
        "required": list(required),
        "additionalProperties": False,
    }


def after_hint(prompt: str, hints: Iterable[str]) -> re.Match[str] | None:
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


#: A path-like token: quoted, or up to the next space.
PATH_TOKEN = re.compile(r"""\s*(?:"([^"\n]+)"|'([^'\n]+)'|`([^`\n]+)`|(\S+))""")


def tool_root(fail: Callable[[str], ToolError], root_arg: str | None) -> Path:
    """The folder a file-reading tool is confined to, resolved: the working folder, or the
    `root` argument, which only `--tool-arg root=DIR` on the command line can set (routing
    drops it)."""
    try:
        root = Path(root_arg or os.getcwd()).resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        what = f"root {root_arg!r}" if root_arg else "the working folder"
        raise fail(f"{what} cannot be used: {_fs.os_error_words(exc)}") from exc
    return root


@contextmanager
def pinned_root(fail: Callable[[str], ToolError], root_arg: str | None) -> Iterator[_fs.Pinned]:
    """The folder a file-reading tool is confined to, pinned by descriptor for the `with` block
    (`ore._fs.pin_folder`): the working folder itself, not the path it had, so no parent swapped
    for a symlink meanwhile can move it; or the `root` argument, which only `--tool-arg
    root=DIR` on the command line can set (routing drops it)."""
    try:
        root = _fs.pin_folder(root_arg or None)
    except (OSError, ValueError) as exc:
        why = _fs.os_error_words(exc)
        if root_arg:
            fix = "give --tool-arg root= an existing folder"
            raise fail(f"root {root_arg!r} cannot be used: {why}; {fix}") from exc
        raise fail(f"the working folder cannot be used: {why}; cd to a folder") from exc
    try:
        yield root
    finally:
        os.close(root.fd)


def inside_root(
    fail: Callable[[str], ToolError], root: Path, path: str, *, strict: bool = True
) -> Path:
    """`_fs.resolve_inside` (symlinks followed, refused unless inside `root`; with
    `strict=False` the path need not exist yet), its refusals as one-line `ToolError`s."""
    try:
        return _fs.resolve_inside(root, path, strict=strict)
    except OSError as exc:
        raise refusal(fail, root, path, exc) from exc
    except ValueError as exc:  # a NUL in the path
        raise fail(str(exc)) from exc


def refusal(
    fail: Callable[[str], ToolError], root: Path | str, path: str, exc: OSError
) -> ToolError:
    """The one line for a file a tool could not open inside its root (a pinned root's name:
    "" when the working folder has none left)."""
    root = root or "the working folder"
    if isinstance(exc, FileNotFoundError):
        return fail(f"no such file: {path}")
    if isinstance(exc, _fs.OutsideRoot):
        return fail(f"refused: {path} resolves outside the allowed folder {root}")
    if isinstance(exc, _fs.NotRegularFile):
        return fail(f"refused: {path} is not a regular file")
    return fail(f"cannot read {path}: {_fs.os_error_words(exc)}")


def failer(tool: str) -> Callable[[str], ToolError]:
    return lambda message: ToolError(f"tool '{tool}': {message}", tool=tool)
