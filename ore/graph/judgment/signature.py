"""The codebase signature (Ori's ambient signature): a compact picture of a tree, sized to a budget.

Levels add sections, most important first: `lean` (size, central files), `standard` (+ their
public names, module communities, import cycles), `deep` (+ key symbols with signatures,
dependency patterns between folders, a one-line summary per convention topic), `max` (+ more of
everything, hubs and authorities, the top patterns of each topic).

Tokens are counted per line as the larger of `ceil((characters + 1) / 4)` (the usual rule of
thumb for English and code, newline included) and the number of words and punctuation marks
(`\\w+` runs plus every other non-space character), summed over the lines. The sum is never less
than the same count on the whole text, so a model's tokenizer seldom sees more than `tokens`. A
line that would go past `max_tokens` is left out (and so is a section header with no line after
it); the result never exceeds the budget.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from ...errors import GraphError
from ..index.kinds import is_context, stub_beside_module
from ..index.records import EXPORTED
from ..names import plain_name
from ..results import Cycle, FileScore, GraphStats, Hits, Signature
from .conventions import find_conventions
from .scope import nested_lines
from .view import GraphView

__all__ = ["DEFAULT_TOKENS", "LEVELS", "Overview", "build_signature", "count_tokens"]

LEVELS = ("lean", "standard", "deep", "max")
DEFAULT_TOKENS = {"lean": 300, "standard": 1000, "deep": 2000, "max": 4000}
_WORDS = re.compile(r"\w+|[^\w\s]")


class Overview(GraphView, Protocol):
    """A graph as the signature reads it: a judgment's view, and the structure queries whose
    answers it summarises (`CodeGraph` is one)."""

    @property
    def incoming(self) -> Mapping[str, Mapping[str, float]]: ...

    @property
    def imports(self) -> Mapping[str, Mapping[str, float]]: ...

    def stats(self) -> GraphStats: ...

    def top_files(self, limit: int | None = ...) -> list[FileScore]: ...

    def hits(self, limit: int | None = ...) -> Hits: ...

    def cycles(self, limit: int | None = ...) -> list[Cycle]: ...


@dataclass(frozen=True)
class _Plan:
    files: int
    names: int
    communities: int
    symbols: int
    patterns: int
    conventions: int  # 0 none, 1 summaries, 2 summaries and top patterns
    hits: int


_PLANS = {
    "lean": _Plan(5, 0, 0, 0, 0, 0, 0),
    "standard": _Plan(10, 5, 5, 0, 0, 0, 0),
    "deep": _Plan(15, 8, 8, 10, 8, 1, 0),
    "max": _Plan(25, 12, 12, 20, 15, 2, 5),
}


def count_tokens(text: str) -> int:
    """Tokens of a text as the signature counts them (see the module docstring)."""
    return sum(
        max(math.ceil((len(line) + 1) / 4), len(_WORDS.findall(line))) for line in text.split("\n")
    )


class _Budget:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.lines: list[str] = []

    def add(self, line: str) -> bool:
        cost = count_tokens(line)
        if self.used + cost > self.limit:
            return False
        self.lines.append(line)
        self.used += cost
        return True

    def section(self, header: str, lines: list[str]) -> None:
        if not lines or self.used + count_tokens(header) + count_tokens(lines[0]) > self.limit:
            return
        self.add(header)
        for line in lines:
            self.add(line)


def build_signature(
    g: Overview, level: str = "standard", max_tokens: int | None = None
) -> Signature:
    """The signature of `g` at `level`, within `max_tokens` (default: the level's own)."""
    if level not in LEVELS:
        raise GraphError(f"unknown level '{level}'; use lean, standard, deep or max")
    limit = DEFAULT_TOKENS[level] if max_tokens is None else max_tokens
    if limit < 1:
        raise GraphError(f"max_tokens must be 1 or more, not {limit}")
    plan = _PLANS[level]
    budget = _Budget(limit)
    s = g.stats()
    languages = ", ".join(f"{k} {v}" for k, v in s.languages.items()) or "no source files"
    budget.add(f"{s.files} files ({languages}); {s.import_edges} import edges; {s.symbols} symbols")
    scores = g.pagerank
    ranked = sorted(
        (p for p in g.files if not is_context(p) and not stub_beside_module(p, g.index.files)),
        key=lambda p: (-scores[p], p),
    )
    central = []
    uses = _uses(g) if plan.names or plan.symbols else Counter()
    for path in ranked[: plan.files]:
        line = f"  {plain_name(path)} ({len(g.incoming[path])} dependents)"
        if plan.names:
            names = _offered(g, path, uses)
            if names:
                more = " …" if len(names) > plan.names else ""
                line += ": " + ", ".join(names[: plan.names]) + more
        central.append(line)
    budget.section("central files (PageRank):", central)
    if plan.communities:
        groups = [c for c in g.communities() if len(c.files) > 1][: plan.communities]
        budget.section("modules (communities):", [_community(g, c.files) for c in groups])
        cycles = g.cycles()
        if cycles:
            shown = [
                " -> ".join(map(plain_name, c.cycle)) for c in cycles[: 3 if level != "max" else 8]
            ]
            budget.section(f"import cycles ({len(cycles)}):", [f"  {c}" for c in shown])
    if plan.symbols:
        budget.section("key symbols (most used):", _key_symbols(g, plan.symbols, uses))
    if plan.patterns:
        budget.section("dependencies between folders (imports):", _folders(g, plan.patterns))
    if plan.hits:
        h = g.hits(plan.hits)
        budget.section("hubs (orchestrate):", [f"  {plain_name(x.path)}" for x in h.hubs])
        authorities = [f"  {plain_name(x.path)}" for x in h.authorities]
        budget.section("authorities (relied on):", authorities)
    if plan.conventions and g.files:
        lines = []
        for c in find_conventions(g):
            lines.append(f"  {c.topic}: {c.summary}")
            if plan.conventions > 1:
                lines += [
                    f"    {p.name} ({p.count}, e.g. {plain_name(p.example)})"
                    for p in c.patterns[:3]
                ]
        budget.section("conventions:", lines)
    text = "\n".join(budget.lines)
    return Signature(level, limit, budget.used, text)


_API_KINDS = frozenset({"class", "interface", "function", "type", "enum", "namespace"})


def _public(g: GraphView, path: str) -> list[str]:
    """Public top-level names of a file, once each (overloads and redefinitions are one name);
    a function nested in another (`wrapper`, `decorator`) is not part of the API, nor a name a
    JavaScript or TypeScript module does not export (`Symbol.reach`). Membership is
    a set's: a list's made a file of 20,000 functions take seconds."""
    out: dict[str, None] = {}  # insertion-ordered, each name once
    symbols = g.index.files[path].symbols
    nested = nested_lines(symbols)
    for s in sorted(symbols, key=lambda s: (s.line, -s.end_line)):
        if s.line in nested or s.kind not in _API_KINDS or s.reach != EXPORTED:
            continue  # nested (Rust's too), or not exported (a JS/TS module's own, a member)
        if not s.name.startswith("_"):
            out.setdefault(s.name)
    return list(out)


#: The stems of entry files, which offer what they import from their package.
_ENTRY = frozenset({"__init__", "index", "mod"})
#: Constants sharing a first word are shown as one group (`MSG_* (48)`) from this many.
_GROUP = 3


def _uses(g: GraphView) -> Counter[str]:
    """How often the tree's code uses each name (its references, by last dotted part)."""
    uses: Counter[str] = Counter()
    for record in g.index.files.values():
        for name, count in record.refs:
            uses[name.rsplit(".", 1)[-1]] += count
    return uses


def _offered(g: GraphView, path: str, uses: Counter[str]) -> list[str]:
    """What a file offers its dependents, as the central files line shows it: its public
    classes and functions, the most used by other files first (tornado's `gen.py` showed five
    internal exception classes, not `coroutine` and `multi`), then its public constants, those
    sharing a first word grouped (`MSG_* (48)`: a module of constants was shown by its three
    helper functions); an entry file defining neither offers what it re-exports."""
    record = g.index.files[path]
    own: Counter[str] = Counter()
    for name, count in record.refs:  # uses by other files only
        own[name.rsplit(".", 1)[-1]] += count
    names = sorted(_public(g, path), key=lambda name: own[name] - uses[name])  # ties in order
    if not names and posixpath.basename(path).split(".", 1)[0] in _ENTRY:
        package = posixpath.dirname(path).replace("/", ".")
        for imp in record.imports:
            inside = imp.level > 0 or (package and imp.module.startswith(package + "."))
            if inside and imp.kind in ("from", "export"):
                names += [b for b in imp.binds if b and b != "*" and not b.startswith("_")]
        return list(dict.fromkeys(names))
    groups: dict[str, dict[str, None]] = {}
    for s in record.symbols:  # constants: upper case, a one-letter prefix aside (`cMSG_X`)
        if (
            s.kind == "variable"
            and s.reach == EXPORTED
            and not s.name.startswith("_")
            and s.name[1:].upper() == s.name[1:]
        ):
            groups.setdefault(s.name.split("_", 1)[0], {})[s.name] = None
    singles: list[str] = []
    for head, members in groups.items():
        if len(members) >= _GROUP and head not in members:
            names.append(f"{head}_* ({len(members)})")
        else:
            singles += members
    return names + singles


def _community(g: GraphView, files: tuple[str, ...]) -> str:
    """A community named by the folder most of its files are in, and by its most central
    file's folder when that is another (`tests/` alone named one whose central files were
    the library's)."""
    folder = Counter(posixpath.dirname(p) or "." for p in files).most_common(1)[0][0]
    best = sorted(files, key=lambda p: (-g.pagerank[p], p))[:3]
    named = dict.fromkeys((posixpath.dirname(best[0]) or ".", folder))
    label = " + ".join(f"{plain_name(name)}/" for name in named)
    return f"  {label} ({len(files)} files): " + ", ".join(map(plain_name, best))


def _key_symbols(g: Overview, limit: int, uses: Counter[str]) -> list[str]:
    rows = []
    for f in g.top_files(40):
        names = set(_public(g, f.path))
        for s in g.index.files[f.path].symbols:
            public = s.kind in ("class", "function", "interface", "type") and s.name in names
            if public and uses[s.name]:
                names.discard(s.name)  # an overloaded name once
                rows.append((-uses[s.name], f.path, s.line, s.signature))
    rows.sort()
    return [
        f"  {sig}  [{plain_name(path)}:{line}, {-n} uses]" for n, path, line, sig in rows[:limit]
    ]


def _folders(g: Overview, limit: int) -> list[str]:
    pairs: Counter[tuple[str, str]] = Counter()
    for source, targets in g.imports.items():
        a = posixpath.dirname(source) or "."
        for target in targets:
            b = posixpath.dirname(target) or "."
            if a != b:
                pairs[a, b] += 1
    return [
        f"  {plain_name(a)}/ -> {plain_name(b)}/ ({n} imports)"
        for (a, b), n in pairs.most_common(limit)
    ]
