"""Is a snippet consistent with the code around it (Ori's `is_consistent_with`)?

Each criterion gives a deviation score in [0, 1] (0: follows every convention checked, 1: breaks
all of them) and the concrete deviations. A convention is only held against the snippet when the
scope follows it in at least `DOMINANT` of its cases.
- `naming`: each name the snippet defines, against the scope's case style for that kind.
- `imports`: each import, against the scope's share of relative / absolute and star imports.
- `structure`: each function against the scope's functions: length and parameter count (past
  the scope's 98th percentile: the project's own ordinary code is never flagged), and, for a
  public function, a docstring and type annotations; and the module against the scope's error
  handling and logging, as a reviewer reads them: a bare `except:`, `print()` where the code
  logs (logger calls, or a wrapper's `self._log(DEBUG, ...)`), `raise Exception` where it has
  exception types of its own, a logger named by a literal where it uses `getLogger(__name__)`,
  `import a, b` where it never groups imports. These statistics come from the scope's 400
  highest-ranked files, as conventions do.
The scope leaves out tests, examples and docs unless `include_context` (or `paths`) names them.
The overall score is the mean of the criteria checked.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...errors import GraphError
from ..index.extract import extract
from ..index.kinds import is_context
from ..index.python_imports import python_module_names
from ..index.records import FileIndex, Symbol
from ..results import Consistency, Deviation
from .conventions import OWN, import_origin, name_style, styles_fit
from .facts import LEVEL_CALL
from .lexer import family, without_literals
from .parameter_lists import parameters
from .scope import dominant_language, need_files, select
from .shapecache import load_shapes
from .shapes import FileShape, snippet_shape, snippet_text

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["CRITERIA", "DOMINANT", "check_consistency"]

CRITERIA = ("naming", "imports", "structure")
DOMINANT = 0.75
_CALLABLE = ("function", "method")
_BARE_EXCEPT = re.compile(r"^\s*except\s*:", re.M)
_PRINT = re.compile(r"^\s*print\(", re.M)
_LOGGER = re.compile(
    r"(logger|logging|log|LOGGER|LOG|_logger|\w+_log|\w+_logger)\.\w+\(\)|logging\.getLogger"
)
_RAISE_EXCEPTION = re.compile(r"^\s*raise\s+(?:builtins\.)?Exception\b", re.M)
_LITERAL_LOGGER = re.compile(r"getLogger\(\s*[rbuRBU]?['\"]")
_OWN_ERRORS = "error classes derive from "
_NAME_LOGGER = "logging.getLogger(__name__)"
_PERCENTILE = 0.98
_DOCUMENTED = 0.9  # docstrings and annotations: a house rule only when nearly everything follows
_LOGGING_FILES = 3  # files that log before printing counts as a deviation
_MAIN = re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:", re.M)  # a script's own output


def check_consistency(
    g: GraphView,
    snippet: str | bytes,
    *,
    paths: Sequence[str] = (),
    language: str | None = None,
    criteria: str = "all",
    include_context: bool = False,
) -> Consistency:
    """The snippet's deviation from the conventions of `paths` (else the library code: tests,
    examples and docs too when `include_context`)."""
    if criteria != "all" and criteria not in CRITERIA:
        raise GraphError(f"unknown criteria '{criteria}'; use naming, structure, imports or all")
    lang = dominant_language(g, language)
    shape = snippet_shape(snippet, lang)
    text = snippet_text(snippet)
    record = extract("<snippet>", lang, text.encode("utf-8"))
    fam = family(lang)
    scope = [p for p in select(g, paths) if family(g.index.files[p].language) == fam]
    if not paths and not include_context:
        scope = [p for p in scope if not is_context(p)] or scope
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
    """Relative against absolute counts the project's imports of its own modules only: in
    Python, `import os` or `import requests` is no absolute import of the project's (aiohttp
    imports itself relatively 265 times of 269, and a snippet's `from aiohttp.helpers import
    reify` is the deviation)."""
    relative = absolute = stars = total = 0
    for path in scope:
        scoped = g.index.files[path]
        outside = set(g.index.externals.get(path, ()))
        for imp in scoped.imports:
            local = imp.level > 0 or imp.module.startswith(".")
            stars += "*" in imp.names
            total += 1
            if scoped.language == "python" and import_origin(imp.module, imp.level, outside) != OWN:
                continue
            relative += local
            absolute += not local
    styled = relative + absolute
    packages = _own_packages(g) if record.language == "python" else set()
    bad: list[str] = []
    checked = 0
    for imp in record.imports:
        checked += 1
        local = imp.level > 0 or imp.module.startswith(".")
        shown = ("." * imp.level + imp.module) or imp.module
        own = record.language != "python" or imp.module.split(".")[0] in packages
        if styled and local and absolute / styled >= DOMINANT:
            bad.append(
                f"imports are absolute in {absolute / styled:.0%} of {label}; `{shown}` is relative"
            )
        elif styled and not local and own and relative / styled >= DOMINANT:
            bad.append(
                f"imports are relative in {relative / styled:.0%} of {label}; `{shown}` is not"
            )
        elif "*" in imp.names and total and stars / total < 1 - DOMINANT:
            bad.append(
                f"star imports are {stars / total:.0%} of {label}'s imports; "
                f"`from {shown} import *` is one"
            )
    return _deviation("imports", bad, checked)


def _own_packages(g: GraphView) -> set[str]:
    """The top-level names the project's Python modules are imported by: the first part of
    each module's dotted name in the index's own table (`python_imports.python_module_names`)."""
    paths = [p for p, r in g.index.files.items() if r.language == "python"]
    return {name.split(".")[0] for name in python_module_names(str(g.root), paths)}


def _structure(
    g: GraphView, scope: list[str], record: FileIndex, shape: FileShape, text: str, label: str
) -> Deviation:
    lengths: list[int] = []
    counts: list[int] = []
    documented = annotated = functions = public = 0
    bare = prints = logs = 0
    own_errors: list[str] = []
    by_name = literal = grouped = 0
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
                if not s.name.startswith("_"):
                    public += 1
                    annotated += _annotated(s)
                    documented += docs.get(s.line, False)
        lines = [imp.line for imp in g.index.files[path].imports if imp.kind == "import"]
        grouped += len(lines) != len(set(lines))
    if record.language == "python":
        for path, file_shape in shapes.items():
            labels = {name: line for _topic, name, _n, line in file_shape.facts}
            bare += "bare except:" in labels
            prints += "print()" in labels
            logs += any(_LOGGER.match(label) or label.endswith(LEVEL_CALL) for label in labels)
            by_name += _NAME_LOGGER in labels
            literal += any(_literal_logger(label) for label in labels)
            own_errors += [
                f"{path}:{line}" for label, line in labels.items() if label.startswith(_OWN_ERRORS)
            ][:1]
    bad: list[str] = []
    checked = 0
    long_limit, param_limit = _percentile(lengths), _percentile(counts)
    nested = _private_or_nested(record.symbols)
    share = f"{_PERCENTILE:.0%}"
    for s in record.symbols:
        if s.kind not in _CALLABLE or not functions:
            continue
        size, params = s.end_line - s.line + 1, len(parameters(s.signature))
        checked += 2
        if size > long_limit:
            bad.append(
                f"`{s.name}` is {size} lines; {share} of {label}'s functions have at most {long_limit}"
            )
        if params > param_limit:
            bad.append(
                f"`{s.name}` takes {params} parameters; {share} of {label}'s functions take at most {param_limit}"
            )
        if record.language == "python" and public and s.line not in nested:
            checked += 2
            if documented / public >= _DOCUMENTED and not _has_docstring(shape, s):
                bad.append(
                    f"{documented / public:.0%} of {label}'s public functions have a docstring; `{s.name}` has none"
                )
            if annotated / public >= _DOCUMENTED and not _annotated(s):
                bad.append(
                    f"{annotated / public:.0%} of {label}'s public functions are annotated; `{s.name}` is not"
                )
    if record.language == "python" and sample:
        checked += 2
        code = without_literals("python", text)  # a string's or comment's text is no code
        if _BARE_EXCEPT.search(code) and bare / len(sample) < 1 - DOMINANT:
            bare_share = bare / len(sample)
            bad.append(
                f"bare `except:` appears in {bare_share:.0%} of {label}'s files; the snippet has one"
            )
        script = without_literals("python", _MAIN.split(text, 1)[0])  # __main__ prints
        if _PRINT.search(script) and logs >= _LOGGING_FILES and logs > prints:
            bad.append(f"{label} logs ({logs} files; {prints} print); the snippet calls print()")
        checked += 3
        if _RAISE_EXCEPTION.search(code) and own_errors:
            bad.append(
                f"{label} has exception classes of its own ({len(own_errors)} files, first at "
                f"{own_errors[0]}); the snippet raises a bare Exception"
            )
        if _LITERAL_LOGGER.search(code) and by_name and by_name >= DOMINANT * (by_name + literal):
            bad.append(
                f"{label} names its loggers getLogger(__name__) ({by_name} files); "
                "the snippet names one by a literal"
            )
        lines = [imp.line for imp in record.imports if imp.kind == "import"]
        if len(lines) != len(set(lines)) and grouped / len(sample) < 1 - DOMINANT:
            bad.append(
                f"{label} imports one module per statement ({grouped} of {len(sample)} files "
                "group them); the snippet writes `import a, b`"
            )
    return _deviation("structure", bad, checked)


def _private_or_nested(symbols: tuple[Symbol, ...]) -> set[int]:
    """Lines of the functions that are no public API: `_private`, or nested in a function."""
    out, inside = set(), 0
    for s in sorted(symbols, key=lambda s: (s.line, -s.end_line)):
        if s.kind not in _CALLABLE:
            continue
        if s.line <= inside or s.name.startswith("_"):
            out.add(s.line)
        if s.line > inside:
            inside = s.end_line
    return out


def _annotated(s: Symbol) -> bool:
    return ":" in s.signature.split("(", 1)[-1] or "->" in s.signature


def _literal_logger(label: str) -> bool:
    return label.startswith("logging.getLogger(") and label != _NAME_LOGGER


def _percentile(values: list[int]) -> int:
    """The scope's `_PERCENTILE` value: past it, a function is unusual for this code."""
    if not values:
        return 1 << 30
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(_PERCENTILE * len(ordered)))]


def _has_docstring(shape: FileShape, s: Symbol) -> bool:
    """Whether the function defined at `s.line` starts with a docstring."""
    return any(fn.start == s.line and fn.doc for fn in shape.functions)
