"""Read one file into a `FileIndex`: hash, parse, run the language's query, build the record.

All extraction goes through one tree-sitter query per language (run in C), run once over the
tree (or, after an edit, over the top-level nodes it touched); what its captures add to the
record is read by `captures`. Anything the parser cannot read still yields a record:
tree-sitter recovers from syntax errors, so a broken file keeps the definitions that parse, and
a JS/TS file with errors is read again in pieces (TypeScript after `modern_ts`).
"""

from __future__ import annotations

import hashlib
import os
import re
from bisect import bisect_right
from functools import partial
from pathlib import Path
from typing import Any

from ..._fs import NotRegularFile, OutsideRoot, open_below, read_fd
from .binding import kept_refs
from .captures import captured
from .languages import edit_of, keep_functions, parse, parser_and_query
from .modern_ts import modern_ts
from .records import FileIndex, Import, Symbol
from .revisit import Part, Stamp, revisited, summed

__all__ = ["MAX_BYTES", "Skipped", "digest_of", "extract", "index_file", "unparsed"]

MAX_BYTES = 1_000_000
#: Deepest node a query match may start at. tree-sitter's query cursor keeps depths in 16 bits:
#: past 65,535 levels (a 1 MB file can nest 300,000 calls) it slows to minutes and drops
#: matches anyway, so what sits deeper than any real code is left out, and the walk stays linear.
_MAX_DEPTH = 60_000


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
    module: bool | None = None,
) -> FileIndex:
    """The record of one parse: what the language's query captures in `tree`; signatures are
    read from `written` (the file as written) when `data` is a rewrite of it; `module`: whether
    the file is a JS/TS module when `data` is a piece of it (`revisit.summed`)."""
    _parser, query = parser_and_query(language)
    # One pass of the query, captures grouped by name (cheaper in C than per-match dicts); the
    # def node of a `name` is always its parent, and an import's `source` sits 1-3 levels below.
    caps = _cursor(query).captures(tree.root_node)
    if language == "python" and not tree.root_node.has_error:
        keep_functions(tree, caps.get("def.function", []))
    part = captured(language, data, caps, written)
    stamp = Stamp(size, mtime_ns, digest, non_utf8)
    refs = partial(_refs, language, part)
    return summed(path, language, data, tree, (part,), stamp, refs, module=module)


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
    return [captured(language, data, caps) for caps in groups]


#: Languages whose files with syntax errors are read again in pieces (`_recovered`).
_RECOVERED = frozenset({"typescript", "tsx", "javascript"})
#: Where a top-level declaration starts: a line opening with one of these at column 0.
_TOP_LEVEL = re.compile(
    rb"^(?:(?:export|declare|function|class|interface|type|const|let|var|enum|abstract"
    rb"|namespace|module|async|import)\b|@)",
    re.M,
)
#: A line opening with an import or an export: the file is an ES module.
_MODULE = re.compile(rb"^(?:import|export)(?=[\s{*])", re.M)


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

    First the syntax the grammar lacks is rewritten in place (`modern_ts`); if errors remain,
    each top-level node holding one (a 28,000-line module can become a single `ERROR`) is cut
    at the lines where a top-level declaration starts and each piece is parsed alone (its lines
    then moved to where the piece starts). A piece's definitions replace what the first parse kept
    of that region when there are more of them; imports and references are joined."""
    parser, _query = parser_and_query(language)
    fixed = modern_ts(data) if language == "typescript" else data  # JSX has lines opening `<`
    if fixed != data:
        tree = parser.parse(fixed)
        if not tree.root_node.has_error:
            return _record(path, language, fixed, tree, size, mtime_ns, digest, non_utf8, data)
    # an import or export at a line's start makes the file a module, whichever piece holds it
    module = _MODULE.search(fixed) is not None
    whole = _record(path, language, fixed, tree, size, mtime_ns, digest, non_utf8, data, module)
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
            piece = parser.parse(chunk)
            part = _record(path, language, chunk, piece, 0, 0, "", False, data[a:b], module)
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
    index reads it (after `modern_ts` for TS), for reports."""
    parser, _query = parser_and_query(language)
    lines = data.count(b"\n") + 1
    if parser is None:
        return 0, lines
    if language == "typescript":
        data = modern_ts(data)
    stack = [parser.parse(data).root_node]
    bad: set[int] = set()
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            bad.update(range(node.start_point[0], node.end_point[0] + 1))
        elif node.has_error:
            stack.extend(node.children)
    return len(bad), lines


def _line(imp: Import) -> int:
    return imp.line


def _cursor(query: Any) -> Any:
    import tree_sitter

    cursor = tree_sitter.QueryCursor(query)
    cursor.set_max_start_depth(_MAX_DEPTH)
    return cursor
