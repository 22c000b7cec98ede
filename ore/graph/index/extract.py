"""Read one file into a `FileIndex`: hash, parse, and pull symbols, imports and references.

All extraction goes through one tree-sitter query per language (run in C); Python only looks at
the few nodes the query captured (and, for an import statement, at its direct children).
Anything the parser cannot read still yields a record: tree-sitter recovers from syntax errors,
so a broken file keeps the definitions that parse.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from ..._fs import NotRegularFile, OutsideRoot, open_below, read_fd
from .binding import directive_path, go_bind, js_binds, keep_refs, rust_use
from .languages import parser_and_query
from .records import FileIndex, Import, Symbol

__all__ = ["MAX_BYTES", "Skipped", "digest_of", "extract", "index_file"]

MAX_BYTES = 1_000_000
_SIGNATURE_CHARS = 160
_GO_KINDS = {"struct_type": "class", "interface_type": "interface"}


class Skipped(str):
    """Why a file was not indexed (`too_large`, `binary`, `unreadable`, `not_a_file`,
    `outside_root`): a str, so it pickles."""


def digest_of(data: bytes) -> str:
    """The content hash the cache trusts (blake2b, 128 bits)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def index_file(
    root: str, path: str, language: str, known: str | None = None
) -> FileIndex | Skipped | str:
    """Index `root/path`; return the digest alone when it equals `known` (unchanged content).

    Never a byte from outside `root`: the file is opened with `ore._fs.open_below`."""
    try:
        # Confined to the root however the path was listed (a folder swapped for a symlink out
        # is refused), and a FIFO or device is refused without a wait.
        fd = open_below(Path(root), path)
    except OutsideRoot:
        return Skipped("outside_root")
    except NotRegularFile as exc:
        return Skipped("unreadable" if exc.is_dir else "not_a_file")
    except (OSError, ValueError):
        return Skipped("unreadable")
    try:
        info = os.fstat(fd)
        if info.st_size > MAX_BYTES:
            return Skipped("too_large")
        data = read_fd(fd, limit=MAX_BYTES)
    except OSError:
        return Skipped("unreadable")
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        return Skipped("too_large")
    if b"\0" in data[:8192]:
        return Skipped("binary")
    digest = digest_of(data)
    if known is not None and digest == known:
        return digest
    return extract(
        path, language, data, size=info.st_size, mtime_ns=info.st_mtime_ns, digest=digest
    )


def extract(
    path: str, language: str, data: bytes, *, size: int = 0, mtime_ns: int = 0, digest: str = ""
) -> FileIndex:
    """Parse `data` as `language` and return its record (symbols, imports, reference counts)."""
    non_utf8 = False
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            non_utf8 = True
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    parser, query = parser_and_query(language)
    if parser is None:
        return FileIndex(path, language, size, mtime_ns, digest, lines, (), (), (), False, non_utf8)
    tree = parser.parse(data)
    # One pass of the query, captures grouped by name (cheaper in C than per-match dicts); the
    # def node of a `name` is always its parent, and an import's `source` sits 1-3 levels below.
    caps = _cursor(query).captures(tree.root_node)
    symbols: list[tuple[int, str, int, Symbol]] = []
    names = caps.get("name")
    if names:
        kinds = {
            node.id: key[4:]
            for key, nodes in caps.items()
            if key.startswith("def.")
            for node in nodes
        }
        for name_node in names:
            node = name_node.parent
            kind = kinds.get(node.id)
            if kind is not None:
                sym = _symbol(language, kind, name_node, node, data)
                symbols.append((sym.line, sym.name, node.start_byte, sym))
        symbols.sort(key=_first_three)  # by line and name; ties (minified code) by position
    imports: list[Import] = []
    found = caps.get("import")
    if found:
        if language == "python":
            # captures come in the order the cursor finishes them, not quite document order
            for node in sorted(found, key=_start):
                imports.extend(_python_imports(node, node.start_point[0] + 1))
        else:
            imports = _other_imports(language, found, caps.get("source", ()))
    directives = caps.get("directive")
    if directives:
        for node in directives:
            spec = directive_path(node.text)
            if spec is not None:
                imports.append(Import(spec, (), 0, node.start_point[0] + 1, "reference"))
        imports.sort(key=_line)
    refs: tuple[tuple[str, int], ...] = ()
    bare, qualified = caps.get("ref", ()), caps.get("qref", ())
    if bare or qualified:
        bound = {n.split(".", 1)[0] for imp in imports if imp.kind != "export" for n in imp.binds}
        refs = keep_refs(language, bare, qualified, bound)
    return FileIndex(
        path=path,
        language=language,
        size=size,
        mtime_ns=mtime_ns,
        digest=digest,
        lines=lines,
        symbols=tuple([row[3] for row in symbols]),
        imports=tuple(imports),
        refs=refs,
        parse_error=tree.root_node.has_error,
        non_utf8=non_utf8,
    )


def _start(node: Any) -> int:
    return int(node.start_byte)


def _line(imp: Import) -> int:
    return imp.line


def _first_three(row: tuple[int, str, int, Symbol]) -> tuple[int, str, int]:
    return row[0], row[1], row[2]


