"""Function shapes: what `similar --mode shape` and structural clones compare.

A shape is tree-sitter's S-expression of a function's syntax tree (node kinds and fields, no
text; built in C), hashed, with what a renamed copy changes set aside: the docstring, comments,
type annotations and type parameters. Two functions with the same shape differ only in names,
literals, operators, annotations and docstrings (the near-copy an agent writes).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from functools import cache
from typing import Any, NamedTuple

__all__ = ["Function", "core_sexp", "functions"]

_FUNCTION_NODES = {
    "python": "(function_definition) @f",
    "javascript": (
        "[(function_declaration) (generator_function_declaration) (method_definition)"
        " (arrow_function) (function_expression)] @f"
    ),
    "go": "[(function_declaration) (method_declaration) (func_literal)] @f",
    "rust": "(function_item) @f",
}
_FUNCTION_NODES["typescript"] = _FUNCTION_NODES["tsx"] = _FUNCTION_NODES["javascript"]
_NODE = re.compile(r"\((\w+)")


class Function(NamedTuple):
    """A function or method: where it is, its shape hash and size (syntax nodes); `profile`
    (node kind -> count) only when asked for."""

    name: str
    start: int
    end: int
    shape: str
    nodes: int
    profile: tuple[tuple[str, int], ...]
    doc: bool  # its body starts with a string (a Python docstring)


@cache
def _function_query(language: str) -> Any:
    from ..index.languages import parser_and_query

    parser, _query = parser_and_query(language)
    if parser is None:
        return None
    import tree_sitter

    return tree_sitter.Query(parser.language, _FUNCTION_NODES[language])


def functions(
    language: str, data: bytes, *, profile: bool = False
) -> tuple[tuple[Function, ...], bool]:
    """The functions of a source text with their shapes (a profile of node kinds on request),
    and whether the parse had errors. One-line functions get no shape: never a clone."""
    from ..index.languages import function_nodes, parse, parser_and_query

    parser, _query = parser_and_query(language)
    query = _function_query(language)
    if parser is None or query is None:
        return (), False
    import tree_sitter

    tree = parse(language, data)  # the index's own tree of a file it just parsed
    if tree is None:
        return (), False
    found = function_nodes(tree) if language == "python" else None  # the index's, if just read
    if found is None:
        found = tree_sitter.QueryCursor(query).captures(tree.root_node).get("f", [])
    out = []
    for node in sorted(found, key=_start_byte):
        start, end = node.start_point[0] + 1, node.end_point[0] + 1
        if profile or node.has_error:  # profiles are large; a broken function may parse
            known = _shaped(node, end > start, profile)  # otherwise elsewhere: neither kept
        else:  # its name, shape and size follow from its text and column alone (`_SHAPED`)
            digest = hashlib.blake2b(node.text or b"", digest_size=16).digest()
            key = (language, profile, end > start, node.start_point[1], digest)
            kept = _SHAPED.get(key)
            if kept is None:
                kept = _shaped(node, end > start, profile)
                if len(_SHAPED) >= _SHAPED_MAX:
                    _SHAPED.clear()
                _SHAPED[key] = kept
            known = kept
        name, shape, nodes, kinds, doc = known
        out.append(Function(name, start, end, shape, nodes, kinds, doc))
    return tuple(out), bool(tree.root_node.has_error)


#: Each function's (name, shape, size, profile, docstring) of a lean shape by its language,
#: whether it spans lines, its column and its text's digest: a file edited again is shaped
#: again, but its functions the edit did not touch are not (their S-expressions are most of a
#: shape's cost). At most `_SHAPED_MAX` (about 20 MB), then it starts again.
_SHAPED: dict[tuple[str, bool, bool, int, bytes], tuple[Any, ...]] = {}
_SHAPED_MAX = 50_000


def _shaped(node: Any, lines: bool, profile: bool) -> tuple[Any, ...]:
    """What `functions` keeps of one function node (`lines`: it spans more than one line)."""
    name = _node_text(node.child_by_field_name("name"))
    shape, nodes = "", 0
    kinds: tuple[tuple[str, int], ...] = ()
    if lines:
        sexp = core_sexp(str(node))
        shape = hashlib.blake2b(sexp.encode(), digest_size=8).hexdigest()
        nodes = sexp.count("(")
        if profile:
            kinds = tuple(sorted(Counter(_NODE.findall(sexp)).items()))
    return name, shape, nodes, kinds, _documented(node)


_TYPE_FIELD = re.compile(r" (?:type|return_type|type_parameters): \(")
_DOCSTRING = re.compile(r"(body: \(block) \(expression_statement \((?:string|concatenated_string) ")
_UNWRAP = re.compile(r"\(typed_parameter ")
_RENAME = (
    ("typed_default_parameter", "default_parameter"),
    ("optional_parameter", "required_parameter"),
)


def core_sexp(sexp: str) -> str:
    """A function's S-expression without what a renamed copy changes: type annotations and
    type parameters, a leading docstring, comments; `x: int` is then the parameter `x`."""
    sexp = _cut(sexp, _TYPE_FIELD)
    doc = _DOCSTRING.search(sexp)
    while doc is not None:  # every docstring, nested functions' too: a copy may drop any
        sexp = sexp[: doc.end(1)] + _after_balanced(sexp, doc.end(1) + 1)
        doc = _DOCSTRING.search(sexp, doc.end(1))
    sexp = sexp.replace(" (comment)", "")
    while True:  # (typed_parameter X) -> X
        found = _UNWRAP.search(sexp)
        if found is None:
            break
        end = _balanced_end(sexp, found.start())
        sexp = sexp[: found.start()] + sexp[found.end() : end - 1] + sexp[end:]
    for old, new in _RENAME:
        sexp = sexp.replace(old, new)
    return sexp


def _cut(sexp: str, field: re.Pattern[str]) -> str:
    """`sexp` with every `field: (...)` removed (balanced parentheses)."""
    out, pos = [], 0
    for found in field.finditer(sexp):
        if found.start() < pos:
            continue  # inside a part already cut
        out.append(sexp[pos : found.start()])
        pos = _balanced_end(sexp, found.end() - 1)
    out.append(sexp[pos:])
    return "".join(out)


def _balanced_end(sexp: str, open_at: int) -> int:
    """The index just past the parenthesis closing the one at `open_at`: from one `)` to the
    next, the `(` between them counted in C (not a step per character)."""
    depth, pos = 0, open_at
    while (close := sexp.find(")", pos)) >= 0:
        depth += sexp.count("(", pos, close) - 1
        if depth == 0:
            return close + 1
        pos = close + 1
    return len(sexp)


def _after_balanced(sexp: str, open_at: int) -> str:
    return sexp[_balanced_end(sexp, open_at) :]


def _documented(node: Any) -> bool:
    body = node.child_by_field_name("body")
    first = body.named_children[0] if body is not None and body.named_children else None
    return bool(
        first is not None
        and first.type == "expression_statement"
        and first.named_children
        and first.named_children[0].type in ("string", "concatenated_string")
    )


def _node_text(node: Any) -> str:
    return "" if node is None or node.text is None else str(node.text.decode("utf-8", "replace"))


def _start_byte(node: Any) -> int:
    return int(node.start_byte)
