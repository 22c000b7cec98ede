"""Is a snippet consistent with the code around it (Ori's `is_consistent_with`)?

Each criterion gives a deviation score in [0, 1] (0: follows every convention checked, 1: breaks
all of them) and the concrete deviations. A convention is only held against the snippet when the
scope follows it in at least `DOMINANT` of its cases.
- `naming`: each name the snippet defines, against the scope's case style for that kind.
- `imports`: each import, against the scope's share of relative / absolute and star imports.
- `structure`: each function against the scope's functions: length and parameter count (at
  most the scope's 90th percentile), docstrings, type annotations; and the module against the
  scope's error handling and logging (bare `except:`, `print()`). These statistics come from the
  scope's 400 highest-ranked files, as conventions do.
The overall score is the mean of the criteria checked.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...errors import GraphError
from ..index.extract import extract
from ..index.kinds import is_test
from ..index.records import FileIndex, Symbol
from ..results import Consistency, Deviation
from .conventions import name_style, styles_fit
from .scope import dominant_language, need_files, select
from .shapecache import load_shapes
from .shapes import FileShape, family, snippet_shape, snippet_text
from .similar import parameters

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["CRITERIA", "DOMINANT", "check_consistency"]

CRITERIA = ("naming", "imports", "structure")
DOMINANT = 0.75
_CALLABLE = ("function", "method")
_BARE_EXCEPT = re.compile(r"^\s*except\s*:", re.M)
_PRINT = re.compile(r"^\s*print\(", re.M)
_LOGGER = re.compile(r"(logger|logging|log|LOGGER|_logger)\.\w+\(\)|logging\.getLogger")


def check_consistency(
    g: GraphView,
    snippet: str | bytes,
    *,
    paths: Sequence[str] = (),
    language: str | None = None,
    criteria: str = "all",
) -> Consistency:
    """The snippet's deviation from the conventions of `paths` (else every non-test file)."""
    if criteria != "all" and criteria not in CRITERIA:
        raise GraphError(f"unknown criteria '{criteria}'; use naming, structure, imports or all")
    lang = dominant_language(g, language)
    shape = snippet_shape(snippet, lang)
    text = snippet_text(snippet)
    record = extract("<snippet>", lang, text.encode("utf-8"))
    fam = family(lang)
    scope = [p for p in select(g, paths) if family(g.index.files[p].language) == fam]
    if not paths:
        scope = [p for p in scope if not is_test(p)] or scope
    need_files(g, scope, "a consistency check")
    label = ", ".join(paths) if paths else "this tree"
    chosen = CRITERIA if criteria == "all" else (criteria,)
    results = []
    for name in chosen:
        if name == "naming":
            results.append(_naming(g, scope, record.symbols, label))
        elif name == "imports":
            results.append(_imports(g, scope, record, label))
        else:
            results.append(_structure(g, scope, record, shape, text, label))
    checked = [d for d in results if d.checked]
    score = sum(d.score for d in checked) / len(checked) if checked else 0.0
    return Consistency(label, round(score, 4), tuple(results))


def _deviation(criterion: str, bad: list[str], checked: int) -> Deviation:
    score = len(bad) / checked if checked else 0.0
    return Deviation(criterion, round(min(1.0, score), 4), checked, tuple(bad))


def _naming(g: GraphView, scope: list[str], symbols: tuple[Symbol, ...], label: str) -> Deviation:
    styles: dict[str, Counter[str]] = {}
    for path in scope:
        for s in g.index.files[path].symbols:
            styles.setdefault(s.kind, Counter())[name_style(s.name)] += 1
    bad: list[str] = []
    checked = 0
    for s in symbols:
        counts = styles.get(s.kind)
        if not counts:
            continue
        total = sum(counts.values())
        best, share = _dominant(counts)
        if share < DOMINANT:
            continue
        checked += 1
        style = name_style(s.name)
        if not styles_fit(style, best):
            bad.append(
                f"{s.kind} names are {best} in {share:.0%} of {label} ({total}); "
                f"`{s.name}` is {style}"
            )
    return _deviation("naming", bad, checked)


