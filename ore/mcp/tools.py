"""The MCP tools, derived from the graph's table of operations (`ore.graph.ops.OPS`), and one call
answered: arguments checked against the tool's schema, the op's structured answer (what
`ore graph NAME --json` prints), trimmed to `MAX_RESULT_CHARS` with a note.

Nothing here imports the MCP SDK (`ore.mcp.server` adapts these to it), so the table and the
calls are testable in-process; errors come back as a `Reply` with `error` set, never raised.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import GraphError
from ..graph.names import shown_name
from ..graph.ops import ARG_ABOUT, ARG_CHOICES, ARG_KINDS, ARG_MIN, OPS, Op
from ..graph.render.export import json_text

if TYPE_CHECKING:
    from ..graph.serve import WarmGraph

__all__ = ["MAX_RESULT_CHARS", "TOOLS", "Reply", "ToolSpec", "call_tool", "sendable"]

#: The most a result's text may hold (about 15k tokens): a longer list is cut, with a note.
MAX_RESULT_CHARS = 60_000
#: Arguments another one spells already (`path` takes `from`/`to`; `context` takes `line`).
_ALIASES = frozenset({"a", "b", "lines"})
_MAX_TEXT = 8 * 1024 * 1024
_SCHEMA_OF_KIND: Mapping[str, dict[str, Any]] = {
    "path": {"type": "string", "minLength": 1, "maxLength": 4096},
    "paths": {
        "type": "array",
        "items": {"type": "string", "minLength": 1, "maxLength": 4096},
        "maxItems": 256,
    },
    "word": {"type": "string", "minLength": 1, "maxLength": 200},
    "text": {"type": "string", "minLength": 1, "maxLength": _MAX_TEXT},
    "lines": {"type": "integer", "minimum": 1, "maximum": 10_000_000},
    "number": {"type": "integer", "maximum": 1_000_000},
    "flag": {"type": "boolean"},
}


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: its name, description, input schema, and the op that answers it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    op: Op


@dataclass(frozen=True)
class Reply:
    """A tool's answer: `data` (the CLI's --json document) and its text, or `error`."""

    text: str
    data: Any = None
    error: bool = False
    note: str = ""


def _property(name: str) -> dict[str, Any]:
    kind = ARG_KINDS[name]
    schema = dict(_SCHEMA_OF_KIND[kind])
    if kind == "number":
        schema["minimum"] = ARG_MIN.get(name, 1)
    if name in ARG_CHOICES:
        schema["enum"] = list(ARG_CHOICES[name])
    schema["description"] = ARG_ABOUT[name]
    return schema


def _spec(op: Op) -> ToolSpec:
    names = sorted(op.args - _ALIASES)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: _property(name) for name in names},
        "additionalProperties": False,
    }
    if op.required:
        schema["required"] = list(op.required)
    return ToolSpec(op.tool, op.about, schema, op)


#: Every MCP tool, by name, in the table's order.
TOOLS: Mapping[str, ToolSpec] = {
    op.tool: _spec(op) for op in OPS.values() if op.tool and op.data is not None
}


def _argument(name: str, value: Any) -> str:
    """One argument as the op's parsers take it (text), or GraphError when it breaks the
    schema."""
    kind = ARG_KINDS[name]
    expected = _SCHEMA_OF_KIND[kind]["type"]
    if kind == "flag":
        if type(value) is not bool:
            raise GraphError(f"'{name}' must be true or false")
        return "true" if value else "false"
    if expected == "integer":
        if type(value) is not int:
            raise GraphError(f"'{name}' must be a whole number")
        low, high = ARG_MIN.get(name, 1), _SCHEMA_OF_KIND[kind].get("maximum", 1 << 31)
        if not low <= value <= high:
            raise GraphError(f"'{name}' must be from {low} to {high}, not {value}")
        return str(value)
    if kind == "paths":
        if type(value) is not list or not all(type(p) is str and p for p in value):
            raise GraphError(f"'{name}' must be a list of paths (strings)")
        most, longest = (
            _SCHEMA_OF_KIND[kind]["maxItems"],
            _SCHEMA_OF_KIND[kind]["items"]["maxLength"],
        )
        if len(value) > most:
            raise GraphError(f"'{name}' holds {len(value)} paths; give at most {most}")
        if any(len(p) > longest for p in value):
            raise GraphError(f"'{name}': a path is longer than {longest} characters")
        if any("," in p for p in value):
            raise GraphError(f"'{name}': a path with a comma cannot be given")
        return ",".join(value)
    if type(value) is not str or not value:
        raise GraphError(f"'{name}' must be a non-empty string")
    limit = _SCHEMA_OF_KIND[kind]["maxLength"]
    if len(value) > limit:
        raise GraphError(f"'{name}' is longer than {limit} characters")
    if name in ARG_CHOICES and value not in ARG_CHOICES[name]:
        raise GraphError(f"'{name}' must be one of {', '.join(ARG_CHOICES[name])}, not '{value}'")
    return value


def arguments(spec: ToolSpec, given: Any) -> dict[str, str]:
    """The call's arguments checked against the tool's schema, as text for the op."""
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise GraphError("arguments must be an object")
    allowed = spec.input_schema["properties"]
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        takes = ", ".join(sorted(allowed)) or "none"
        raise GraphError(f"{spec.name} takes no argument '{unknown[0]}' (takes: {takes})")
    missing = [name for name in spec.input_schema.get("required", ()) if name not in given]
    if missing:
        raise GraphError(f"{spec.name} needs '{missing[0]}'")
    return {name: _argument(name, value) for name, value in given.items()}


def call_tool(warm: WarmGraph, name: str, given: Any) -> Reply:
    """Answer one tool call on the warm graph; a bad name, bad arguments or a failed query is
    an error reply with a one-line message."""
    spec = TOOLS.get(name)
    if spec is None:
        return Reply(f"unknown tool '{name}'; use one of {', '.join(TOOLS)}", error=True)
    try:
        args = arguments(spec, given)
        answer = spec.op.data
        data = None if answer is None else answer(warm.graph(), args)
        reply = fitted(data)
        if (reply.error or reply.note) and "window" in args and answer is not None:
            reply = _narrowed(warm, answer, args)
        warm.same_root()  # swapped during the call: what was read may not be the root's
    except GraphError as exc:
        return Reply(str(exc), error=True)
    except (OSError, ValueError, RecursionError) as exc:  # a file gone mid-answer, bad input
        return Reply(f"{name} failed: {type(exc).__name__}: {exc}", error=True)
    return reply


def sendable(reply: Reply) -> Reply:
    """`reply` as valid Unicode, the one way out of the server for every result and error: a
    file name's byte that is not UTF-8 (held as a lone surrogate, which the SDK cannot encode:
    the server died and its client hung) is written `\\xNN`, by the functions that make
    `ore graph --json` valid UTF-8 (`json_text`, `shown_name`), so a result still equals the
    CLI's JSON. A reply with no such byte (its text holds none) is returned as it is."""
    if shown_name(reply.text) == reply.text and shown_name(reply.note) == reply.note:
        return reply
    if reply.error or reply.data is None:
        return Reply(shown_name(reply.text), reply.data, reply.error, shown_name(reply.note))
    text = json_text(reply.data, indent=None)
    return Reply(text, json.loads(text), note=shown_name(reply.note))


