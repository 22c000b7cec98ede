"""The core loop: one reasoner call per turn, explicit state, nothing mutated, nothing hidden."""

from __future__ import annotations

import ast
import copy
import inspect
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import ore.core
from ore.core import build_messages, execute
from ore.types import ActiveSkill, Message, Response, Session, ToolResult


class CountingReasoner:
    """A fake reasoner that counts its calls and records what it was sent."""

    def __init__(self, reply: str = "ok", pieces: Sequence[str] = ("o", "k")) -> None:
        self.reply = reply
        self.pieces = tuple(pieces)
        self.calls: list[tuple[str, tuple[Message, ...]]] = []

    @property
    def model_id(self) -> str:
        return "fake"

    def complete(self, messages: Sequence[Message]) -> Response:
        self.calls.append(("complete", tuple(messages)))
        return Response(content=self.reply, model_id="fake")

    def stream(self, messages: Sequence[Message], on_token: Callable[[str], None]) -> Response:
        self.calls.append(("stream", tuple(messages)))
        for piece in self.pieces:
            on_token(piece)
        return Response(content="".join(self.pieces), model_id="fake")


class FailingReasoner(CountingReasoner):
    def complete(self, messages: Sequence[Message]) -> Response:
        self.calls.append(("complete", tuple(messages)))
        raise KeyboardInterrupt


def user(text: str) -> Message:
    return Message(role="user", content=text)


@pytest.mark.invariant
@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
def test_execute_makes_exactly_one_reasoner_call(streaming: bool) -> None:
    reasoner = CountingReasoner()
    tokens: list[str] = []
    execute(
        [user("hi")],
        Session(),
        [ToolResult(tool_name="echo", output="x")],
        [ActiveSkill(name="s", instructions="be brief")],
        reasoner=reasoner,
        system="persona",
        on_token=tokens.append if streaming else None,
    )
    assert len(reasoner.calls) == 1
    assert reasoner.calls[0][0] == ("stream" if streaming else "complete")


def test_streamed_tokens_reach_the_callback_and_the_response_holds_the_whole_text() -> None:
    tokens: list[str] = []
    turn = execute(
        [user("hi")], reasoner=CountingReasoner(pieces=("a", "b", "c")), on_token=tokens.append
    )
    assert tokens == ["a", "b", "c"]
    assert turn.response.content == "abc"


@pytest.mark.invariant
def test_message_order_is_persona_skills_tools_history_input() -> None:
    history = Session().append(user("earlier"), Message(role="assistant", content="answer"))
    sent = build_messages(
        [user("now")],
        history,
        [ToolResult(tool_name="echo", output="tool out")],
        [ActiveSkill(name="brief", instructions="be brief")],
        system="persona",
    )
    assert [(m.role, m.content) for m in sent] == [
        ("system", "persona"),
        ("system", "[Skill:brief]\nbe brief"),
        ("user", "[Tool:echo]\ntool out"),
        ("user", "earlier"),
        ("assistant", "answer"),
        ("user", "now"),
    ]


def test_artifact_context_is_marked_as_coming_from_the_artifact() -> None:
    result = ToolResult(tool_name="abc-123", output="draft", kind="artifact")
    sent = build_messages([user("critique it")], tool_results=[result])
    assert sent[0].content == "[Artifact:abc-123]\ndraft"


@pytest.mark.invariant
def test_no_skills_and_no_tools_give_the_plain_message_list() -> None:
    sent = build_messages([user("hi")], system="persona")
    assert [(m.role, m.content) for m in sent] == [("system", "persona"), ("user", "hi")]


def test_an_empty_system_sends_no_system_message() -> None:
    assert [m.role for m in build_messages([user("hi")], system="")] == ["user"]


@pytest.mark.invariant
def test_the_session_gains_exactly_the_input_and_the_answer_and_keeps_its_order() -> None:
    first = execute([user("one")], Session(), reasoner=CountingReasoner("1"), system="p").session
    assert first is not None
    second = execute([user("two")], first, reasoner=CountingReasoner("2"), system="p").session
    assert second is not None
    assert [(m.role, m.content) for m in second.messages] == [
        ("user", "one"),
        ("assistant", "1"),
        ("user", "two"),
        ("assistant", "2"),
    ]
    assert second.messages[:2] == first.messages  # append-only: ids and order preserved
    assert second.id == first.id


@pytest.mark.invariant
def test_the_system_message_is_never_stored_in_the_session() -> None:
    turn = execute(
        [user("hi")],
        Session(),
        [ToolResult(tool_name="echo", output="secret tool text")],
        [ActiveSkill(name="s", instructions="secret skill text")],
        reasoner=CountingReasoner(),
        system="persona",
    )
    assert turn.session is not None
    assert all(m.role != "system" for m in turn.session.messages)
    stored = " ".join(m.content for m in turn.session.messages)
    assert "persona" not in stored and "secret" not in stored


def test_a_system_message_cannot_be_smuggled_into_a_session_as_input() -> None:
    with pytest.raises(ValueError):
        execute([Message(role="system", content="x")], Session(), reasoner=CountingReasoner())


@pytest.mark.invariant
def test_execute_mutates_none_of_its_arguments() -> None:
    session = Session().append(user("earlier"))
    messages = [user("now")]
    tools = [ToolResult(tool_name="echo", output="x", metadata={"k": "v"})]
    skills = [ActiveSkill(name="s", instructions="i")]
    before = copy.deepcopy((session, messages, tools, skills))
    execute(messages, session, tools, skills, reasoner=CountingReasoner(), system="p")
    assert (session, messages, tools, skills) == before


@pytest.mark.invariant
def test_a_cancelled_reply_leaves_the_callers_session_unchanged() -> None:
    session = Session().append(user("earlier"))
    with pytest.raises(KeyboardInterrupt):
        execute([user("now")], session, reasoner=FailingReasoner())
    assert [m.content for m in session.messages] == ["earlier"]


@pytest.mark.invariant
def test_without_a_session_execute_is_stateless() -> None:
    reasoner = CountingReasoner()
    execute([user("one")], reasoner=reasoner, system="p")
    turn = execute([user("two")], reasoner=reasoner, system="p")
    assert turn.session is None
    assert [m.content for m in reasoner.calls[1][1]] == ["p", "two"]


@pytest.mark.invariant
def test_the_core_module_holds_no_state_and_does_no_io() -> None:
    source = Path(inspect.getfile(ore.core)).read_text()
    tree = ast.parse(source)
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    }
    assert not imported & {"os", "sys", "io", "pathlib", "socket", "subprocess", "httpx", "ollama"}
    assert "open(" not in source and "print(" not in source and "global " not in source
    module_level = [
        node.targets[0].id  # type: ignore[attr-defined]
        for node in tree.body
        if isinstance(node, ast.Assign)
    ]
    assert module_level == ["__all__"]


def test_the_turn_records_exactly_what_was_sent() -> None:
    reasoner = CountingReasoner()
    turn = execute([user("hi")], reasoner=reasoner, system="p")
    assert turn.sent == reasoner.calls[0][1]


def test_a_recorded_message_list_replays_unchanged() -> None:
    recorded = build_messages(
        [user("now")],
        tool_results=[ToolResult(tool_name="echo", output="x")],
        skills=[ActiveSkill(name="s", instructions="i")],
        system="p",
    )
    reasoner = CountingReasoner()
    turn = execute(list(recorded), reasoner=reasoner)
    assert turn.sent == recorded


def test_a_turn_needs_input() -> None:
    with pytest.raises(ValueError):
        build_messages([])
