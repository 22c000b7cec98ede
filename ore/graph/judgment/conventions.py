"""House conventions (Ori's `find_convention`): recurring patterns of the highest-ranked files.

Topics and where each comes from:
- `naming`: the index's symbols; case style per kind (snake_case, camelCase, PascalCase,
  UPPER_CASE; a one-word lower-case name fits snake_case and camelCase alike) and the most common
  first and last words; languages other than the main one are named in the label (`js: ...`).
- `imports`: the index's imports; absolute or relative, `from` or plain, aliases, star imports,
  and whether a file groups standard library, third-party and local imports in that order.
- `errors`, `logging`, `async`, `tests`: patterns matched in the files' text (`facts`), per
  language family (what is raised and caught, error classes; logger calls and `print`; async
  functions, awaits, threads; test framework, fixture style, test file naming).

Files: the top half by PageRank (at least 20, at most 400) of the scope, tests, examples and
docs left out (`index.kinds.is_context`; `include_context` keeps them), except for `tests`,
which looks at the test files. Shares are of symbols of the same kind (naming), of imports
(imports), of error classes (what they derive from; two classes at least) or of the files
looked at (the rest). What a reviewer would not call a convention is
not listed, one rule for every topic:
- a pattern under `MIN_SHARE` (10%) of its cases;
- of patterns that split the same cases (absolute or relative imports, `import x` or `from x
  import y`, imports grouped by origin or not, a kind's case styles), only the leading one, and
  only when it holds `RULE_SHARE` (two in three) of them; else the split is said as one pattern
  (`no rule: ...`), never its members as conventions;
- a smell (`bare except:`): `consistent` flags one in new code, it is no rule to follow;
- the first word of function names (a verb a handful of helpers share is vocabulary); the last
  word of class names stays (`...Error`, `...Decoder`: the family a new class joins);
- error classes deriving from a built-in (`Exception`) when a house base leads: the roots;
- `print()` as logging (logging means logging calls, a wrapper's `_log(DEBUG, ...)` too).
An exception is named without the module it was reached through (`exc.NotFound` and `NotFound`
are one).
"""

from __future__ import annotations

import builtins
import re
import sys
from collections import Counter
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ...errors import GraphError
from ..index.extract import MAX_BYTES
from ..index.kinds import is_context, is_test
from ..index.source import read_source
from ..results import Convention, Pattern
from .facts import first_nested_import
from .lexer import family
from .memo import remembered
from .scope import need_files, select, split_words
from .shapecache import load_shapes

if TYPE_CHECKING:
    from .view import GraphView

__all__ = [
    "MIN_SHARE",
    "OWN",
    "RULE_SHARE",
    "TOPICS",
    "find_conventions",
    "import_origin",
    "name_style",
    "styles_fit",
]

TOPICS = ("errors", "logging", "imports", "naming", "async", "tests")
MIN_SHARE = 0.1
RULE_SHARE = 2 / 3
_SHOWN = 8
_NOT_LOGGING = frozenset({"print()"})
_SMELLS = frozenset({"bare except:"})
#: Shares of error classes are of the error classes (a project defines them in one module).
_ERROR_CLASSES = ("error classes derive from ", "error classes extend ")
#: Patterns that split the same cases between them (each case is one of them).
_SPLITS = (
    ("absolute imports", "relative imports"),
    ("from x import y", "import x"),
    ("stdlib, third-party, local in that order", "imports not grouped by origin"),
    ("relative specifiers", "package specifiers"),
)
_CASE_STYLE = re.compile(r"^(.*names): (snake_case|camelCase|PascalCase|UPPER_CASE|mixed)$")
_DOTTED = re.compile(r"^((?:raise|except|error classes derive from) )[\w.]*\.(\w+)$")
_STDLIB = frozenset(sys.stdlib_module_names)

#: How a JS/TS import of each kind is counted (the rest: `import ... from`).
_JS_IMPORTS = {
    "require": "require()",
    "type": "import type",
    "export": "re-exports",
    "dynamic": "dynamic import()",
}
#: The import patterns that count imports (each import is one of them): the shares' denominator.
_IMPORT_STYLES = (
    "absolute imports",
    "relative imports",
    "relative specifiers",
    "package specifiers",
)
_TEST_NAMES = (
    ("test_*.py", re.compile(r"(^|/)test_[^/]*\.pyi?$")),
    ("*_test.py", re.compile(r"_test\.py$")),
    ("*_test.go", re.compile(r"_test\.go$")),
    ("*.test.* (JS/TS)", re.compile(r"\.test\.[cm]?[jt]sx?$")),
    ("*.spec.* (JS/TS)", re.compile(r"\.spec\.[cm]?[jt]sx?$")),
    ("in a tests/ folder", re.compile(r"(^|/)(tests?|__tests__)/")),
)


