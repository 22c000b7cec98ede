"""Read one file into a `FileIndex`: hash, parse, and pull symbols, imports and references.

All extraction goes through one tree-sitter query per language (run in C); Python only looks at
the few nodes the query captured (and, for an import statement, at its children a few levels
down). No node is asked for its parent: tree-sitter keeps no parent links and finds one by walking
down from the root, which made a deeply nested file quadratic. Where a node sits comes from the
query instead (`in_class`, `in_qualified`, `declarator`), and a name is paired with its
definition from the definition's side.
Anything the parser cannot read still yields a record: tree-sitter recovers from syntax errors,
so a broken file keeps the definitions that parse.
"""

from __future__ import annotations

import hashlib
import os
import re
from bisect import bisect_right
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

from ..._fs import NotRegularFile, OutsideRoot, open_below, read_fd
from .binding import directive_path, go_bind, js_binds, kept_refs, rust_use
from .languages import edit_of, keep_functions, parse, parser_and_query
from .records import FileIndex, Import, Symbol
from .revisit import Part, Stamp, revisited, summed

__all__ = ["MAX_BYTES", "Skipped", "digest_of", "extract", "index_file", "unparsed"]

MAX_BYTES = 1_000_000
#: Deepest node a query match may start at. tree-sitter's query cursor keeps depths in 16 bits:
#: past 65,535 levels (a 1 MB file can nest 300,000 calls) it slows to minutes and drops
#: matches anyway, so what sits deeper than any real code is left out, and the walk stays linear.
_MAX_DEPTH = 60_000
#: A byte that a qualified name (`a.b.c`, `a::b`, spaces and non-ASCII letters aside) never
#: holds: a captured `qref` with one is dropped without copying its text, which for a method
#: chain (`a.f().f().f()...`) spans the whole chain, once per link.
_NOT_A_NAME = re.compile(rb"[^\w$.:\s\x1c-\x1f\x80-\xff]")
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
    parser, _query = parser_and_query(language)
    tree = parse(language, data, path) if parser is not None else None
    if tree is None:  # no grammar for the language: its lines counted, nothing parsed
        lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        return FileIndex(path, language, size, mtime_ns, digest, lines, (), (), (), False, non_utf8)
    if tree.root_node.has_error and language in _RECOVERED:
        return _recovered(path, language, data, tree, size, mtime_ns, digest, non_utf8)
    edit = edit_of(tree) if path else None
    if edit is not None:  # a file parsed before in this process: only what the edit touched
        read = partial(_parts, language, data, tree)
        stamp = Stamp(size, mtime_ns, digest, non_utf8)
        return revisited(path, language, data, tree, edit, stamp, read)
    return _record(path, language, data, tree, size, mtime_ns, digest, non_utf8)


def _record(
    path: str,
    language: str,
    data: bytes,
    tree: Any,
    size: int,
    mtime_ns: int,
    digest: str,
    non_utf8: bool,
    written: bytes | None = None,
) -> FileIndex:
    """The record of one parse: what the language's query captures in `tree`; signatures are
    read from `written` (the file as written) when `data` is a rewrite of it."""
    _parser, query = parser_and_query(language)
    # One pass of the query, captures grouped by name (cheaper in C than per-match dicts); the
    # def node of a `name` is always its parent, and an import's `source` sits 1-3 levels below.
    caps = _cursor(query).captures(tree.root_node)
    if language == "python" and not tree.root_node.has_error:
        keep_functions(tree, caps.get("def.function", []))
    part = _captured(language, data, caps, written)
    stamp = Stamp(size, mtime_ns, digest, non_utf8)
    return summed(path, language, data, tree, (part,), stamp, partial(_refs, language, part))


def _refs(language: str, part: Part, bound: set[str]) -> tuple[tuple[str, int], ...]:
    return kept_refs(language, part.bare, part.qualified, bound)


