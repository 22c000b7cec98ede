"""`ore.turn.run_turn`: one ORE turn as a library call, against the loopback Ollama server.

The turn gathers its context, chooses the server and model, makes one call, checks the answer,
appends it to the saved session (in one place) and writes the artifact; it prints nothing."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from fake_ollama import FakeOllama

from ore.errors import OreError
from ore.turn import (
    Server,
    TurnRequest,
    artifact_of,
    open_conversation,
    plan_context,
    preview,
    replay_request,
    run_turn,
)
from ore.turn_types import TurnOptions

ORE = Path(__file__).resolve().parents[2] / "ore"


@pytest.fixture(autouse=True)
def _server(fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> FakeOllama:
    for name in ("ORE_MODEL", "ORE_BACKEND", "ORE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    return fake_ollama


def test_one_turn_makes_one_call_and_returns_the_answer(fake_ollama, capsys) -> None:
    fake_ollama.reply = "a pipe joins two programs"
    result = run_turn(TurnRequest.of("what is a pipe?", model="qwen2.5:0.5b", system=None))
    assert result.content == "a pipe joins two programs"
    assert result.model == "qwen2.5:0.5b"
    (sent,) = fake_ollama.chat_requests()
    assert [m["content"] for m in sent["messages"]] == ["what is a pipe?"]
    assert result.conversation is None and result.artifact is None and result.kept == ()
    assert capsys.readouterr() == ("", "")  # a library call prints nothing


def test_the_persona_is_the_default_system_prompt(fake_ollama) -> None:
    run_turn(TurnRequest.of("hi"))
    (sent,) = fake_ollama.chat_requests()
    assert sent["messages"][0]["role"] == "system"
    assert "Aya" in sent["messages"][0]["content"]
    assert sent["model"] == "llama3.2:latest"  # the server's default, as the command picks


def test_streaming_passes_each_piece_and_returns_the_whole(fake_ollama) -> None:
    fake_ollama.reply = "one two three four"
    fake_ollama.pieces = 4
    pieces: list[str] = []
    result = run_turn(TurnRequest.of("count", stream=True), on_token=pieces.append)
    assert len(pieces) > 1
    assert "".join(pieces) == result.content == "one two three four"


def test_a_saved_conversation_grows_by_one_turn_per_call() -> None:
    conversation = open_conversation(save="work")
    first = run_turn(TurnRequest.of("one", conversation=conversation))
    second = run_turn(TurnRequest.of("two", conversation=first.conversation))
    assert second.kept == ("the turn is saved in session 'work'",)
    on_disk = open_conversation(resume="work").session
    assert [m.content for m in on_disk.messages if m.role == "user"] == ["one", "two"]
    assert on_disk.messages == second.conversation.session.messages


def test_history_sends_only_the_last_turns(fake_ollama) -> None:
    conversation = open_conversation(save="long", history=1)
    for prompt in ("a", "b", "c"):
        conversation = run_turn(TurnRequest.of(prompt, system=None, conversation=conversation))
        conversation = conversation.conversation
    last = fake_ollama.chat_requests()[-1]
    assert [m["content"] for m in last["messages"] if m["role"] == "user"] == ["b", "c"]
    assert len(conversation.session.messages) == 6  # everything is kept


def test_an_empty_answer_raises_and_nothing_is_saved(fake_ollama, tmp_path) -> None:
    conversation = open_conversation(save="empty")
    fake_ollama.reply = "   "
    out = tmp_path / "a.json"
    with pytest.raises(OreError, match="empty answer; nothing was saved"):
        run_turn(TurnRequest.of("q", conversation=conversation, artifact_out=str(out)))
    with pytest.raises(OreError, match="no session named 'empty'"):
        open_conversation(resume="empty")  # a failed turn leaves no session file
    assert not out.exists()


def test_a_cut_answer_is_kept_with_a_warning(fake_ollama) -> None:
    fake_ollama.done_reason = "length"
    result = run_turn(TurnRequest.of("q"))
    assert result.warnings == (
        "the answer was cut off at the token limit; allow more with -o num_predict=N",
    )
    assert result.turn.response.usage.finish_reason == "length"


def test_a_schema_answer_is_parsed_or_its_mismatch_reported(fake_ollama) -> None:
    schema = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}
    fake_ollama.reply = '{"n": 3}'
    good = run_turn(TurnRequest.of("q", controls=TurnOptions(schema=schema)))
    assert (good.data, good.schema_error) == ({"n": 3}, None)
    assert good.to_dict()["data"] == {"n": 3}
    fake_ollama.reply = '{"n": "three"}'
    bad = run_turn(TurnRequest.of("q", controls=TurnOptions(schema=schema)))
    assert bad.data is None and "does not match the schema at $.n" in (bad.schema_error or "")
    assert "data" not in bad.to_dict()


def test_the_artifact_is_written_and_replays_exactly(tmp_path, fake_ollama) -> None:
    from ore.artifacts import read_artifact

    path = tmp_path / "turn.json"
    result = run_turn(TurnRequest.of("say hi", artifact_out=str(path)))
    assert result.kept == (f"the artifact is written to {path}",)
    artifact = read_artifact(path)
    assert artifact.execution_id == result.turn.response.id
    assert artifact.messages == result.turn.sent
    replayed = run_turn(replay_request(artifact))
    assert replayed.turn.sent == artifact.messages
    assert replayed.model == artifact.model_id
    chained = run_turn(replay_request(artifact, "and in French?", artifact_out="-"))
    assert chained.artifact is not None and chained.artifact.relation == "chain"
    assert chained.artifact.parent_execution_id == artifact.execution_id


def test_an_artifact_built_after_the_turn_is_the_one_the_turn_would_have_built(
    fake_ollama,
) -> None:
    from dataclasses import replace

    request = TurnRequest.of("say hi", artifact_out="-")
    built = run_turn(request)
    later = artifact_of(replace(request, artifact_out=None), built)
    assert built.artifact is not None and built.served is not None
    assert replace(later, timestamp=built.artifact.timestamp) == built.artifact
    lone = run_turn(replace(request, artifact_out=None))
    assert lone.artifact is None
    assert artifact_of(request, lone).execution_id == lone.turn.response.id


def test_an_unwritable_artifact_path_is_refused_before_any_call(tmp_path, fake_ollama) -> None:
    with pytest.raises(OreError):
        run_turn(TurnRequest.of("q", artifact_out=str(tmp_path / "missing" / "a.json")))
    assert fake_ollama.chat_requests() == []


def test_the_gated_tool_runs_only_when_granted(tmp_path, fake_ollama, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("the secret word is ore\n")
    with pytest.raises(OreError, match="filesystem-read"):
        plan_context(tool="read-file", tool_args={"path": "notes.txt"})
    plan = plan_context(
        tool="read-file", tool_args={"path": "notes.txt"}, grants={"filesystem-read"}
    )
    result = run_turn(TurnRequest.of("what is the word?", context=plan, system=None))
    (sent,) = fake_ollama.chat_requests()
    assert "the secret word is ore" in sent["messages"][-1]["content"]
    assert [r.tool_name for r in result.context.tool_results] == ["read-file"]


def test_routing_is_told_through_its_callback_before_the_call(fake_ollama) -> None:
    heard = []
    plan = plan_context(route_threshold=0.5)
    run_turn(TurnRequest.of("echo hello", context=plan), on_routing=heard.append)
    assert len(heard) == 1 and heard[0].target_type in {"tool", "skill", "fallback"}


def test_preview_shows_what_would_be_sent_and_calls_nothing(fake_ollama) -> None:
    shown = preview(TurnRequest.of("q", system="be brief", controls=TurnOptions(think=True)))
    assert shown["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "q"},
    ]
    assert shown["model"] is None and shown["think"] is True
    assert fake_ollama.requests == []


def test_an_unreachable_server_is_one_ore_error() -> None:
    with pytest.raises(OreError) as caught:
        run_turn(TurnRequest.of("q", model="m", server=Server(base_url="http://127.0.0.1:9")))
    assert "\n" not in caught.value.message


def test_the_turn_package_imports_no_click_or_rich() -> None:
    imported = set()
    for path in (ORE / "turn").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    assert not imported & {"click", "rich"}


@pytest.mark.invariant
def test_exactly_one_place_appends_a_turn_to_a_saved_session() -> None:
    """Only `ore.turn.saving.append_turn` calls the store's `append` (or `add`)."""
    callers = []
    for path in ORE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("append", "add")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "store"
            ):
                callers.append(path.relative_to(ORE).as_posix())
    assert callers == ["turn/saving.py"]