def _dominant(counts: Counter[str]) -> tuple[str, float]:
    """The dominant style, one-word names counted for snake_case or camelCase."""
    folded = Counter(counts)
    lower = folded.pop("lower", 0)
    if not folded:
        return "snake_case", 1.0
    into = "camelCase" if folded["camelCase"] > folded["snake_case"] else "snake_case"
    folded[into] += lower
    best, n = sorted(folded.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    return best, n / sum(folded.values())


def _imports(g: GraphView, scope: list[str], record: FileIndex, label: str) -> Deviation:
    relative = absolute = stars = total = 0
    for path in scope:
        for imp in g.index.files[path].imports:
            local = imp.level > 0 or imp.module.startswith(".")
            relative += local
            absolute += not local
            stars += "*" in imp.names
            total += 1
    bad: list[str] = []
    checked = 0
    for imp in record.imports:
        checked += 1
        local = imp.level > 0 or imp.module.startswith(".")
        shown = ("." * imp.level + imp.module) or imp.module
        if total and local and absolute / total >= DOMINANT:
            bad.append(
                f"imports are absolute in {absolute / total:.0%} of {label}; `{shown}` is relative"
            )
        elif total and not local and relative / total >= DOMINANT and record.language != "python":
            bad.append(
                f"imports are relative in {relative / total:.0%} of {label}; `{shown}` is not"
            )
        elif "*" in imp.names and total and stars / total < 1 - DOMINANT:
            bad.append(
                f"star imports are {stars / total:.0%} of {label}'s imports; "
                f"`from {shown} import *` is one"
            )
    return _deviation("imports", bad, checked)


def _structure(
    g: GraphView, scope: list[str], record: FileIndex, shape: FileShape, text: str, label: str
) -> Deviation:
    lengths: list[int] = []
    counts: list[int] = []
    documented = annotated = functions = 0
    bare = prints = logs = 0
    # the scope's statistics come from its highest-ranked files (400 at most), as conventions do
    sample = sorted(scope, key=lambda p: (-g.pagerank[p], p))[:400]
    shapes = load_shapes(g, sample) if record.language == "python" else {}
    for path in sample:
        docs = {fn.start: fn.doc for fn in shapes[path].functions} if path in shapes else {}
        for s in g.index.files[path].symbols:
            if s.kind in _CALLABLE:
                functions += 1
                lengths.append(s.end_line - s.line + 1)
                counts.append(len(parameters(s.signature)))
                annotated += ":" in s.signature.split("(", 1)[-1] or "->" in s.signature
                documented += docs.get(s.line, False)
    if record.language == "python":
        for file_shape in shapes.values():
            labels = {name for _topic, name, _n, _line in file_shape.facts}
            bare += "bare except:" in labels
            prints += "print()" in labels
            logs += any(_LOGGER.match(label) for label in labels)
    bad: list[str] = []
    checked = 0
    long_limit, param_limit = _p90(lengths), _p90(counts)
    for s in record.symbols:
        if s.kind not in _CALLABLE or not functions:
            continue
        size, params = s.end_line - s.line + 1, len(parameters(s.signature))
        checked += 2
        if size > long_limit:
            bad.append(
                f"`{s.name}` is {size} lines; 90% of {label}'s functions have at most {long_limit}"
            )
        if params > param_limit:
            bad.append(
                f"`{s.name}` takes {params} parameters; 90% of {label}'s functions take at most {param_limit}"
            )
        if record.language == "python":
            checked += 2
            if documented / functions >= DOMINANT and not _has_docstring(shape, s):
                bad.append(
                    f"{documented / functions:.0%} of {label}'s functions have a docstring; `{s.name}` has none"
                )
            has_types = ":" in s.signature.split("(", 1)[-1] or "->" in s.signature
            if annotated / functions >= DOMINANT and not has_types:
                bad.append(
                    f"{annotated / functions:.0%} of {label}'s functions are annotated; `{s.name}` is not"
                )
    if record.language == "python" and sample:
        checked += 2
        if _BARE_EXCEPT.search(text) and bare / len(sample) < 1 - DOMINANT:
            share = bare / len(sample)
            bad.append(
                f"bare `except:` appears in {share:.0%} of {label}'s files; the snippet has one"
            )
        if _PRINT.search(text) and logs > prints:
            bad.append(
                f"{label} logs ({logs} files) more than it prints ({prints}); the snippet calls print()"
            )
    return _deviation("structure", bad, checked)


def _p90(values: list[int]) -> int:
    if not values:
        return 1 << 30
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def _has_docstring(shape: FileShape, s: Symbol) -> bool:
    """Whether the function defined at `s.line` starts with a docstring."""
    return any(fn.start == s.line and fn.doc for fn in shape.functions)