def _parts(language: str, data: bytes, tree: Any, kids: list[Any]) -> list[Part]:
    """What each of `kids` (top-level nodes of `tree`, in document order) adds to the record:
    one run of the query over the bytes from the first to the last, its captures sorted to
    the node they start in (`revisit` keeps them per node)."""
    if not kids:
        return []
    _parser, query = parser_and_query(language)
    cursor = _cursor(query)
    first, last = kids[0].start_byte, kids[-1].end_byte
    if first > 0 or last < len(data):
        cursor.set_byte_range(first, last)
    starts = [kid.start_byte for kid in kids]
    ends = [kid.end_byte for kid in kids]
    groups: list[dict[str, list[Any]]] = [{} for _ in kids]
    for key, nodes in cursor.captures(tree.root_node).items():
        for node in nodes:
            at = node.start_byte
            i = bisect_right(starts, at) - 1
            if i >= 0 and at < ends[i]:
                groups[i].setdefault(key, []).append(node)
    return [_captured(language, data, caps) for caps in groups]


def _captured(
    language: str, data: bytes, caps: dict[str, Any], written: bytes | None = None
) -> Part:
    """What the captures `caps` (of a whole tree, or of one top-level node) add to a record."""
    symbols: list[tuple[int, str, int, Symbol]] = []
    names = caps.get("name")
    if names:
        kinds: dict[int, str] = {}
        defs: dict[int, Any] = {}
        for key, nodes in caps.items():
            if key.startswith("def."):
                for node in nodes:
                    kinds[node.id] = key[4:]
                    defs[node.id] = node
        # the def node of a `name` is always its parent: found from the def's side
        owner = {child.id: node for node in defs.values() for child in node.children}
        methods = {node.id for node in caps.get("in_class", ())}
        for name_node in names:
            node = owner.get(name_node.id)
            if node is not None:
                sym = _symbol(language, kinds[node.id], name_node, node, written or data, methods)
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
            declarators = {
                child.id: node for node in caps.get("declarator", ()) for child in node.children
            }
            imports = _other_imports(language, found, caps.get("source", ()), declarators)
    directives = None
    if "directive" in caps:
        directives = []
        for node in caps["directive"]:
            spec = directive_path(node.text)
            if spec is not None:
                directives.append(Import(spec, (), 0, node.start_point[0] + 1, "reference"))
    bare_nodes, qualified_nodes = caps.get("ref", ()), caps.get("qref", ())
    if language == "python" or "in_qualified" not in caps:  # no qualified type wraps a name
        bare = Counter([node.text for node in bare_nodes])
    else:
        tails = {node.id for node in caps["in_qualified"]}
        bare = Counter([node.text for node in bare_nodes if node.id not in tails])
    qualified: Counter[bytes] = Counter()
    if qualified_nodes:
        search = _NOT_A_NAME.search
        qualified = Counter(
            [n.text for n in qualified_nodes if search(data, n.start_byte, n.end_byte) is None]
        )
    return Part(
        tuple(symbols),
        tuple(imports),
        None if directives is None else tuple(directives),
        bare,
        qualified,
    )