def test_a_result_is_json_ready(fake_ollama) -> None:
    result = run_turn(TurnRequest.of("q"))
    assert json.loads(json.dumps(result.to_dict()))["content"] == result.content


def test_a_replay_sends_the_recorded_controls_again(tmp_path, fake_ollama) -> None:
    from ore.artifacts import read_artifact

    path = tmp_path / "a.json"
    controls = TurnOptions(options={"temperature": 0.25}, think=False)
    run_turn(TurnRequest.of("q", controls=controls, artifact_out=str(path)))
    run_turn(replay_request(read_artifact(path)))
    first, again = fake_ollama.chat_requests()
    assert again["options"] == first["options"] == {"temperature": 0.25}
    assert again["think"] is False


@pytest.mark.parametrize(
    ("field", "value"),
    [("options", {"bogus": 1}), ("options", {"num_predict": 0})],
)
def test_a_recorded_control_is_checked_as_the_command_line_checks_it(
    tmp_path, fake_ollama, field, value
) -> None:
    from ore.artifacts import read_artifact
    from ore.errors import OptionError

    path = tmp_path / "a.json"
    run_turn(TurnRequest.of("q", controls=TurnOptions(think=True), artifact_out=str(path)))
    data = json.loads(path.read_text(encoding="utf-8"))
    data["input"][field] = value
    path.write_text(json.dumps(data), encoding="utf-8")
    fake_ollama.clear_requests()
    parent = read_artifact(path)  # the artifact's schema leaves these to the option checks
    with pytest.raises(OptionError, match=f"the artifact's input.{field}"):
        replay_request(parent)
    assert fake_ollama.chat_requests() == []


@pytest.mark.parametrize(
    "recorded",
    [{"think": "extreme"}, {"keep_alive": True}, {"schema": ["not", "an", "object"]}],
)
def test_recorded_turn_options_refuse_what_the_command_line_refuses(recorded) -> None:
    from ore.errors import OptionError
    from ore.turn import recorded_turn_options

    with pytest.raises(OptionError, match=r"the artifact's input\."):
        recorded_turn_options(recorded)
