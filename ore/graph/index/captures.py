"""What a language query's captures add to a record: symbols, imports and reference counts.

Python only looks at the few nodes the query captured (and, for an import statement, at its
children a few levels down). No node is asked for its parent: tree-sitter keeps no parent links
and finds one by walking down from the root, which made a deeply nested file quadratic. Where a
node sits comes from the query instead (`in_class`, `class_body`, `deferred`, `in_qualified`,
`declarator`, `top`), and a name is paired with its definition from the definition's side. Each
language's imports are read here; what they bind comes from `binding`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from typing import Any

from .binding import directive_path, go_bind, js_binds, rust_use
from .records import EXPORTED, INNER, LOCAL, Import, Symbol
from .revisit import Part

__all__ = ["captured"]

#: A byte that a qualified name (`a.b.c`, `a::b`, spaces and non-ASCII letters aside) never
#: holds: a captured `qref` with one is dropped without copying its text, which for a method
#: chain (`a.f().f().f()...`) spans the whole chain, once per link.
_NOT_A_NAME = re.compile(rb"[^\w$.:\s\x1c-\x1f\x80-\xff]")
#: A definition's one-line signature is kept whole up to this length: at 160, humanize's
#: `naturaltime(value, future=False, months=True, minimum_unit=..., when=...) -> str` lost
#: its return annotation, and `similar --mode signature` found nothing like it.
_SIGNATURE_CHARS = 400
_GO_KINDS = {"struct_type": "class", "interface_type": "interface"}
#: The Python captures (`languages`) whose imports do not run at import time, and when they do:
#: under `if TYPE_CHECKING:` never (even in a function), in a function when it is called, in a
#: `__main__` block when the file is run as a script.
_DEFERRING = (("typing", "never"), ("deferred", "call"), ("script", "script"))
_JS_FAMILY = frozenset({"javascript", "typescript", "tsx"})
#: JS/TS nodes that hold top-level declarations without being one: `namespace N {}` is an
#: `expression_statement`, `declare ...` an `ambient_declaration`, `const a = 1, b = 2` one
#: declaration of two declarators (the def nodes).
_HOLDERS = frozenset(
    {"expression_statement", "ambient_declaration", "lexical_declaration", "variable_declaration"}
)


def captured(
    language: str, data: bytes, caps: dict[str, Any], written: bytes | None = None
) -> Part:
    """What the captures `caps` (of a whole tree, or of one top-level node) add to a record."""
    symbols: list[tuple[int, str, int, Symbol]] = []
    module, exports, tops = False, frozenset[str](), dict[int, int]()
    if language in _JS_FAMILY:
        module, exports, tops = _js_tops(caps.get("top", ()))
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
        reach: dict[int, int] = {}  # def node -> `Symbol.reach`, when not `otherwise`
        otherwise = EXPORTED
        if language == "python":
            methods, reach = _python_scopes(defs.values(), caps)
        elif language in _JS_FAMILY:
            reach, otherwise = tops, INNER  # what no top-level statement declares is inside one
        for name_node in names:
            node = owner.get(name_node.id)
            if node is not None:
                kind = kinds[node.id]
                scope = reach.get(node.id, otherwise)
                sym = _symbol(language, kind, name_node, node, written or data, methods, scope)
                symbols.append((sym.line, sym.name, node.start_byte, sym))
        symbols.sort(key=_first_three)  # by line and name; ties (minified code) by position
    imports: list[Import] = []
    found = caps.get("import")
    if found:
        if language == "python":
            # when an import in each span runs (`Import.runs`), the first span holding it says
            where = [(runs, _Spans(caps.get(key, ()))) for key, runs in _DEFERRING]
            # captures come in the order the cursor finishes them, not quite document order
            for node in sorted(found, key=_start):
                at = node.start_byte
                runs = next((runs for runs, spans in where if at in spans), "import")
                imports.extend(_python_imports(node, node.start_point[0] + 1, runs))
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
        module,
        exports,
    )


def _start(node: Any) -> int:
    return int(node.start_byte)


def _first_three(row: tuple[int, str, int, Symbol]) -> tuple[int, str, int]:
    return row[0], row[1], row[2]


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", "replace"))


def _symbol(
    language: str,
    kind: str,
    name_node: Any,
    node: Any,
    data: bytes,
    methods: set[int],
    reach: int = EXPORTED,
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
        reach,
    )


def _python_scopes(defs: Iterable[Any], caps: dict[str, Any]) -> tuple[set[int], dict[int, int]]:
    """The Python functions that are methods, and the definitions that are not top-level
    (`INNER`), from the bodies of classes (`class_body`) and functions (`deferred`) around
    them: a function whose innermost enclosing body is a class's is a method, at any depth of
    `if`/`try`/`with` blocks in it (aiohttp's `ClientSession` defines methods under `if
    sys.version_info`), and one in a function is nested, in a class or not."""
    bodies = [(n.start_byte, -n.end_byte, True) for n in caps.get("class_body", ())]
    bodies += [(n.start_byte, -n.end_byte, False) for n in caps.get("deferred", ())]
    methods: set[int] = set()
    inner: dict[int, int] = {}
    if not bodies:
        return methods, inner
    bodies.sort()  # by start, the outer of two starting together first
    open_: list[tuple[int, bool]] = []  # (end, a class body) of the bodies around, innermost last
    at = 0
    for node in sorted(defs, key=_start):
        start = node.start_byte
        while at < len(bodies) and bodies[at][0] <= start:
            body_start, minus_end, in_class = bodies[at]
            while open_ and open_[-1][0] <= body_start:
                open_.pop()
            open_.append((-minus_end, in_class))
            at += 1
        while open_ and open_[-1][0] <= start:
            open_.pop()
        if open_:
            inner[node.id] = INNER
            if open_[-1][1] and node.type == "function_definition":
                methods.add(node.id)
    return methods, inner


def _js_tops(tops: Iterable[Any]) -> tuple[bool, frozenset[str], dict[int, int]]:
    """What JS/TS top-level statements say: whether one is an import or an export (the file
    is a module), the names exported without a declaration (`export { a }`, `export default
    a`, `export = a`), and the `reach` of each node they declare (def nodes among them):
    `EXPORTED` under `export`, else `LOCAL` (`revisit.summed` makes it `EXPORTED` in a script
    or when exported by name). A re-export from another file (`export ... from`) declares
    nothing here."""
    module = False
    exports: set[str] = set()
    reach: dict[int, int] = {}
    for node in tops:
        kind = node.type
        if kind == "import_statement":
            module = True
        elif kind == "export_statement":
            module = True
            if node.child_by_field_name("source") is not None:
                continue
            declaration = node.child_by_field_name("declaration")
            if declaration is not None:
                for held in _held(declaration):
                    reach[held.id] = EXPORTED
                continue
            for child in node.named_children:
                if child.type == "identifier":  # `export default a`, `export = a`
                    exports.add(_text(child))
                elif child.type == "export_clause":
                    for spec in child.named_children:
                        name = spec.child_by_field_name("name")
                        if name is not None:
                            exports.add(_text(name))
        else:
            for held in _held(node):
                reach.setdefault(held.id, LOCAL)
    return module, frozenset(exports), reach


def _held(node: Any) -> list[Any]:
    """`node` and what it holds as top-level declarations (`_HOLDERS`, a few levels at most;
    a `declare global { }` block's declarations augment the globals: no top-level name)."""
    out = [node]
    at = 0
    while at < len(out):
        here = out[at]
        at += 1
        if here.type in _HOLDERS:
            out += here.named_children
    return out


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
    # `import type ...` and `export type ... from`: erased when compiled, never run
    typing_only = node.type in ("import_statement", "export_statement") and any(
        c.type == "type" for c in node.children
    )
    runs = "never" if typing_only else "import"
    if kind is None and node.type == "import_statement":
        kind = "type" if typing_only else "import"
    if kind is None:
        function = node.child_by_field_name("function")
        kind = "dynamic" if function is not None and function.type == "import" else "require"
    names, binds = js_binds(node, declarator)
    return Import(spec, names, 0, line, kind, binds, runs)


class _Spans:
    """Byte spans of captured nodes (the bodies of functions, of `if TYPE_CHECKING:`, of `if
    __name__ == "__main__":`), nested ones merged into the outermost: `at in spans` is a
    bisection, not a scan of every function."""

    __slots__ = ("_ends", "_starts")

    def __init__(self, nodes: Iterable[Any]) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        for start, end in sorted((n.start_byte, n.end_byte) for n in nodes):
            if self._ends and start < self._ends[-1]:
                self._ends[-1] = max(self._ends[-1], end)
            else:
                self._starts.append(start)
                self._ends.append(end)

    def __contains__(self, at: int) -> bool:
        n = bisect_right(self._starts, at) - 1
        return n >= 0 and at < self._ends[n]


def _python_imports(node: Any, line: int, runs: str) -> list[Import]:
    """The imports of one statement; `runs` says when (`Import.runs`): `never` under `if
    TYPE_CHECKING:`, `call` in a function body, `script` under `if __name__ == "__main__":`,
    else `import`."""
    if node.type == "import_statement":
        out = []
        for child in node.children_by_field_name("name"):
            dotted, local = _aliased(child)
            if dotted is not None:
                module = "".join(_text(dotted).split())
                # `import a.b` binds `a` (and makes `a.b` reachable); `import a.b as x` binds `x`
                bind = local if local is not None else module.split(".", 1)[0]
                out.append(Import(module, (), 0, line, "import", (bind,), runs))
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
    module = "".join(module.split())
    return [Import(module, tuple(names), level, line, "from", tuple(binds), runs)]


def _aliased(node: Any) -> tuple[Any, str | None]:
    """(the dotted name, the alias or None) of an `aliased_import` or a plain dotted name."""
    if node.type != "aliased_import":
        return node, None
    alias = node.child_by_field_name("alias")
    return node.child_by_field_name("name"), None if alias is None else _text(alias)