#: Languages whose files with syntax errors are read again in pieces (`_recovered`).
_RECOVERED = frozenset({"typescript", "tsx", "javascript"})
#: `<in T>`, `<out T>`, `<in out T>` (TS 4.7 variance annotations) and `<const T>` in a call
#: signature, which the bundled grammar (tree-sitter-typescript 0.23.2, the newest on the
#: index) does not know. Blanked to spaces (same length, so every position holds) before a
#: second parse.
_VARIANCE = re.compile(rb"\b(?:in\s+out|out|in|const)(?=\s+[A-Za-z_$][\w$]*\s*(?:extends\b|=|,|>))")
_LOOK_BACK = 512  # bytes a variance keyword's `<` or `,` may sit before it (comments between)
#: `import("x").T` in a type (TS 2.9 import types), which the grammar reads as an error: the
#: call is blanked to an identifier of the same length (`________.T`), a type reference it reads.
_IMPORT_TYPE = re.compile(
    rb"""\bimport\(\s*(?:"[^"\n]*"|'[^'\n]*')\s*\)(?=\.(?!then\b|catch\b|finally\b)[A-Za-z_$])"""
)
#: A generic call signature on its own line (`  <A, B>(f: F): G` in an object type of overloads,
#: after a member whose return type is a function type): the grammar reads the `<` as going on
#: the line before. Its first indentation space becomes `;`, the separator TS infers there.
_CALL_SIGNATURE = re.compile(
    rb"^[ \t](?=[ \t]*<[ \t]*(?:[A-Za-z_$][\w$]*(?:\s+extends\b|\s*[,>=])|\n))", re.M
)
#: Where a top-level declaration starts: a line opening with one of these at column 0.
_TOP_LEVEL = re.compile(
    rb"^(?:(?:export|declare|function|class|interface|type|const|let|var|enum|abstract"
    rb"|namespace|module|async|import)\b|@)",
    re.M,
)


def _variance_blanked(data: bytes) -> bytes:
    """`data` with each variance keyword that follows `<` or `,` (whitespace and `/* */`
    comments between) turned to spaces. Each look back is bounded: linear in the file."""
    out = bytearray(data)
    for match in _VARIANCE.finditer(data):
        if _after_open(data, match.start()):
            out[match.start() : match.end()] = b" " * (match.end() - match.start())
    return bytes(out)


def _after_open(data: bytes, at: int) -> bool:
    """Whether `<` or `,` comes before `at`, past whitespace and block comments."""
    return _previous(data, at) in b"<,"


def _previous(data: bytes, at: int) -> bytes:
    """The byte before `at` that is neither whitespace nor inside a `/* */` comment (b"" when
    none is near): a scan back over at most `_LOOK_BACK` bytes of space and 16 comments."""
    i, spaces, hops = at, 0, 0
    while i > 0:
        i -= 1
        ch = data[i : i + 1]
        if ch in (b" ", b"\t", b"\r", b"\n"):
            spaces += 1
            if spaces > _LOOK_BACK:
                return b""
            if ch == b"\n" and hops < 16:  # a line holding only a `//` comment
                start = data.rfind(b"\n", max(0, i - _LOOK_BACK), i) + 1
                if data[start:i].lstrip().startswith(b"//"):
                    i, hops = start, hops + 1
            continue
        if ch == b"/" and data[i - 1 : i] == b"*" and hops < 16:
            opened = data.rfind(b"/*", 0, i - 1)
            if opened < 0:
                return b""
            i, hops = opened, hops + 1
            continue
        return ch
    return b""


def _signature_separated(match: re.Match[bytes]) -> bytes:
    """`;` for the first indentation byte of a generic call signature that follows a type."""
    previous = _previous(match.string, match.start())
    ends_a_type = previous.isalnum() or previous in (b"_", b"$", b">", b")", b"]", b"}")
    if previous == b">" and _previous_two(match.string, match.start()) == b"=>":
        ends_a_type = False  # a curried arrow function: `(a) =>\n  <B>(b) => ...`
    return b";" if ends_a_type and previous else match.group()


def _previous_two(data: bytes, at: int) -> bytes:
    stripped = data[max(0, at - _LOOK_BACK) : at].rstrip()
    return stripped[-2:]


def _underscores(match: re.Match[bytes]) -> bytes:
    return b"_" * len(match.group())


#: The type arguments of a generic tagged template (sql<{ id: number }>`...`), which the
#: grammar reads only when they are a plain name: `>` then a backtick, walked back to its `<`.
_TAGGED = re.compile(rb"(?<!=)>`")
#: An escaped backtick, which the grammar cannot read in a template literal type.
_ESCAPED_BACKTICK = re.compile(rb"(?<!\\)((?:\\\\)*)\\`")