@dataclass
class _Tally:
    """Counts of one topic's patterns, with the first place each was seen."""

    counts: Counter[str] = field(default_factory=Counter)
    where: dict[str, str] = field(default_factory=dict)
    files: Counter[str] = field(default_factory=Counter)

    def add(self, label: str, example: str, path: str | None = None) -> None:
        self.counts[label] += 1
        self.where.setdefault(label, example)
        if path is not None:
            self.files[label] += 1


def name_style(name: str) -> str:
    """snake_case, camelCase, PascalCase, UPPER_CASE, lower (one lower-case word) or mixed."""
    bare = name.strip("_")
    if not bare:
        return "mixed"
    if bare.isupper() or (bare.upper() == bare and any(c.isalpha() for c in bare)):
        return "UPPER_CASE" if "_" in bare or len(bare) > 1 else "PascalCase"
    if bare.islower() or not any(c.isalpha() for c in bare):
        return "snake_case" if "_" in bare else "lower"
    if "_" in bare:
        return "mixed"
    return "PascalCase" if bare[0].isupper() else "camelCase"


def styles_fit(style: str, dominant: str) -> bool:
    """Whether a name of `style` follows a `dominant` style (one word fits both cases)."""
    return style == dominant or (style == "lower" and dominant in ("snake_case", "camelCase"))


