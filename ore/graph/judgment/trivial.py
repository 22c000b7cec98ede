"""What is too trivial to report as a renamed clone: the one place that decides it.

A renamed run is equal once identifiers and literals are normalised (`shapes`), so short runs of
a codebase's idioms match everywhere: a test's `Table("t", metadata, Column("id", Integer, ...))`
set-up, a `X = cls.classes.X` preamble, `assert_raises(...)` tails, typing stubs of distinct
operators. They are not copies anyone would merge. Exact copies are reported whatever they hold
(the same tokens are a copy); a renamed run is dropped when it is

- a *table*: two renamed lines make up three quarters of it or more (an import list, a dict
  literal, a run of registration calls); a run of three-line accessors, two thirds, is not;
- *too few statements*: under `STATEMENTS` distinct renamed lines of `STATEMENT_TOKENS` tokens or
  more. Shorter lines are the punctuation of a statement (`)`, `x,`, `"t1",`, `else:`, `@x`), and
  a line shape repeated with other names or literals is one statement, not several. A run found
  only in tests, examples and docs (`index.kinds.is_context`) needs `CONTEXT_STATEMENTS`: they
  repeat their idioms by design (`eq_(...)` checks over other inputs, `pytest.param` rows, model
  and table set-up, a test's last line with the next one's first);
- *mostly prose* (`mostly_prose`, on a whole group): four lines or more per token, two
  different docstrings (one token each once renamed) around a line or two of code.

An exact run is a copy unless its whole lines are idiom many files share without copying
(`idiom_run`; the partial lines at its ends are a few tokens and not judged):

- *punctuation*: its lines of `STATEMENT_TOKENS` tokens or more hold under twice that many:
  brackets and commas around one short statement at most (the brackets between two rows of a
  data table, a call's closing `)` and the next check's `eq_(`, `list(`, `sess.execute(`);
  a token minimum asked below that bar lowers it (`--min-tokens 1` lists the tiny runs);
- *a short import list*: every whole line is part of an import statement (`import_lines`), and
  there are no more of them than the minimum lines asked (five at the default): the `from
  __future__ import annotations` / `from typing import ...` lines modules open with. pylint's
  own duplicate check ignores imports by default; a longer import list is still reported, as
  `symilar -d 5` (issue 25's reference) reports lists of more than five lines: dropping every
  import list took recall against it on sqlalchemy from 90.5% to 78.6%, dropping the short ones
  cost 4 of its 2,684 groups.

Exact text many files share as idiom beyond these (a test base class's `setup_classes` lines,
a generic `class B(decl_base)` test model) is still reported: `symilar` reports it too, and a
rule dropping runs whose every line is in many files cost 7-24 points of recall against it
on sqlalchemy (docs/graph.md).

Before these rules judge a run, it is cut where it crosses a definition's edge (`cuts.Edges`:
one test's last lines with the next one's first are two half-copies), renamed runs and exact
ones under the minimum in whole lines; each part is judged on its own.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from itertools import compress

__all__ = [
    "CONTEXT_STATEMENTS",
    "RULES",
    "STATEMENTS",
    "STATEMENT_TOKENS",
    "few_statements",
    "idiom_run",
    "import_lines",
    "mostly_prose",
    "trivial_run",
]

#: Distinct statement-like lines a renamed run needs (sqlalchemy's renamed test idioms have 1-3).
STATEMENTS = 4
#: ... and one found only in context files (there 4 was mostly idioms in a sample of ten).
CONTEXT_STATEMENTS = 5
#: A line of fewer tokens is part of a statement, not one (`)`, `x,`, `else:`, `return x`).
STATEMENT_TOKENS = 4
_PROSE_LINES = 4
_IDIOMS = 3  # bumped when what `idiom_run` judges changes
#: What an answer kept by content (`memo`) was computed with: a change here computes it afresh.
RULES = (STATEMENTS, CONTEXT_STATEMENTS, STATEMENT_TOKENS, _PROSE_LINES, _IDIOMS)


def trivial_run(keys: Sequence[int], tokens: Sequence[int], *, context: bool = False) -> bool:
    """Whether a renamed run (its lines' renamed keys and token counts) is a table or holds
    too few distinct statements to be reported; `context`: found only in context files."""
    need = CONTEXT_STATEMENTS if context else STATEMENTS
    counts = Counter(keys)
    if len(counts) < need:
        return True  # fewer distinct lines than the statements asked (in C: called per run)
    if sum(sorted(counts.values())[-2:]) * 4 >= len(keys) * 3:
        return True  # a table
    return few_statements(keys, tokens, context=context)


def few_statements(keys: Sequence[int], tokens: Sequence[int], *, context: bool = False) -> bool:
    """Whether a renamed run holds too few distinct statements (`trivial_run` without the
    table test): so does every part of it, so a run that does need not be cut to be judged."""
    need = CONTEXT_STATEMENTS if context else STATEMENTS
    return len(set(compress(keys, map(STATEMENT_TOKENS.__le__, tokens)))) < need


def mostly_prose(kind: str, tokens: int, lines: int) -> bool:
    """A renamed group spanning four lines or more per token: two different docstrings between
    a signature's last lines and a line of code."""
    return kind == "renamed" and tokens * _PROSE_LINES < lines


def idiom_run(
    tokens: Sequence[int],
    imports: Sequence[bool] = (),
    *,
    min_tokens: int = 2 * STATEMENT_TOKENS,
    min_lines: int = 0,
) -> bool:
    """Whether an exact run is idiom, not a copy, from its whole lines' token counts and (when
    known) whether each is part of an import statement: brackets and commas around one short
    statement at most (`)`, `eq_(`, `sess.execute(`), or an import list of at most `min_lines`
    lines. A smaller `min_tokens` than the rule's own asks for smaller runs: the punctuation bar
    goes down to it."""
    if imports and all(imports) and len(imports) <= min_lines:
        return True  # a short import list
    bar = min(2 * STATEMENT_TOKENS, min_tokens)
    return sum(t for t in tokens if t >= STATEMENT_TOKENS) < bar


_IMPORTS = {
    "python": re.compile(
        r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import\b[ \t]*(?:\([^)]*\)|(?:[^\\\n]|\\[\s\S])*)", re.M
    ),
    "js": re.compile(
        r"^[ \t]*(?:import|export)[ \t]+(?:type[ \t]+)?(?:[^;'\"`]*?\bfrom[ \t]*)?['\"][^'\"\n]*['\"]",
        re.M,
    ),
    "go": re.compile(r"^import[ \t]*(?:\([^)]*\)|[^\n]*)", re.M),
    "rust": re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?use[ \t][^;]*;", re.M),
}


