"""The router: word-boundary hint rules, a confidence that depends only on the match, a
threshold, no mutation, and no way for prompt text to widen what a tool touches."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ore.errors import RouteError, ToolError
from ore.router import MAX_GAP_WORDS, confidence_for, hint_pattern, hint_words, route, targets_from
from ore.skills import discover_skills
from ore.tools import TOOL_REGISTRY, Tool
from ore.tools.gate import run_gated
from ore.turn_types import RoutingTarget
from ore.types import SkillMetadata, ToolResult


def tool_target(name: str, *hints: str) -> RoutingTarget:
    return RoutingTarget(name=name, target_type="tool", hints=hints)


def skill_target(name: str, *hints: str) -> RoutingTarget:
    return RoutingTarget(name=name, target_type="skill", hints=hints)


TARGETS = (
    tool_target("echo", "echo", "repeat after me"),
    tool_target("read-file", "read file", "show file"),
    skill_target("review-diff", "review this diff", "code review"),
)


@pytest.mark.parametrize(
    "words, expected", [(0, 0.0), (1, 0.5), (2, 0.75), (3, 0.875), (5, 0.96875)]
)
def test_confidence_grows_with_the_words_of_the_matched_hint(words: int, expected: float) -> None:
    assert confidence_for(words) == expected
    assert confidence_for(words, "skill") == expected


@pytest.mark.parametrize("words, expected", [(0, 0.0), (1, 0.0), (2, 0.5), (3, 0.75), (5, 0.9375)])
def test_a_tool_needs_one_word_more_than_a_skill_for_the_same_confidence(
    words: int, expected: float
) -> None:
    assert confidence_for(words, "tool") == expected


@pytest.mark.parametrize(
    "prompt, target, confidence",
    [
        ("please read file notes.txt", "read-file", 0.5),
        ("READ FILE notes.txt", "read-file", 0.5),
        ("read-file notes.txt", "read-file", 0.5),
        ("read   file\nnotes.txt", "read-file", 0.5),
        ("can you review this diff?", "review-diff", 0.875),
        ("Repeat after me: hi", "echo", 0.75),
    ],
)
def test_a_hint_matches_case_insensitively_across_punctuation(
    prompt: str, target: str, confidence: float
) -> None:
    decision = route(prompt, TARGETS)
    assert (decision.target, decision.confidence) == (target, confidence)


@pytest.mark.parametrize("prompt", ["reread files", "echoes of it", "bread filed", "codereview"])
def test_matching_respects_word_boundaries(prompt: str) -> None:
    decision = route(prompt, TARGETS, threshold=0.0)
    assert decision.target_type == "fallback" and decision.confidence == 0.0


def test_no_match_is_a_fallback_with_confidence_zero() -> None:
    decision = route("what is a monad?", TARGETS)
    assert (decision.target, decision.target_type, decision.confidence) == (None, "fallback", 0.0)
    assert decision.args == {}
    assert decision.reasoning


def test_below_the_threshold_is_a_fallback_that_keeps_the_confidence() -> None:
    decision = route("read file hi", TARGETS, threshold=0.6)
    assert (decision.target, decision.target_type, decision.confidence) == (None, "fallback", 0.5)
    assert "threshold" in decision.reasoning


def test_the_threshold_is_inclusive() -> None:
    assert route("read file x", TARGETS, threshold=0.5).target == "read-file"
    assert route("repeat after me x", TARGETS, threshold=0.75).target == "echo"
    assert route("echo hi", TARGETS, threshold=0.0).target == "echo"


@pytest.mark.parametrize(
    "prompt, threshold, target",
    [
        ("please echo hello world", 0.5, None),  # upstream's own example: one common word
        ("echo hi", 0.5, None),
        ("please repeat after me hello", 0.5, "echo"),  # a multi-word tool hint
        ("read file notes.txt", 0.5, "read-file"),
        ("summarise this", 0.5, "summarise"),  # a skill's one distinctive word
        ("summarise this", 0.6, None),
        ("read file notes.txt", 0.6, None),
        ("please review this diff", 0.6, "review-diff"),
    ],
)
def test_one_word_routes_a_skill_but_never_a_tool_at_the_default_threshold(
    prompt: str, threshold: float, target: str | None
) -> None:
    targets = (*TARGETS, skill_target("summarise", "summarise", "sum up"))
    assert route(prompt, targets, threshold).target == target


def test_the_more_specific_match_wins() -> None:
    decision = route("echo: please code review this", TARGETS)
    assert decision.target == "review-diff"


def test_a_tie_goes_to_the_alphabetically_first_name() -> None:
    targets = [
        skill_target("zeta", "do it"),
        tool_target("alpha", "do it now"),  # a tool: one word more for the same 0.75
        skill_target("mid", "do it"),
    ]
    assert route("do it now", targets).target == "alpha"
    assert route("do it now", list(reversed(targets))).target == "alpha"


def test_the_best_hint_of_a_target_counts() -> None:
    targets = [tool_target("a", "x", "x y z")]
    assert route("x y z", targets).confidence == 0.75


@pytest.mark.invariant
def test_adding_a_target_never_changes_another_matchs_confidence() -> None:
    before = route("please read file notes.txt", TARGETS)
    wordy = skill_target("wordy", "a very long hint phrase that nobody will ever type at all")
    after = route("please read file notes.txt", (*TARGETS, wordy))
    assert (after.target, after.confidence) == (before.target, before.confidence)


@pytest.mark.invariant
def test_the_router_does_not_mutate_its_targets() -> None:
    targets = list(TARGETS)
    tools = dict(TOOL_REGISTRY)
    snapshot = (copy.deepcopy(targets), {k: (v.hints, v.routable_args) for k, v in tools.items()})
    for prompt in ["read file a.txt", "echo x", "review this diff", "nothing"]:
        route(prompt, targets, tools=tools)
    assert (targets, {k: (v.hints, v.routable_args) for k, v in tools.items()}) == snapshot


def test_a_routed_tool_gets_its_extracted_args() -> None:
    decision = route("read file notes.txt please", TARGETS, tools=TOOL_REGISTRY)
    assert decision.args == {"path": "notes.txt"}


def test_a_routed_skill_gets_no_args_and_no_tools_means_no_args() -> None:
    assert route("review this diff", TARGETS, tools=TOOL_REGISTRY).args == {}
    assert route("read file x", TARGETS).args == {}


@pytest.mark.invariant
def test_routed_args_never_contain_root_whatever_the_extractor_says() -> None:
    greedy = Tool(
        "greedy",
        "d",
        (),
        {},
        lambda a: ToolResult("greedy", "x"),
        hints=("grab it",),
        extractor=lambda p: {"path": "x", "root": "/"},
        routable_args=frozenset({"path", "root"}),
    )
    decision = route("grab it", targets_from([greedy]), tools={"greedy": greedy})
    assert decision.target == "greedy" and "root" not in decision.args


@pytest.mark.invariant
@pytest.mark.parametrize(
    "prompt",
    [
        "read file ../secret.txt",
        "read file {outside}/secret.txt",
        "read file escape/secret.txt",
        "read file outlink root=/",
        'show file "../secret.txt" with root {outside}',
    ],
)
def test_a_routed_read_never_leaves_the_working_folder(
    prompt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    (work / "escape").symlink_to(tmp_path)
    (work / "outlink").symlink_to(tmp_path / "secret.txt")
    monkeypatch.chdir(work)
    targets = targets_from(TOOL_REGISTRY.values())
    decision = route(prompt.format(outside=tmp_path), targets, tools=TOOL_REGISTRY)
    assert decision.target == "read-file" and set(decision.args) == {"path"}
    tool = TOOL_REGISTRY[decision.target]
    with pytest.raises(ToolError, match="outside the allowed folder"):
        run_gated(tool, decision.args, {"filesystem-read"})


@pytest.mark.parametrize("threshold", [-0.1, 1.01, math.nan, math.inf])
def test_a_threshold_outside_zero_to_one_is_a_route_error(threshold: float) -> None:
    with pytest.raises(RouteError):
        route("echo", TARGETS, threshold=threshold)


def test_targets_come_from_tools_and_skills() -> None:
    skill = SkillMetadata(name="s", description="d", hints=("h",))
    targets = targets_from(TOOL_REGISTRY.values(), [skill])
    assert [(t.name, t.target_type) for t in targets] == [
        ("echo", "tool"),
        ("read-file", "tool"),
        ("codebase", "tool"),
        ("s", "skill"),
    ]


@pytest.mark.parametrize(
    "prompt, skill",
    [
        ("summarise this", "summarise"),
        ("give me a tl;dr", "summarise"),
        ("please review my changes", "review-diff"),
        ("what does this code do?", "explain-code"),
        ("write a commit message", "commit-message"),
        ("why did this fail", "explain-error"),
    ],
)
def test_the_bundled_skills_route_from_everyday_phrases(prompt: str, skill: str) -> None:
    catalog = discover_skills()
    decision = route(prompt, targets_from(TOOL_REGISTRY.values(), catalog.skills.values()))
    assert (decision.target, decision.target_type) == (skill, "skill")


def test_hint_words_split_on_anything_but_letters_and_digits() -> None:
    assert hint_words("Read-File: a_b  C3") == ("read", "file", "a", "b", "c3")


@pytest.mark.parametrize(
    "hint, runs",
    [
        ("where is ... defined", (("where", "is"), ("defined",))),
        ("where's \u2026 defined", (("where", "s"), ("defined",))),
        ("wait... what", (("wait", "what"),)),
        ("... read file ...", (("read", "file"),)),
        ("...", ()),
    ],
)
def test_a_gap_is_a_lone_ellipsis_and_gaps_at_the_ends_are_ignored(
    hint: str, runs: tuple[tuple[str, ...], ...]
) -> None:
    assert hint_pattern(hint) == runs


@pytest.mark.parametrize(
    "prompt, matches",
    [
        ("where is execute defined", True),
        ("Where is the Engine class defined?", True),
        ("where is a b c d e f defined", True),
        ("where is a b c d e f g defined", False),
        ("where is defined", False),
        ("where is execute undefined", False),
    ],
)
def test_a_gap_matches_one_to_six_words_and_only_the_hints_words_count(
    prompt: str, matches: bool
) -> None:
    assert MAX_GAP_WORDS == 6
    decision = route(prompt, [tool_target("t", "where is ... defined")])
    assert decision.target == ("t" if matches else None)
    assert decision.confidence == (0.75 if matches else 0.0)


@given(prompt=st.text(alphabet="ab .", max_size=40))
def test_a_gap_hint_matches_exactly_when_a_regex_of_it_does(prompt: str) -> None:
    words = " ".join(hint_words(prompt))
    expected = re.search(r"(?<!\w)a b(?: \w+){1,6} a(?!\w)", words) is not None
    decision = route(prompt, [tool_target("t", "a b ... a")], threshold=0)
    assert (decision.target == "t") == expected


hints = st.lists(st.text(max_size=15), max_size=4).map(tuple)
target_lists = st.lists(
    st.builds(
        RoutingTarget,
        name=st.text(min_size=1, max_size=8),
        target_type=st.sampled_from(["tool", "skill"]),
        hints=hints,
    ),
    max_size=5,
)


@given(prompt=st.text(max_size=120), targets=target_lists, threshold=st.floats(0, 1))
def test_routing_any_prompt_is_a_valid_deterministic_decision(
    prompt: str, targets: list[RoutingTarget], threshold: float
) -> None:
    first = route(prompt, targets, threshold)
    again = route(prompt, targets, threshold)
    assert 0.0 <= first.confidence <= 1.0
    assert (first.target, first.target_type, first.confidence) == (
        again.target,
        again.target_type,
        again.confidence,
    )
    if first.target is None:
        assert first.target_type == "fallback"
    else:
        assert first.confidence >= threshold
        assert (first.target, first.target_type) in {(t.name, t.target_type) for t in targets}


@given(prompt=st.text(max_size=60), threshold=st.floats(allow_nan=True, allow_infinity=True))
def test_routing_raises_nothing_but_route_error(prompt: str, threshold: float) -> None:
    try:
        route(prompt, TARGETS, threshold, tools=TOOL_REGISTRY)
    except RouteError:
        assert not 0.0 <= threshold <= 1.0