def _narrowed(warm: WarmGraph, answer: Any, args: dict[str, str]) -> Reply:
    """A context window too wide for one result, halved until it fits: the code around the
    line the agent asked for, with a note, rather than no code at all."""
    asked = window = int(args["window"])
    reply = Reply(f"the result is over {MAX_RESULT_CHARS} characters; narrow the query", error=True)
    while (reply.error or reply.note) and window > 0:  # cut or refused: narrower still
        window //= 2
        reply = fitted(answer(warm.graph(), {**args, "window": str(window)}))
    if reply.error:
        return reply
    note = (
        f"truncated: window {window} of the {asked} asked "
        f"(the result would pass {MAX_RESULT_CHARS} characters)"
    )
    return Reply(reply.text, reply.data, note=note)


def _text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=None)


def fitted(data: Any) -> Reply:
    """`data` whole when its text fits `MAX_RESULT_CHARS`; else its longest list (the result
    itself, the largest list at its top, or the bulk of it deeper down) cut to the most items
    that fit, with a note saying which."""
    text = _text(data)
    if len(text) <= MAX_RESULT_CHARS:
        return Reply(text, data)
    if isinstance(data, list):
        keep = _fit(lambda n: data[:n], len(data))
        cut: Any = data[:keep]
        note = f"truncated: {keep} of {len(data)} results shown; narrow the query or lower limit"
    elif isinstance(data, dict) and any(isinstance(v, list) for v in data.values()):
        key = max(
            (k for k, v in data.items() if isinstance(v, list)), key=lambda k: len(_text(data[k]))
        )
        whole = data[key]
        keep = _fit(lambda n: {**data, key: whole[:n]}, len(whole))
        cut = {**data, key: whole[:keep]}
        note = f"truncated: {keep} of {len(whole)} '{key}' shown; narrow the query"
    else:
        nested = _nested_fit(data)
        if nested is None:
            return Reply(
                f"the result is over {MAX_RESULT_CHARS} characters; narrow the query", error=True
            )
        cut, note = nested
    return Reply(_text(cut), cut, note=note)