def _untagged(data: bytes) -> bytes:
    """`data` with the type arguments of generic tagged templates blanked (lines kept)."""
    out = bytearray(data)
    for match in _TAGGED.finditer(data):
        depth, i, floor = 0, match.start(), max(0, match.start() - _LOOK_BACK)
        while i >= floor:
            ch = data[i]
            if ch == ord(">") and data[i - 1 : i] != b"=":
                depth += 1
            elif ch == ord("<"):
                depth -= 1
                if depth == 0:
                    break
            i -= 1
        if (
            depth != 0
            or i < floor
            or not (data[i - 1 : i].isalnum() or data[i - 1 : i] in (b"_", b"$"))
        ):
            continue
        for k in range(i, match.start() + 1):
            if out[k] not in b"\r\n":
                out[k] = ord(" ")
    return bytes(out)


def _modern_ts(data: bytes) -> bytes:
    """`data` with the TS syntax the grammar lacks rewritten in place (same length, same lines):
    variance annotations, import types, generic call signatures that start a line, generic
    tagged templates, escaped backticks."""
    if b"in " in data or b"out " in data:
        data = _variance_blanked(data)
    if b">`" in data:
        data = _untagged(data)
    data = _ESCAPED_BACKTICK.sub(rb"\1  ", data)
    return _CALL_SIGNATURE.sub(_signature_separated, _IMPORT_TYPE.sub(_underscores, data))


def _recovered(
    path: str,
    language: str,
    data: bytes,
    tree: Any,
    size: int,
    mtime_ns: int,
    digest: str,
    non_utf8: bool,
) -> FileIndex:
    """A file with syntax errors, read so that one error costs one declaration, not the file.

    First the syntax the grammar lacks is rewritten in place (`_modern_ts`); if errors remain,
    each top-level node holding one (a 28,000-line module can become a single `ERROR`) is cut
    at the lines where a top-level declaration starts and each piece is parsed alone (its lines
    then moved to where the piece starts). A piece's definitions replace what the first parse kept
    of that region when there are more of them; imports and references are joined."""
    parser, _query = parser_and_query(language)
    fixed = _modern_ts(data) if language == "typescript" else data  # JSX has lines opening `<`
    if fixed != data:
        tree = parser.parse(fixed)
        if not tree.root_node.has_error:
            return _record(path, language, fixed, tree, size, mtime_ns, digest, non_utf8, data)
    whole = _record(path, language, fixed, tree, size, mtime_ns, digest, non_utf8, data)
    root = tree.root_node
    regions = [(0, len(fixed))] if root.type == "ERROR" else []
    regions += [(c.start_byte, c.end_byte) for c in root.children if c.has_error]
    symbols = list(whole.symbols)
    imports = list(whole.imports)
    refs = dict(whole.refs)
    for start, end in regions:
        first, last = fixed.count(b"\n", 0, start) + 1, fixed.count(b"\n", 0, end) + 1
        pieces: list[Symbol] = []
        for a, b in _pieces(fixed, start, end):
            shift = fixed.count(b"\n", 0, a)  # lines above the piece
            chunk = fixed[a:b]
            part = _record(path, language, chunk, parser.parse(chunk), 0, 0, "", False, data[a:b])
            pieces += [
                s._replace(line=s.line + shift, end_line=s.end_line + shift) for s in part.symbols
            ]
            moved = [imp._replace(line=imp.line + shift) for imp in part.imports]
            imports += [imp for imp in moved if imp not in imports]
            for name, count in part.refs:
                refs[name] = max(refs.get(name, 0), count)
        kept = [s for s in symbols if first <= s.line <= last]
        if len(pieces) > len(kept):
            symbols = [s for s in symbols if not first <= s.line <= last] + pieces
    symbols.sort(key=lambda s: (s.line, s.name))
    imports.sort(key=_line)
    return FileIndex(
        path=path,
        language=language,
        size=size,
        mtime_ns=mtime_ns,
        digest=digest,
        lines=whole.lines,
        symbols=tuple(symbols),
        imports=tuple(imports),
        refs=tuple(sorted(refs.items())),
        parse_error=True,
        non_utf8=non_utf8,
    )


