"""What an import binds, and which used names count as references (the extraction side).

A reference counts only as evidence of a dependency: a name bound by an import (or defined in the
same Go package), used bare (`f()`, `Base`, `@deco`, a type) or as the head of a qualified name
(`mod.f()`, `pkg.T`, `a::b::f()`). A method call on any other receiver (`x.append()`,
`self.get()`, `super().save()`, `"".join()`) names no file and is never kept.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Container, Iterable
from typing import Any

__all__ = [
    "QUALIFIED_PARENTS",
    "directive_path",
    "go_bind",
    "js_binds",
    "keep_refs",
    "kept_refs",
    "rust_use",
]

# a bare type name that is really the tail of `pkg.T` / `ns.T` / `a::T`: counted with its qualifier
QUALIFIED_PARENTS = frozenset(
    {"qualified_type", "nested_type_identifier", "scoped_type_identifier"}
)
_CHAIN = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_RUST_HEADS = frozenset({"crate", "self", "super"})
_DIRECTIVE = re.compile(rb"^///\s*<reference\s+path\s*=\s*[\"']([^\"']+)[\"']")


def keep_refs(
    language: str,
    bare: Iterable[Any],
    qualified: Iterable[Any],
    bound: set[str],
    tails: Container[int] = (),
) -> tuple[tuple[str, int], ...]:
    """Reference counts `(name, uses)` sorted by name: only names that are evidence.

    `bound` holds the local names the file's imports bind (`*` when it star-imports); `tails`
    the ids of the nodes that are part of a qualified type (whose parent is one of
    `QUALIFIED_PARENTS`), counted with their qualifier, not bare. Qualified names are stored
    dotted (`a::b::f` becomes `a.b.f`).
    """
    if language == "python" or not tails:  # no qualified type wraps a bare name
        raw_bare = Counter([node.text for node in bare])
    else:
        raw_bare = Counter([node.text for node in bare if node.id not in tails])
    return kept_refs(language, raw_bare, Counter([node.text for node in qualified]), bound)


def kept_refs(
    language: str, raw_bare: Counter[bytes], raw_qualified: Counter[bytes], bound: set[str]
) -> tuple[tuple[str, int], ...]:
    """`keep_refs` from the used names' texts already counted (bare ones without the tails of
    qualified types): what an extraction that keeps counts per top-level node sums and asks."""
    star = "*" in bound and language in ("python", "rust")  # JS `export *` binds nothing here
    counts: Counter[str] = Counter()
    for raw, uses in raw_bare.items():
        if not uses:  # counts may be signed: what an edit added and took away
            continue
        name = raw.decode("utf-8", "replace")
        # Go: a package's files see each other's names unimported; a star import may bind anything
        if language == "go" or star or name in bound:
            counts[name] += uses
    for raw, uses in raw_qualified.items():
        if not uses:  # counts may be signed: what an edit added and took away
            continue
        text = "".join(raw.decode("utf-8", "replace").split()).replace("::", ".")
        if not _CHAIN.fullmatch(text):
            continue  # `f().g`, `a[0].b`, `"".join`: not a name path
        head = text.split(".", 1)[0]
        if head in bound or (language == "rust" and head in _RUST_HEADS):
            counts[text] += uses
    return tuple(sorted(counts.items()))


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", "replace"))


def js_binds(node: Any, declarator: Any = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(names, binds) of a JS/TS import, re-export or `require` node (parallel tuples).

    `declarator` is the `variable_declarator` a `require(...)` call is the value of, if any."""
    pairs: list[tuple[str, str]] = []
    kind = node.type
    if kind == "import_statement":
        for child in node.children:
            if child.type == "import_clause":
                for part in child.children:
                    if part.type == "identifier":
                        pairs.append(("default", _text(part)))
                    elif part.type == "namespace_import":
                        pairs += [("", _text(c)) for c in part.children if c.type == "identifier"]
                    elif part.type == "named_imports":
                        pairs += _specifiers(part, "import_specifier")
            elif child.type == "import_require_clause":
                pairs += [("", _text(c)) for c in child.children[:1] if c.type == "identifier"]
    elif kind == "import_require_clause":
        pairs += [("", _text(c)) for c in node.children[:1] if c.type == "identifier"]
    elif kind == "export_statement":
        for child in node.children:
            if child.type == "*":
                pairs.append(("*", "*"))
            elif child.type == "namespace_export":
                pairs += [("", _text(c)) for c in child.children if c.type == "identifier"]
            elif child.type == "export_clause":
                pairs += _specifiers(child, "export_specifier")
    elif kind == "call_expression":  # require('./x'): what the declaration around it binds
        parent = declarator
        if parent is not None and parent.type == "variable_declarator":
            target = parent.child_by_field_name("name")
            if target is not None and target.type == "identifier":
                pairs.append(("", _text(target)))
            elif target is not None and target.type == "object_pattern":
                for part in target.children:
                    if part.type == "shorthand_property_identifier_pattern":
                        pairs.append((_text(part), _text(part)))
                    elif part.type == "pair_pattern":
                        key, value = (
                            part.child_by_field_name("key"),
                            part.child_by_field_name("value"),
                        )
                        if key is not None and value is not None and value.type == "identifier":
                            pairs.append((_text(key), _text(value)))
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def _specifiers(node: Any, kind: str) -> list[tuple[str, str]]:
    out = []
    for spec in node.children:
        if spec.type == kind:
            name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
            if name is not None:
                out.append((_text(name), _text(alias if alias is not None else name)))
    return out


def go_bind(node: Any, path: str) -> tuple[str, ...]:
    """The package name a Go import binds: its alias, else the last path segment."""
    alias = node.child_by_field_name("name")
    if alias is not None:
        name = _text(alias)
        return () if name in ("_", ".") else (name,)
    last = path.rstrip("/").rsplit("/", 1)[-1]
    return (last,) if last else ()


def rust_use(text: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """A `use` argument as (module path, names, binds): `a::{B, c::D as E}` binds `B`, `E`."""
    flat = " ".join(text.split())
    if "{" in flat:
        prefix, inner = flat.split("{", 1)
        items = [i.strip() for i in inner.rsplit("}", 1)[0].split(",")]
        module = "".join(prefix.split())
    else:
        items = [flat.rsplit("::", 1)[-1]]
        module = flat
    names: list[str] = []
    binds: list[str] = []
    for item in items:
        if not item or "{" in item or "}" in item:
            continue  # nested groups: the module path still resolves, the names are not bound
        orig, _, alias = item.partition(" as ")
        name = orig.strip().rsplit("::", 1)[-1]
        if name == "self":
            name = module.rstrip(":").rsplit("::", 1)[-1]
        names.append(name)
        binds.append(alias.strip() or name)
    module = module.split(" as ", 1)[0]
    return "".join(module.split()), tuple(names), tuple(binds)


def directive_path(raw: bytes) -> str | None:
    """The path of a TS triple-slash `/// <reference path="..." />` comment, else None."""
    if not raw.startswith(b"///"):
        return None
    found = _DIRECTIVE.match(raw)
    if found is None:
        return None
    spec = found.group(1).decode("utf-8", "replace")
    return spec if spec.startswith((".", "/")) else "./" + spec