def find_conventions(
    g: GraphView,
    topic: str | None = None,
    *,
    paths: Sequence[str] = (),
    include_context: bool = False,
) -> list[Convention]:
    """The conventions of one topic, or of all of them (`topic=None`), from library code
    (tests, examples and docs too when `include_context`)."""
    if topic is not None and topic not in TOPICS:
        raise GraphError(f"unknown topic '{topic}'; use one of {', '.join(TOPICS)}")
    scope = select(g, paths)
    need_files(g, scope, "conventions")
    ranked = sorted(scope, key=lambda p: (-g.pagerank[p], p))
    code = ranked if include_context else [p for p in ranked if not is_context(p)] or ranked
    top = code[: min(400, max(20, len(code) // 2))]
    tests = [p for p in ranked if is_test(p)]
    out = []
    for name in [topic] if topic else TOPICS:
        files = tests if name == "tests" else top
        # what a topic finds depends only on these files' contents: kept by content (`memo`)
        compute = partial(_find, g, name, files)
        out.append(remembered(g, "conventions", (name,), files, compute, _row, _convention_of))
    return out


def _find(g: GraphView, topic: str, files: list[str]) -> Convention:
    return _convention(topic, _tally(g, topic, files), files)


def _row(c: Convention) -> tuple[object, ...]:
    patterns = tuple((p.name, p.count, p.share, p.example) for p in c.patterns)
    return (c.topic, c.files, patterns, c.summary)


def _convention_of(row: tuple[Any, ...]) -> Convention:
    topic, files, patterns, summary = row
    return Convention(str(topic), int(files), tuple(Pattern(*p) for p in patterns), str(summary))


def _tally(g: GraphView, topic: str, files: Sequence[str]) -> _Tally:
    tally = _Tally()
    if topic == "naming":
        families = Counter(family(g.index.files[p].language) for p in files)
        main = families.most_common(1)[0][0] if families else ""
        for path in files:
            fam = family(g.index.files[path].language)
            prefix = "" if fam == main else f"{fam}: "  # each language keeps its own style
            for s in g.index.files[path].symbols:
                where = f"{path}:{s.line}"
                tally.add(f"{prefix}{s.kind} names: {name_style(s.name)}", where)
                words = split_words(s.name)
                if len(words) > 1 and s.kind in ("class", "interface", "type"):
                    tally.add(f"{prefix}{s.kind} names end with '{words[-1].capitalize()}'", where)
        return tally
    if topic == "imports":
        for path in files:
            _import_patterns(g, path, tally)
        return tally
    if topic == "tests":
        for path in files:
            for label, rx in _TEST_NAMES:
                if rx.search(path):
                    tally.add(f"test files: {label}", f"{path}:1", path)
    for path, shape in load_shapes(g, files).items():
        seen: set[str] = set()
        for fact_topic, label, count, line in shape.facts:
            if fact_topic != topic or label in _NOT_LOGGING or label in _SMELLS:
                continue
            label = _DOTTED.sub(r"\1\2", label)  # `raise exc.NotFound` is `raise NotFound`
            tally.counts[label] += count
            tally.where.setdefault(label, f"{path}:{line}")
            if label not in seen:
                seen.add(label)
                tally.files[label] += 1
    return tally


#: Where a Python import comes from (`import_origin`), in the order PEP 8 groups them.
STDLIB, THIRD_PARTY, OWN = 0, 1, 2


def import_origin(module: str, level: int, externals: Container[str]) -> int:
    """Where a Python import comes from: the standard library, a third party (one of the
    file's `externals`, as the index resolved them) or the project itself (what is left,
    relative imports included)."""
    head = module.split(".")[0]
    if head in _STDLIB and not level:
        return STDLIB
    return THIRD_PARTY if head in externals else OWN


def _import_patterns(g: GraphView, path: str, tally: _Tally) -> None:
    """The file's import patterns; the order of origins is read in its import block (`_block`)."""
    record = g.index.files[path]
    externals = set(g.index.externals.get(path, ()))
    order: list[tuple[int, int]] = []  # line, origin
    for imp in record.imports:
        where = f"{path}:{imp.line}"
        if record.language == "python":
            origin = import_origin(imp.module, imp.level, externals)
            if origin == OWN:  # how the project imports itself: `import os` is no absolute import
                tally.add("relative imports" if imp.level else "absolute imports", where)
            tally.add("from x import y" if imp.kind == "from" else "import x", where)
            if "*" in imp.names:
                tally.add("star imports", where)
            if imp.kind == "import" and imp.binds and imp.binds[0] != imp.module.split(".")[0]:
                tally.add(f"import {imp.module} as {imp.binds[0]}", where)
            order.append((imp.line, origin))
        elif family(record.language) == "js":
            relative = imp.module.startswith(".")
            tally.add("relative specifiers" if relative else "package specifiers", where)
            tally.add(_JS_IMPORTS.get(imp.kind, "import ... from"), where)
            if imp.names and imp.names[0] == "default":
                tally.add("default imports", where)
        else:
            tally.add(f"{imp.kind} {('aliased' if imp.binds and imp.names else '')}".strip(), where)
    origins = _block(g, path, order)
    if len(set(origins)) > 1:
        label = "stdlib, third-party, local in that order"
        if origins != sorted(origins):
            label = "imports not grouped by origin"
        tally.add(label, f"{path}:1", path)


def _block(g: GraphView, path: str, order: list[tuple[int, int]]) -> list[int]:
    """The origins of a file's import block: the imports above its first one nested under
    `if`, `try` or a `def` (a `TYPE_CHECKING` block, a function's own import). The file is
    read only when all its imports are out of order (most are not)."""
    origins = [origin for _line, origin in order]
    if origins == sorted(origins):
        return origins
    data = read_source(g.root, path, limit=MAX_BYTES)
    end = first_nested_import(data.decode("utf-8", "replace")) if data else None
    return [origin for line, origin in order if end is None or line < end]


def _fold_one_word_names(tally: _Tally) -> None:
    """`lower` (one lower-case word) counts for snake_case or camelCase, whichever the kind
    uses more (snake_case on a tie)."""
    for label in [k for k in tally.counts if k.endswith(": lower")]:
        head = label[: -len("lower")]
        snake, camel = tally.counts[head + "snake_case"], tally.counts[head + "camelCase"]
        into = head + ("camelCase" if camel > snake else "snake_case")
        tally.counts[into] += tally.counts.pop(label)
        tally.where.setdefault(into, tally.where[label])


def _without_roots(patterns: list[Pattern]) -> list[Pattern]:
    """Error classes deriving from a built-in (`Exception`) beside a house base that leads are
    only the house's roots: listed when the built-in leads, else not."""
    bases = [p for p in patterns if p.name.startswith(_ERROR_CLASSES)]
    if not bases:
        return patterns
    lead = max(bases, key=lambda p: (p.share, p.count))
    if _builtin_base(lead.name):
        return patterns
    return [p for p in patterns if p not in bases or not _builtin_base(p.name)]


def _builtin_base(label: str) -> bool:
    base = label.rsplit(" ", 1)[-1]
    found = getattr(builtins, base, None)
    return base == "Error" or (isinstance(found, type) and issubclass(found, BaseException))


def _enough(p: Pattern) -> bool:
    """A share of error classes holds for two of them at least (one class is no family)."""
    return p.count >= 2 or not p.name.startswith(_ERROR_CLASSES)


def _splits(topic: str, labels: list[str]) -> list[list[str]]:
    """The groups of labels that split the same cases (those of them found)."""
    if topic == "imports":
        groups = [[label for label in split if label in labels] for split in _SPLITS]
    elif topic == "naming":
        by_kind: dict[str, list[str]] = {}
        for label in labels:
            match = _CASE_STYLE.match(label)
            if match:
                by_kind.setdefault(match.group(1), []).append(label)
        groups = list(by_kind.values())
    else:
        return []
    return [group for group in groups if group]


def _ruled(topic: str, patterns: list[Pattern]) -> list[Pattern]:
    """Each split's leading pattern when it holds `RULE_SHARE` of the split's cases, else one
    `no rule: ...` pattern; the other members are only its complement and go."""
    by_name = {p.name: p for p in patterns}
    for group in _splits(topic, list(by_name)):
        members = sorted((by_name.pop(n) for n in group), key=lambda p: (-p.count, p.name))
        total = sum(p.count for p in members)
        lead = members[0]
        share = round(lead.count / total, 4)
        if share >= RULE_SHARE:
            by_name[lead.name] = Pattern(lead.name, lead.count, share, lead.example)
            continue
        parts = [
            f"{_member(p.name, i)} {p.count / total:.0%}"
            for i, p in enumerate(members)
            if p.count / total >= MIN_SHARE
        ]
        name = "no rule: " + " vs ".join(parts)
        by_name[name] = Pattern(name, total, share, lead.example)
    return list(by_name.values())


def _member(label: str, index: int) -> str:
    """How a split names its member: a case style after the first as the style alone."""
    match = _CASE_STYLE.match(label)
    if match is None:
        return label
    return f"{match.group(1)} {match.group(2)}" if index == 0 else match.group(2)


def _convention(topic: str, tally: _Tally, files: Sequence[str]) -> Convention:
    patterns = []
    totals: Counter[str] = Counter()
    if topic == "naming":
        _fold_one_word_names(tally)
        for label, n in tally.counts.items():
            totals[label.split(" names")[0]] += n if ": " in label else 0
    imports = sum(n for label, n in tally.counts.items() if label in _IMPORT_STYLES)
    error_classes = sum(n for label, n in tally.counts.items() if label.startswith(_ERROR_CLASSES))
    for label, count in tally.counts.items():
        if topic == "naming":
            denominator = totals[label.split(" names")[0]] or count
        elif topic == "imports" and label not in tally.files:
            denominator = imports or count
        elif label.startswith(_ERROR_CLASSES):  # a project defines them in a module or two
            denominator = error_classes
        else:
            denominator = len(files) or 1
            share = round(min(1.0, tally.files.get(label, count) / denominator), 4)
            patterns.append(Pattern(label, count, share, tally.where[label]))
            continue
        patterns.append(Pattern(label, count, round(count / denominator, 4), tally.where[label]))
    patterns = [p for p in _ruled(topic, patterns) if p.share >= MIN_SHARE and _enough(p)]
    patterns = _without_roots(patterns)
    patterns.sort(key=lambda p: (-p.share, -p.count, p.name))
    shown = tuple(patterns[: _SHOWN * (3 if topic == "naming" else 1)])
    if not shown and tally.counts:  # seen, but none common enough to be a convention
        label, count = max(tally.counts.items(), key=lambda kv: (kv[1], kv[0]))
        summary = (
            f"no {topic} pattern is common enough to be a convention in {len(files)} files "
            f"({len(tally.counts)} seen, the most frequent '{label}' {count} times)"
        )
    elif not shown:
        summary = f"no {topic} patterns found in {len(files)} files"
    else:
        summary = "; ".join(_said(p) for p in shown[:3])
    return Convention(topic, len(files), shown, summary)


def _said(p: Pattern) -> str:
    """A pattern in a summary: a `no rule` line carries its shares already."""
    return p.name if p.name.startswith("no rule: ") else f"{p.name} ({p.share:.0%})"