def _pieces(data: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """Byte ranges of `data[start:end]` cut where a top-level declaration starts."""
    cuts = [m.start() for m in _TOP_LEVEL.finditer(data, start, end)]
    if not cuts or cuts[0] != start:
        cuts.insert(0, start)
    return [(a, b) for a, b in zip(cuts, [*cuts[1:], end], strict=True) if b > a]


def unparsed(language: str, data: bytes) -> tuple[int, int]:
    """How much of a file did not parse: (lines inside syntax errors, lines of the file) as the
    index reads it (after `_modern_ts` for TS), for reports."""
    parser, _query = parser_and_query(language)
    lines = data.count(b"\n") + 1
    if parser is None:
        return 0, lines
    if language == "typescript":
        data = _modern_ts(data)
    stack = [parser.parse(data).root_node]
    bad: set[int] = set()
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            bad.update(range(node.start_point[0], node.end_point[0] + 1))
        elif node.has_error:
            stack.extend(node.children)
    return len(bad), lines


def _start(node: Any) -> int:
    return int(node.start_byte)


def _line(imp: Import) -> int:
    return imp.line


def _first_three(row: tuple[int, str, int, Symbol]) -> tuple[int, str, int]:
    return row[0], row[1], row[2]


def _cursor(query: Any) -> Any:
    import tree_sitter

    cursor = tree_sitter.QueryCursor(query)
    cursor.set_max_start_depth(_MAX_DEPTH)
    return cursor


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", "replace"))


def _symbol(
    language: str, kind: str, name_node: Any, node: Any, data: bytes, methods: set[int]
) -> Symbol:
    if kind == "function" and node.id in methods:
        kind = "method"  # a Python function in a class body, a Rust fn in an impl or a trait
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


def _signature(node: Any, data: bytes) -> str:
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None else node.end_byte
    head = data[node.start_byte : min(end, node.start_byte + 4 * _SIGNATURE_CHARS)]
    text = " ".join(head.decode("utf-8", "replace").split()).rstrip(" :{=")
    text = text.replace("( ", "(").replace(" )", ")").replace("[ ", "[").replace(" ]", "]")
    return text if len(text) <= _SIGNATURE_CHARS else text[: _SIGNATURE_CHARS - 1] + "…"


def _other_imports(
    language: str, found: list[Any], sources: list[Any], declarators: dict[int, Any]
) -> list[Import]:
    """JS/TS/Go/Rust: pair each `source` with the import node it sits in (1-4 levels down from
    it; the nearest when two are); `declarators` maps a `require` call to its declarator."""
    wanted = {source.id for source in sources}
    owner: dict[int, tuple[int, Any]] = {}  # source -> (levels below, import node)
    for node in found:
        level = [node]
        for depth in range(1, 5):
            level = [child for parent in level for child in parent.children]
            for child in level:
                if child.id in wanted:
                    known = owner.get(child.id)
                    if known is None or depth < known[0]:
                        owner[child.id] = (depth, node)
    out: list[tuple[int, int, Import]] = []
    for source in sources:
        pair = owner.get(source.id)
        if pair is None:
            continue
        node = pair[1]
        imp = _import(language, node, _text(source), declarators.get(node.id))
        if imp is not None:
            out.append((node.start_byte, source.start_byte, imp))
    out.sort(key=lambda t: (t[0], t[1]))
    return [imp for _start, _at, imp in out]


def _import(language: str, node: Any, spec: str, declarator: Any) -> Import | None:
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
    names, binds = js_binds(node, declarator)
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
