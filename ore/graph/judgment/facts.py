"""Per-file convention facts: which error, logging, async and test patterns a file's code shows.

Computed once per file content with its shape (`shapecache`), so `conventions` and `consistent`
add up counts instead of reading files. Each rule is a regular expression over the whole text
(multi-line mode, so `^` is a line start); a label with `{0}` takes the first group. A match
that starts inside a string or a comment is no fact (`'return await f()'` built as source text
is no await): facts come from code only. A call whose first argument is a logging level
(`self._log(DEBUG, ...)`, `logger.log(logging.INFO, ...)`) is a logging call, whatever wraps it,
and so is a level method of any name ending in `_log` or `_logger` (tornado's `gen_log`,
`app_log` and `access_log`, 68 calls in 17 files).
"""

from __future__ import annotations

import re
from bisect import bisect_right

from .lexer import literal_spans

__all__ = ["LEVEL_CALL", "TEXT_TOPICS", "Fact", "file_facts", "first_nested_import"]

Fact = tuple[str, str, int, int]  # topic, label, occurrences, first line
TEXT_TOPICS = ("errors", "logging", "async", "tests")
#: An import statement indented under `if`, `try` or a `def`: outside the module's import block.
#: `\n` rather than `^`: a literal the scan finds fast (twice as fast over a file).
_NESTED_IMPORT = re.compile(r"\n[ \t]+(?:import|from)\s+[\w.]")

# label ("{0}" takes the first group), pattern, words of which every match holds one (() if none)
Rule = tuple[str, re.Pattern[str], tuple[str, ...]]
#: The label's tail of a call with a logging level first (`self._log(LEVEL, ...)`).
LEVEL_CALL = "(LEVEL, ...)"
_LEVELS = ("DEBUG", "INFO", "WARN", "ERROR", "CRITICAL")  # WARN is in WARNING
#: `log(` and a level: a literal first, so the scan is a substring search (a pattern opening
#: with the callee's dotted name is tried at every word and costs ten times more).
_LEVEL_CALL = r"log\(\s*(?:logging\.)?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b"
#: The callee's dotted head before `log(` (`self._`, `logger.`), matched at its end.
_CALLEE = re.compile(r"(?:[A-Za-z_]\w*\.)*_?\Z")


def _rules(*pairs: tuple[str, str] | tuple[str, str, tuple[str, ...]]) -> tuple[Rule, ...]:
    out = []
    for pair in pairs:
        label, rx = pair[0], pair[1]
        needles = pair[2] if len(pair) == 3 else _needles(rx)
        out.append((label, re.compile(rx, re.M), needles))
    return tuple(out)


def _needles(rx: str) -> tuple[str, ...]:
    """Words of which every match holds one: a file with none of them is skipped before the
    pattern runs (substring searches in C; most files fail them). One per top-level branch."""
    plain = re.sub(r"\\.", " ", rx)  # escapes (\s, \b, \.)
    depth, branches, current = 0, [], ""
    for ch in plain:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "|" and depth == 0:
            branches.append(current)
            current = ""
        else:
            current += ch
    branches.append(current)
    out = []
    for branch in branches:
        branch = re.sub(r"\([^()]*\)[?*]", " ", branch)  # optional groups
        branch = re.sub(r"\([^()]*\|[^()]*\)", " ", branch)  # alternatives
        branch = re.sub(r"\[[^\]]*\]|.[?*]", " ", branch)  # classes, optional characters
        words = re.findall(r"[A-Za-z_]{3,}", branch)
        if not words:
            return ()
        out.append(max(words, key=len))
    return tuple(out)