def _cursor(query: Any) -> Any:
    import tree_sitter

    return tree_sitter.QueryCursor(query)


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", "replace"))


def _symbol(language: str, kind: str, name_node: Any, node: Any, data: bytes) -> Symbol:
    if kind == "function" and _in_class(language, node):
        kind = "method"
    elif kind == "variable" and language in ("javascript", "typescript", "tsx"):
        value = node.child_by_field_name("value")
        if value is not None and value.type in (
            "arrow_function",
            "function_expression",
            "function",
        ):
            kind = "function"
    elif kind == "type" and language == "go":
        kind = _GO_KINDS.get(getattr(node.child_by_field_name("type"), "type", ""), "type")
    return Symbol(
        name_node.text.decode("utf-8", "replace"),
        kind,
        node.start_point[0] + 1,
        node.end_point[0] + 1,
        _signature(node, data),
    )


def _in_class(language: str, node: Any) -> bool:
    parent = node.parent
    if parent is not None and parent.type == "decorated_definition":
        parent = parent.parent
    if parent is None or parent.parent is None:
        return False
    if language == "python":
        return bool(parent.type == "block" and parent.parent.type == "class_definition")
    if language == "rust":
        return bool(parent.type == "declaration_list") and parent.parent.type in (
            "impl_item",
            "trait_item",
        )
    return False


def _signature(node: Any, data: bytes) -> str:
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    head = data[node.start_byte : min(end, node.start_byte + 4 * _SIGNATURE_CHARS)]
    text = " ".join(head.decode("utf-8", "replace").split()).rstrip(" :{=")
    text = text.replace("( ", "(").replace(" )", ")").replace("[ ", "[").replace(" ]", "]")
    return text if len(text) <= _SIGNATURE_CHARS else text[: _SIGNATURE_CHARS - 1] + "…"


def _other_imports(language: str, found: list[Any], sources: list[Any]) -> list[Import]:
    """JS/TS/Go/Rust: pair each `source` with the import node it sits in (1-3 levels up)."""
    owners = {node.id: node for node in found}
    out: list[tuple[int, int, Import]] = []
    for source in sources:
        node = source.parent
        for _ in range(3):
            if node is None or node.id in owners:
                break
            node = node.parent
        if node is None or node.id not in owners:
            continue
        imp = _import(language, node, _text(source))
        if imp is not None:
            out.append((node.start_byte, source.start_byte, imp))
    out.sort(key=lambda t: (t[0], t[1]))
    return [imp for _start, _at, imp in out]


def _import(language: str, node: Any, spec: str) -> Import | None:
    line = node.start_point[0] + 1
    if language == "go":
        path = spec.strip('"`')
        return Import(path, (), 0, line, "import", go_bind(node, path))
    if language == "rust":
        if node.type == "mod_item":
            if node.child_by_field_name("body") is not None:
                return None  # an inline `mod x { ... }` is not a file
            return Import(spec, (spec,), 0, line, "mod", (spec,))
        module, names, binds = rust_use(spec)
        return Import(module, names, 0, line, "use", binds)
    kind = {"export_statement": "export", "import_require_clause": "require"}.get(node.type)
    if kind is None and node.type == "import_statement":
        kind = "type" if any(c.type == "type" for c in node.children) else "import"
    if kind is None:
        function = node.child_by_field_name("function")
        kind = "dynamic" if function is not None and function.type == "import" else "require"
    names, binds = js_binds(node)
    return Import(spec, names, 0, line, kind, binds)


def _python_imports(node: Any, line: int) -> list[Import]:
    if node.type == "import_statement":
        out = []
        for child in node.children_by_field_name("name"):
            dotted, local = _aliased(child)
            if dotted is not None:
                module = "".join(_text(dotted).split())
                # `import a.b` binds `a` (and makes `a.b` reachable); `import a.b as x` binds `x`
                bind = local if local is not None else module.split(".", 1)[0]
                out.append(Import(module, (), 0, line, "import", (bind,)))
        return out
    module_node = node.child_by_field_name("module_name")
    if module_node is None:
        return []
    level = 0
    module = ""
    if module_node.type == "relative_import":
        for child in module_node.children:
            if child.type == "import_prefix":
                level = len(_text(child).strip())
            elif child.type == "dotted_name":
                module = _text(child)
    else:
        module = _text(module_node)
    names: list[str] = []
    binds: list[str] = []
    for child in node.children:
        if child.type == "wildcard_import":
            names.append("*")
            binds.append("*")
    for child in node.children_by_field_name("name"):
        dotted, local = _aliased(child)
        if dotted is not None:
            names.append(_text(dotted))
            binds.append(local if local is not None else names[-1])
    return [Import("".join(module.split()), tuple(names), level, line, "from", tuple(binds))]


def _aliased(node: Any) -> tuple[Any, str | None]:
    """(the dotted name, the alias or None) of an `aliased_import` or a plain dotted name."""
    if node.type != "aliased_import":
        return node, None
    alias = node.child_by_field_name("alias")
    return node.child_by_field_name("name"), None if alias is None else _text(alias)
