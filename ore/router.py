"""Rule-based routing: pick at most one tool or skill from the prompt, without a model call.

The rule
--------
A prompt and every hint are split into words (runs of letters and digits, compared case-folded;
punctuation, hyphens and whitespace only separate words). A hint *matches* when its words occur in
the prompt as consecutive words, so "read file" matches "Read-File notes.md" and "please read
 file x", but not "reread files" (matching respects word boundaries).

The confidence of a match depends only on the matched hint itself (how many words it has) and on
what kind of target it selects. A skill only adds text to the turn; a tool acts, so it needs one
word more of evidence for the same confidence::

    skill: confidence = 1 - 0.5 ** words
    tool:  confidence = 1 - 0.5 ** (words - 1)

    hint                       words  skill     tool
    "summarise", "echo"        1      0.5       0
    "read file"                2      0.75      0.5
    "review this diff"         3      0.875     0.75
    "what does this code do"   5      0.96875   0.9375

At the default threshold (0.5) a skill routes on one distinctive word ("summarise this") and a
tool needs a hint of two words or more ("read file notes.md"): "please echo hello world" runs
no tool. A longer hint is a more specific phrase, so a match of it is more likely to be meant.
Adding or removing another target never changes the confidence of a match (upstream divided by
the longest hint of all targets, so installing one skill could re-route every other prompt).

A hint may hold gaps: a `...` standing alone between words matches one to six words of the
prompt, so "where is ... defined" matches "where is execute defined" and "where is the Index
class defined". Only the hint's own words count towards its confidence (that hint, the codebase
tool's, counts three words: 0.75); a gap at either end of a hint is ignored.

Each target scores its best (longest) matching hint. The target with the highest confidence wins;
a tie goes to the alphabetically first name (then "skill" before "tool"). The winner is taken when
its confidence is at least the threshold (default 0.5: one word for a skill, two for a tool; 0.6
asks for one word more of each; 0 routes on any match); otherwise, or when nothing matches, the
decision is `fallback`: a plain turn.

Arguments of a routed tool come from the tool's own `extract_args`, which keeps only the argument
names the tool marks routable. The router never sets anything else: a routed `read-file` gets a
`path` and never a `root`, so prompt text can never widen what a tool may touch.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from .errors import RouteError
from .turn_types import RoutingDecision, RoutingTarget

if TYPE_CHECKING:
    from .tools import Tool
    from .types import SkillMetadata

__all__ = [
    "DEFAULT_THRESHOLD",
    "GAP",
    "MAX_GAP_WORDS",
    "confidence_for",
    "hint_pattern",
    "hint_words",
    "route",
    "targets_from",
]

DEFAULT_THRESHOLD = 0.5
#: A hint word that matches one to `MAX_GAP_WORDS` words of the prompt.
GAP = "..."
MAX_GAP_WORDS = 6
_WORD = re.compile(r"[^\W_]+")
_GAP_SPLIT = re.compile(r"(?:(?<=\s)|^)(?:\.\.\.|\u2026)(?=\s|$)")


def hint_words(text: str) -> tuple[str, ...]:
    """The words of a hint or prompt as the router compares them (case-folded)."""
    return tuple(_WORD.findall(text.casefold()))


def hint_pattern(hint: str) -> tuple[tuple[str, ...], ...]:
    """A hint as runs of words separated by gaps (`...` standing alone); empty runs dropped.

    "where is ... defined" -> (("where", "is"), ("defined",)); "read file" -> (("read", "file"),).
    """
    return tuple(run for run in map(hint_words, _GAP_SPLIT.split(hint)) if run)


def confidence_for(words: int, target_type: str = "skill") -> float:
    """The confidence of a match of a hint with this many words (0 for none): for a skill
    `1 - 0.5 ** words`, for a tool, which acts, one word less (`1 - 0.5 ** (words - 1)`)."""
    counted = words - 1 if target_type == "tool" else words
    return 0.0 if counted <= 0 else 1.0 - 0.5**counted


def targets_from(
    tools: Iterable[Tool] = (), skills: Iterable[SkillMetadata] = ()
) -> tuple[RoutingTarget, ...]:
    """Routing targets for tools and skills, built from their names, descriptions and hints."""
    found = [RoutingTarget(t.name, "tool", t.description, tuple(t.hints)) for t in tools]
    found += [RoutingTarget(s.name, "skill", s.description, tuple(s.hints)) for s in skills]
    return tuple(found)


def route(
    prompt: str,
    targets: Sequence[RoutingTarget],
    threshold: float = DEFAULT_THRESHOLD,
    *,
    tools: Mapping[str, Tool] | None = None,
) -> RoutingDecision:
    """Decide which target (if any) the prompt asks for. Pure: reads its inputs, changes none.

    :param tools: where a routed tool's `extract_args` is looked up (no args without it).
    :raises RouteError: when the threshold is not a number between 0 and 1.
    """
    if not isinstance(threshold, int | float) or math.isnan(threshold):
        raise RouteError("the routing threshold must be a number between 0 and 1")
    if not 0.0 <= threshold <= 1.0:
        raise RouteError(f"the routing threshold must be between 0 and 1, not {threshold}")
    words = hint_words(prompt)
    positions: dict[str, list[int]] = {}
    for i, word in enumerate(words):
        positions.setdefault(word, []).append(i)
    best: tuple[float, str, str, str] | None = None  # (-confidence, name, type, hint)
    for target in targets:
        match = _best_hint(target.hints, words, positions)
        if match is None:
            continue
        count, hint = match
        key = (-confidence_for(count, target.target_type), target.name, target.target_type, hint)
        if best is None or key < best:
            best = key
    if best is None:
        return RoutingDecision(
            target=None, target_type="fallback", confidence=0.0, reasoning="no hint matched"
        )
    neg, name, kind, hint = best
    score = -neg
    if score < threshold:
        return RoutingDecision(
            target=None,
            target_type="fallback",
            confidence=score,
            reasoning=f"best match '{hint}' for {kind} {name} scored {score:g}, "
            f"below the threshold {threshold:g}",
        )
    args: dict[str, str] = {}
    if kind == "tool" and tools is not None and name in tools:
        args = dict(tools[name].extract_args(prompt))
        args.pop("root", None)  # never, whatever a tool's extractor says
    return RoutingDecision(
        target=name,
        target_type=kind,  # type: ignore[arg-type]
        confidence=score,
        args=args,
        reasoning=f"matched hint '{hint}' for {kind} {name}: confidence {score:g} "
        f"is at least the threshold {threshold:g}",
    )


def _best_hint(
    hints: Iterable[str], words: Sequence[str], positions: Mapping[str, Sequence[int]]
) -> tuple[int, str] | None:
    """The hint with the most words occurring in the prompt's words, with its word count."""
    best: tuple[int, str] | None = None
    for hint in hints:
        runs = hint_pattern(hint)
        n = sum(len(run) for run in runs)
        if not runs or (best is not None and n <= best[0]):
            continue
        first = runs[0]
        if any(_matches_from(runs, words, s) for s in positions.get(first[0], ())):
            best = (n, hint)
    return best


def _matches_from(runs: Sequence[tuple[str, ...]], words: Sequence[str], start: int) -> bool:
    """Whether `runs` occur in `words` from `start`, each next run 1..MAX_GAP_WORDS words on."""
    run = runs[0]
    end = start + len(run)
    if tuple(words[start:end]) != run:
        return False
    if len(runs) == 1:
        return True
    last = min(end + MAX_GAP_WORDS, len(words) - 1)
    return any(_matches_from(runs[1:], words, s) for s in range(end + 1, last + 1))