TEXT_RULES: dict[str, dict[str, tuple[Rule, ...]]] = {
    "errors": {
        "python": _rules(
            # within the line: a bare `raise` is not `raise` of the next line's first name,
            # and a parameter named `exception` is no `except` clause
            ("raise {0}", r"^\s*raise[ \t]+([A-Za-z_][\w.]*)"),
            ("except {0}", r"^\s*except\b[ \t]*\(?[ \t]*([A-Za-z_][\w.]*)"),
            ("bare except:", r"^\s*except[ \t]*:"),
            (  # named as an error, or deriving from one (packaging's `InvalidVersion(ValueError)`)
                "error classes derive from {0}",
                r"^\s*class\s+(?:\w*(?:Error|Exception)\s*\(\s*|\w+\s*\(\s*"
                r"(?=[\w.]*(?:Error|Exception)\b))([\w.]+)",
            ),
        ),
        "js": _rules(
            ("throw new {0}", r"\bthrow\s+new\s+([A-Za-z_$][\w.$]*)"),
            ("catch (e)", r"\bcatch\s*\("),
            ("Promise .catch()", r"\.catch\("),
            ("error classes extend {0}", r"\bclass\s+\w*Error\s+extends\s+([\w.$]+)"),
        ),
        "go": _rules(
            ("errors.New", r"\berrors\.New\("),
            ("fmt.Errorf", r"\bfmt\.Errorf\("),
            ("if err != nil", r"\bif\s+err\s*!=\s*nil"),
            ("panic()", r"\bpanic\("),
        ),
        "rust": _rules(
            ("the ? operator", r"\?\s*[;)]"),
            (".unwrap()", r"\.unwrap\(\)"),
            (".expect()", r"\.expect\("),
            ("panic!", r"\bpanic!\("),
        ),
    },
    "logging": {
        "python": _rules(
            ("logging.getLogger({0})", r"logging\.getLogger\(\s*([^)]*)\)"),
            (
                "{0}.{1}()",
                r"\b(logger|log|LOGGER|LOG|_logger|logging|\w+_log|\w+_logger)"
                r"\.(debug|info|warning|warn|error|exception|critical)\(",
                ("log", "LOG"),
            ),
            (LEVEL_CALL, _LEVEL_CALL, _LEVELS),  # the callee's name: `_level_call`
            ("print()", r"^\s*print\("),
            ("warnings.warn()", r"\bwarnings\.warn\("),
        ),
        "js": _rules(
            ("console.{0}()", r"\bconsole\.(log|warn|error|info|debug)\("),
            ("{0}.{1}()", r"\b(logger|log)\.(debug|info|warn|error)\(", ("log",)),
        ),
        "go": _rules(
            ("log.{0}", r"\blog\.(Print\w*|Fatal\w*|Panic\w*)\("),
            ("slog.{0}", r"\bslog\.(\w+)\("),
            ("fmt.Print", r"\bfmt\.Print"),
        ),
        "rust": _rules(
            ("{0}! (log/tracing)", r"\b(trace|debug|info|warn|error)!\("),
            ("println!", r"\be?println!\("),
        ),
    },
    "async": {
        "python": _rules(
            ("async def", r"^\s*async\s+def\b"),
            ("await", r"\bawait\b"),
            ("asyncio", r"\basyncio\."),
            ("threads", r"\bthreading\.|\bThread\("),
            ("concurrent.futures", r"\bconcurrent\.futures\b|Executor\("),
        ),
        "js": _rules(
            ("async functions", r"\basync\s+(function\b|\(|\w+\s*=>)"),
            ("await", r"\bawait\b"),
            (".then()", r"\.then\("),
            ("new Promise", r"\bnew\s+Promise\("),
        ),
        "go": _rules(
            ("goroutines", r"\bgo\s+(func\b|\w+\()"),
            ("channels", r"\bchan\b"),
            ("sync", r"\bsync\.(WaitGroup|Mutex|RWMutex|Once)"),
        ),
        "rust": _rules(
            ("async fn", r"\basync\s+fn\b"),
            (".await", r"\.await\b"),
            ("tokio", r"\btokio::"),
            ("threads", r"\bthread::spawn\b"),
        ),
    },
    "tests": {
        "python": _rules(
            ("pytest", r"^\s*import\s+pytest|@pytest\."),
            ("unittest TestCase", r"\(\s*(unittest\.)?\w*TestCase\s*\)"),
            ("@pytest.fixture", r"@pytest\.fixture"),
            ("setUp methods", r"def\s+setUp\w*\("),
            ("plain assert", r"^\s*assert\b"),
            ("self.assert*", r"\bself\.assert\w+\("),
        ),
        "js": _rules(
            ("describe/it", r"\b(describe|it)\("),
            ("test()", r"^\s*test\("),
            ("vitest", r"from\s+['\"]vitest['\"]"),
            ("jest", r"\bjest\."),
            ("beforeEach", r"\bbeforeEach\("),
        ),
        "go": _rules(
            ("testing.T", r"func\s+Test\w*\(\s*\w+\s+\*testing\.T"),
            ("table tests", r"\btests?\s*:?=\s*\[\]struct"),
            ("t.Run", r"\bt\.Run\("),
        ),
        "rust": _rules(("#[test]", r"#\[test\]"), ("#[cfg(test)] modules", r"#\[cfg\(test\)\]")),
    },
}


def file_facts(
    family: str, text: str, literals: list[tuple[int, int]] | None = None
) -> tuple[Fact, ...]:
    """The code-pattern facts of one file of a language family, sorted. `literals`: where its
    strings and comments are (`lex` notes them), else found here when a pattern matches."""
    found: dict[tuple[str, str], list[int]] = {}
    for topic in TEXT_TOPICS:
        for label, rx, needles in TEXT_RULES[topic].get(family, ()):
            if needles and not any(n in text for n in needles):
                continue
            for match in rx.finditer(text):
                if literals is None:
                    literals = literal_spans(family, text)
                found_text = match.group(0)  # `^\s*` may open on a blank line above
                at = match.start() + len(found_text) - len(found_text.lstrip())
                if _in_literal(literals, at):
                    continue
                if label == LEVEL_CALL:
                    name = _level_call(text, match.start())
                    if name is None:
                        continue
                else:
                    name = label.format(*match.groups()) if match.groups() else label
                seen = found.get((topic, name))
                if seen is None:
                    line = text.count("\n", 0, at) + 1
                    found[topic, name] = [1, line]
                else:
                    seen[0] += 1
    return tuple(sorted((t, n, c, line) for (t, n), (c, line) in found.items()))


def _in_literal(literals: list[tuple[int, int]], at: int) -> bool:
    """Whether the character at `at` (a match's first visible one) lies inside a string or a
    comment."""
    i = bisect_right(literals, (at, _AFTER)) - 1
    return i >= 0 and at < literals[i][1]


_AFTER = 1 << 62


def _level_call(text: str, start: int) -> str | None:
    """The label of a call with a level first, named by its callee (`self._log`), or None when
    `log` ends a longer name (`blog(`, `my_log(`)."""
    head = _CALLEE.search(text, max(0, start - 80), start)
    dotted = head.group(0) if head else ""
    before = start - len(dotted) - 1
    if before >= 0 and (text[before].isalnum() or text[before] in "_."):
        return None
    return dotted + "log" + LEVEL_CALL


def first_nested_import(text: str) -> int | None:
    """The line of a Python file's first import nested under `if`, `try` or a `def` (a
    `TYPE_CHECKING` block, a function's own import), outside strings: where its import block
    ends. None when every import is at the top level."""
    literals: list[tuple[int, int]] | None = None
    for match in _NESTED_IMPORT.finditer(text):
        if literals is None:
            literals = literal_spans("python", text)
        found = match.group(0)
        at = match.start() + len(found) - len(found.lstrip())
        if not _in_literal(literals, at):
            return text.count("\n", 0, at) + 1
    return None