#: The words one of which each rule's match holds on its first line (`pub(...)` may end on a
#: later one): only lines holding one are tried.
_WORDS = {
    "python": ("import",),
    "js": ("import", "export"),
    "go": ("import",),
    "rust": ("use", "pub"),
}


def import_lines(family: str, text: str) -> frozenset[int]:
    """The numbers of the lines of `text` that are part of an import statement (a lexer family
    without a rule: none)."""
    rule = _IMPORTS.get(family)
    if rule is None:
        return frozenset()
    out: set[int] = set()
    line, at, end = 1, 0, 0
    # A match starts at a line's start (`^`) and holds its word on that line: the rule is tried
    # at the start of each line holding the word (found in C), not at every character, past
    # the end of the match before it, as `finditer` would.
    for start in _starts(text, _WORDS[family]):
        if start < end:
            continue
        found = rule.match(text, start)
        if found is None:
            continue
        line += text.count("\n", at, start)
        at, end = start, found.end()
        out.update(range(line, line + found.group().count("\n") + 1))
    return frozenset(out)


def _starts(text: str, words: Sequence[str]) -> list[int]:
    """The start of each line of `text` holding one of `words`, in order."""
    starts: set[int] = set()
    for word in words:
        k = text.find(word)
        while k >= 0:
            start = text.rfind("\n", 0, k) + 1
            starts.add(start)
            stop = text.find("\n", k)
            if stop < 0:
                break
            k = text.find(word, stop)
    return sorted(starts)