def _nested_fit(data: Any) -> tuple[Any, str] | None:
    """`data` with the largest lists inside it (`consistent`'s deviations of one criterion,
    say) cut, the largest first, until its text fits; None when even that is not enough."""
    cut, said = data, []
    for _ in range(8):
        path = _bulk(cut)
        if path is None:
            return None
        whole = _at(cut, path)
        keep = _fit(
            lambda n, cut=cut, path=path, whole=whole: _with(cut, path, whole[:n]), len(whole)
        )
        cut = _with(cut, path, whole[:keep])
        said.append(f"{keep} of {len(whole)} '{_named(path)}'")
        if len(_text(cut)) <= MAX_RESULT_CHARS:
            return cut, f"truncated: {', '.join(said)} shown; narrow the query"
    return None


def _bulk(data: Any) -> tuple[Any, ...] | None:
    """Where the list to cut is: the largest list inside `data`, or, while half of that is one
    list inside it, that one (a criterion's deviations, not the list of criteria)."""
    path = _largest_list(data)
    while path is not None:
        inner = _largest_list(_at(data, path))
        if inner is None:
            break
        deeper = (*path, *inner)
        if 2 * len(_text(_at(data, deeper))) < len(_text(_at(data, path))):
            break
        path = deeper
    return path


def _largest_list(data: Any) -> tuple[Any, ...] | None:
    """Where the non-empty list (or tuple: JSON's arrays) with the longest text inside `data`
    is (its keys and indexes from the top), None when there is none."""
    best_size, best_path = -1, None
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while stack:
        node, where = stack.pop()
        for key, value in node.items() if isinstance(node, dict) else enumerate(node):
            if isinstance(value, list | tuple) and value:
                size = len(_text(value))
                if size > best_size:
                    best_size, best_path = size, (*where, key)
            if isinstance(value, dict | list | tuple):
                stack.append((value, (*where, key)))
    return best_path


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def _with(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of `data` with `value` at `path` (only the containers on the path copied)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {**data, head: _with(data[head], rest, value)}
    copied = list(data)
    copied[head] = _with(data[head], rest, value)
    return copied


def _named(path: tuple[Any, ...]) -> str:
    """`criteria[2].deviations` for ("criteria", 2, "deviations")."""
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text


def _fit(build: Any, total: int) -> int:
    """The most items (0..total) whose text fits, by bisection."""
    lo, hi = 0, total
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(_text(build(mid))) <= MAX_RESULT_CHARS - 200:
            lo = mid
        else:
            hi = mid - 1
    return lo
