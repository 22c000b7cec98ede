"""Execution artifacts as a library: versions, round trips, schemas, hostile input, replay plans.

Upstream-written `ore.exec.v1` fixtures are built from upstream's documented format (field by
field), not from anything this project writes.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ore.artifacts import (
    ARTIFACT_VERSION,
    MAX_ARTIFACT_BYTES,
    SUPPORTED_VERSIONS,
    V1,
    V2,
    V3,
    BackendInfo,
    Continuation,
    ExecutionArtifact,
    build_artifact,
    check_destination,
    dumps_artifact,
    load_schema,
    parse_artifact,
    plan_turn,
    public_url,
    read_artifact,
    resolve_version,
    schema_text,
    validate,
    write_artifact,
)
from ore.core import Turn, execute
from ore.errors import ArtifactError
from ore.turn_types import Image, RoutingDecision, TurnOptions
from ore.types import Message, Response

V1_KEYS = {"artifact_version", "execution_id", "timestamp", "input", "output", "continuation"}
V1_INPUT_KEYS = {"prompt", "model_id", "mode", "routing", "tools", "skills"}
V1_OUTPUT_KEYS = {"id", "content", "model_id", "timestamp", "metadata"}
PERSONA = "You are Aya."


#: An artifact as upstream ORE v0.9.1 writes it, built from its documented `ore.exec.v1` format.
UPSTREAM_V1_FILE = Path(__file__).parent.parent / "data" / "upstream-v1.json"


def upstream_v1(**changes: Any) -> dict[str, Any]:
    """An artifact as upstream ORE v0.9.1 writes it (its documented `ore.exec.v1`)."""
    data: dict[str, Any] = json.loads(UPSTREAM_V1_FILE.read_text(encoding="utf-8"))
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        target = data
        for key in parents:
            target = target[key]
        target[last] = value
    return data


UPSTREAM_VARIANTS = {
    "plain": upstream_v1(),
    "routed-tool": upstream_v1(
        input__routing={
            "target": "read-file",
            "target_type": "tool",
            "confidence": 0.9,
            "args": {"path": "notes.txt"},
            "reasoning": "matched hint 'read file'",
            "id": "0f1e2d3c-0000-4000-8000-000000000001",
            "timestamp": 1735689599.5,
        },
        input__tools=["read-file"],
    ),
    "skill": upstream_v1(input__skills=["pirate"], input__tools=[]),
    "continuation": upstream_v1(continuation={"requested": True, "reason": "needs a second pass"}),
    "minimal": {
        "artifact_version": "ore.exec.v1",
        "execution_id": "x",
        "timestamp": 1,
        "input": {"prompt": "p", "model_id": "m", "mode": "single_turn"},
        "output": {"id": "x", "content": "", "model_id": "m", "timestamp": 1, "metadata": {}},
        "continuation": {"requested": False},
    },
    "unknown-top-level-key": {**upstream_v1(), "producer": "someone else"},
}


def make_turn(content: str = "the answer", prompt: str = "the question") -> Turn:
    sent = (Message(role="system", content=PERSONA), Message(role="user", content=prompt))
    response = Response(content=content, model_id="llama3.2:latest", metadata={"eval_count": 3})
    return Turn(response=response, session=None, sent=sent)


def make_artifact(**kwargs: Any) -> ExecutionArtifact:
    turn = kwargs.pop("turn", None) or make_turn()
    defaults: dict[str, Any] = {
        "prompt": "the question",
        "model_id": "llama3.2",
        "backend": BackendInfo("ollama", "http://127.0.0.1:11434"),
    }
    return build_artifact(turn, **{**defaults, **kwargs})


class EchoReasoner:
    """Answers "echo: <last message>" and remembers what it was sent."""

    model_id = "fake"

    def __init__(self) -> None:
        self.calls: list[tuple[Message, ...]] = []

    def complete(self, messages: Any, options: Any = None) -> Response:
        self.calls.append(tuple(messages))
        return Response(content=f"echo: {messages[-1].content}", model_id=self.model_id)

    def stream(
        self, messages: Any, on_token: Any, options: Any = None, on_thinking: Any = None
    ) -> Response:
        return self.complete(messages)


# -- versions and schemas ----------------------------------------------------------------------


def test_versions_are_named_and_v3_is_the_default() -> None:
    # v3 (ORE 0.11) adds optional fields only; v2 stays readable and writable.
    assert SUPPORTED_VERSIONS == ("ore.exec.v1", "ore.exec.v2", "ore.exec.v3")
    assert ARTIFACT_VERSION == V3
    assert resolve_version("v1") == V1 and resolve_version("ore.exec.v2") == V2
    assert resolve_version("v3") == V3
    with pytest.raises(ArtifactError, match="unknown artifact version"):
        resolve_version("v9")


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_each_shipped_schema_is_a_valid_draft_2020_12_schema(version: str) -> None:
    schema = load_schema(version)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert json.loads(schema_text(version)) == schema


def test_v2_schema_is_a_superset_of_v1() -> None:
    v1, v2 = load_schema(V1), load_schema(V2)
    assert set(v1["required"]) <= set(v2["required"])
    for part in ("input", "output", "continuation"):
        old, new = v1["properties"][part], v2["properties"][part]
        assert set(old["required"]) <= set(new["required"])
        for name, spec in old["properties"].items():
            assert name in new["properties"], (part, name)
            if "type" in spec and name not in ("tools", "skills"):
                assert new["properties"][name]["type"] == spec["type"], (part, name)


def test_v3_schema_is_v2_plus_optional_fields_only() -> None:
    v2, v3 = load_schema(V2), load_schema(V3)
    assert v3["required"] == v2["required"]
    for part in ("input", "output", "continuation", "backend", "lineage"):
        old, new = v2["properties"][part], v3["properties"][part]
        assert new["required"] == old["required"], part
        for name, spec in old["properties"].items():
            assert new["properties"][name] == spec, (part, name)
    added = set(v3["properties"]["input"]["properties"]) - set(
        v2["properties"]["input"]["properties"]
    )
    assert added == {"options", "keep_alive", "schema", "think", "images"}
    assert set(v3["properties"]["output"]["properties"]) - set(
        v2["properties"]["output"]["properties"]
    ) == {"thinking"}


# -- upstream v1 -------------------------------------------------------------------------------


@pytest.mark.parametrize("data", UPSTREAM_VARIANTS.values(), ids=UPSTREAM_VARIANTS.keys())
def test_upstream_v1_artifacts_are_read(data: dict[str, Any]) -> None:
    artifact = parse_artifact(json.dumps(data).encode())
    assert artifact.version == V1
    assert artifact.prompt == data["input"]["prompt"]
    assert artifact.output.content == data["output"]["content"]
    assert artifact.messages is None and artifact.parent_execution_id is None


@pytest.mark.parametrize(
    "name", [n for n in UPSTREAM_VARIANTS if n != "minimal"], ids=lambda n: str(n)
)
def test_upstream_v1_round_trips_to_exactly_what_upstream_wrote(name: str) -> None:
    data = copy.deepcopy(UPSTREAM_VARIANTS[name])
    data.pop("producer", None)  # unknown keys are tolerated on read, not carried
    assert ExecutionArtifact.from_dict(data).to_dict() == data


def test_the_v1_option_writes_exactly_upstreams_fields() -> None:
    routing = RoutingDecision(target="echo", target_type="tool", confidence=1.0)
    artifact = make_artifact(routing=routing, tools=["echo"], skills=["pirate"])
    data = json.loads(dumps_artifact(artifact, V1))
    assert set(data) == V1_KEYS
    assert set(data["input"]) == V1_INPUT_KEYS
    assert set(data["output"]) == V1_OUTPUT_KEYS
    assert set(data["continuation"]) == {"requested", "reason"}
    assert set(data["input"]["routing"]) == {
        "target",
        "target_type",
        "confidence",
        "args",
        "reasoning",
        "id",
        "timestamp",
    }
    assert (
        data["artifact_version"] == "ore.exec.v1" and data["execution_id"] == data["output"]["id"]
    )
    jsonschema.validate(data, json.loads(schema_text(V1)))


def test_v1_written_without_tools_or_skills_says_null_as_upstream_does() -> None:
    data = make_artifact().to_dict(V1)
    assert data["input"]["tools"] is None and data["input"]["skills"] is None


def test_replaying_v1_sends_the_persona_and_input_prompt_with_the_recorded_model() -> None:
    parent = ExecutionArtifact.from_dict(upstream_v1())
    plan = plan_turn(parent, system=PERSONA)
    reasoner = EchoReasoner()
    execute(plan.messages, None, plan.tool_results, reasoner=reasoner, system=plan.system)
    (sent,) = reasoner.calls
    assert [(m.role, m.content) for m in sent] == [
        ("system", PERSONA),
        ("user", "Explain a unix pipe in one sentence"),
    ]
    assert plan.model_id == "llama3.2:latest" and plan.relation == "replay"


# -- v2 ----------------------------------------------------------------------------------------


def test_v2_round_trips_through_dict_and_json() -> None:
    artifact = make_artifact(
        routing=RoutingDecision(target="pirate", target_type="skill", confidence=0.75),
        skills=["pirate"],
        continuation=Continuation(requested=True, reason="declared by the caller"),
    )
    assert ExecutionArtifact.from_dict(artifact.to_dict()) == artifact
    assert parse_artifact(dumps_artifact(artifact).encode()) == artifact


def test_v2_records_messages_backend_version_and_lineage() -> None:
    import ore

    root = make_artifact()
    child = make_artifact(parent=root)
    data = child.to_dict(V2)
    assert data["artifact_version"] == "ore.exec.v2"
    assert data["input"]["messages"][0]["content"] == PERSONA
    assert data["ore_version"] == ore.__version__
    assert data["backend"] == {"name": "ollama", "base_url": "http://127.0.0.1:11434"}
    assert root.to_dict()["lineage"] == {"parent_execution_id": None, "relation": "root"}
    assert data["lineage"] == {"parent_execution_id": root.execution_id, "relation": "chain"}
    assert set(V1_KEYS) <= set(data) and set(data["input"]) >= V1_INPUT_KEYS


@pytest.mark.parametrize(
    "url",
    [
        "http://user:secret@example.com:8080/v1?api_key=secret#secret",
        "https://secret@example.com/v1",
    ],
)
def test_the_recorded_base_url_never_holds_credentials(url: str) -> None:
    data = make_artifact(backend=BackendInfo("openai", url)).to_dict()
    assert "secret" not in json.dumps(data)
    assert data["backend"]["base_url"].startswith(("http://example.com", "https://example.com"))
    assert public_url(None) is None


def test_an_artifact_read_from_v1_cannot_be_written_as_v2() -> None:
    artifact = ExecutionArtifact.from_dict(upstream_v1())
    with pytest.raises(ArtifactError, match=r"write it as ore\.exec\.v1"):
        artifact.to_dict(V2)


@pytest.mark.invariant
def test_replaying_v2_sends_the_recorded_messages_exactly() -> None:
    turn = make_turn()
    recorded = (*turn.sent, Message(role="user", content="[Tool:echo]\nold tool output"))
    parent = make_artifact(turn=Turn(turn.response, None, recorded))
    parent = parse_artifact(dumps_artifact(parent).encode())
    plan = plan_turn(parent, system="a different persona is ignored")
    reasoner = EchoReasoner()
    result = execute(plan.messages, None, plan.tool_results, reasoner=reasoner, system=plan.system)
    assert [(m.role, m.content) for m in reasoner.calls[0]] == [
        (m.role, m.content) for m in recorded
    ]
    assert len(reasoner.calls) == 1 and result.session is None


def test_chaining_passes_the_parents_answer_as_turn_scoped_artifact_context() -> None:
    parent = make_artifact(turn=make_turn(content="first draft"))
    plan = plan_turn(parent, "critique it", system=PERSONA)
    reasoner = EchoReasoner()
    turn = execute(plan.messages, None, plan.tool_results, reasoner=reasoner, system=plan.system)
    block = f"[Artifact:{parent.execution_id}]\nfirst draft\n[/Artifact:{parent.execution_id}]"
    assert [(m.role, m.content) for m in turn.sent] == [
        ("system", PERSONA),
        ("user", f"{block}\n\ncritique it"),
    ]
    child = make_artifact(turn=turn, prompt="critique it", parent=parent, relation=plan.relation)
    assert child.parent_execution_id == parent.execution_id and child.relation == "chain"
    assert plan.tool_results[0].kind == "artifact"


@pytest.mark.invariant
def test_continuation_is_never_inferred_from_the_content() -> None:
    turn = make_turn(content='CONTINUE. {"continuation": {"requested": true}} please continue')
    artifact = make_artifact(turn=turn, prompt="continue?")
    assert artifact.continuation == Continuation(requested=False, reason=None)
    assert artifact.to_dict()["continuation"] == {"requested": False, "reason": None}
    declared = make_artifact(continuation=Continuation(True, "asked for"))
    assert declared.to_dict(V1)["continuation"] == {"requested": True, "reason": "asked for"}


# -- v3: the turn controls and the reasoning ------------------------------------------------------


def _controlled_turn() -> Turn:
    options = TurnOptions(
        options={"temperature": 0.2, "stop": ("END", "STOP")},
        keep_alive="5m",
        schema={"type": "object", "properties": {"a": {"type": "integer"}}},
        think="low",
        images=(Image(name="cat.png", media_type="image/png", data=b"\x89PNG\r\n\x1a\nxx"),),
    )
    response = Response(content='{"a": 1}', model_id="m", thinking="because")
    sent = (Message(role="user", content="q"),)
    return Turn(response=response, session=None, sent=sent, options=options)


def test_v3_records_the_controls_and_the_reasoning_and_round_trips() -> None:
    artifact = make_artifact(turn=_controlled_turn())
    data = artifact.to_dict()
    assert data["artifact_version"] == "ore.exec.v3"
    assert data["input"]["options"] == {"temperature": 0.2, "stop": ["END", "STOP"]}
    assert data["input"]["keep_alive"] == "5m" and data["input"]["think"] == "low"
    assert data["input"]["schema"]["properties"]["a"] == {"type": "integer"}
    (image,) = data["input"]["images"]
    assert image == {
        "name": "cat.png",
        "media_type": "image/png",
        "size": 10,
        "sha256": hashlib.sha256(b"\x89PNG\r\n\x1a\nxx").hexdigest(),
    }
    assert data["output"]["thinking"] == "because"
    again = parse_artifact(dumps_artifact(artifact).encode())
    assert again == artifact
    assert plan_turn(again).controls == artifact.controls
    assert plan_turn(again, "next").controls == {}  # a chain is a new turn


def test_v1_and_v2_writes_keep_exactly_their_fields() -> None:
    artifact = make_artifact(turn=_controlled_turn())
    for version, schema in ((V1, load_schema(V1)), (V2, load_schema(V2))):
        data = artifact.to_dict(version)
        assert "thinking" not in data["output"]
        assert set(data["input"]) <= set(schema["properties"]["input"]["properties"])
        jsonschema.validate(data, schema)
    assert set(artifact.to_dict(V1)["output"]) == {
        "id",
        "model_id",
        "content",
        "timestamp",
        "metadata",
    }


# -- hostile input -----------------------------------------------------------------------------


def _v2() -> dict[str, Any]:
    return make_artifact().to_dict(V2)


def _without(data: dict[str, Any], *path: str) -> dict[str, Any]:
    target = data
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return data


def _with(data: dict[str, Any], value: Any, *path: str | int) -> dict[str, Any]:
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


HOSTILE: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "is empty"),
    "blank": (b" \n\t ", "is empty"),
    "binary-nul": (b"\x00\x01\x02artifact", "binary"),
    "binary-not-utf8": (b"\xff\xfe\xfa{}", "not UTF-8"),
    "not-json": (b"hello, world", "is not JSON"),
    "truncated": (json.dumps(upstream_v1()).encode()[:50], "is not JSON"),
    "a-list": (b"[1, 2]", "is a JSON array"),
    "a-string": (b'"ore.exec.v1"', "is a JSON string"),
    "null": (b"null", "is a JSON null"),
    "nan": (b'{"artifact_version": NaN}', "NaN"),
    "too-deep": (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    "no-version": (
        json.dumps(_without(upstream_v1(), "artifact_version")).encode(),
        "no artifact_version",
    ),
    "unknown-version": (
        json.dumps(_with(upstream_v1(), "ore.exec.v9", "artifact_version")).encode(),
        "unsupported artifact_version",
    ),
    "version-not-a-string": (
        json.dumps(_with(upstream_v1(), 1, "artifact_version")).encode(),
        "$.artifact_version must be a string",
    ),
    "content-wrong-type": (
        json.dumps(_with(upstream_v1(), 42, "output", "content")).encode(),
        "$.output.content must be a string, not number",
    ),
    "missing-content": (
        json.dumps(_without(upstream_v1(), "output", "content")).encode(),
        "$.output.content is missing",
    ),
    "missing-input": (json.dumps(_without(upstream_v1(), "input")).encode(), "$.input is missing"),
    "requested-not-bool": (
        json.dumps(_with(upstream_v1(), "yes", "continuation", "requested")).encode(),
        "$.continuation.requested must be a boolean",
    ),
    "v2-missing-messages": (
        json.dumps(_without(_v2(), "input", "messages")).encode(),
        "$.input.messages is missing",
    ),
    "v2-bad-role": (
        json.dumps(_with(_v2(), "robot", "input", "messages", 0, "role")).encode(),
        "$.input.messages[0].role must be one of",
    ),
    "v2-chain-without-parent": (
        json.dumps(_with(_v2(), "chain", "lineage", "relation")).encode(),
        "$.lineage.parent_execution_id",
    ),
    "huge-number": (json.dumps(_with(upstream_v1(), 10**400, "timestamp")).encode(), "too large"),
    "lone-surrogate": (
        json.dumps(upstream_v1()).replace('"p', '"\\ud800p', 1).encode(),
        "surrogate",
    ),
}


@pytest.mark.parametrize("data,expected", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_is_one_line_naming_the_problem(data: bytes, expected: str) -> None:
    with pytest.raises(ArtifactError) as info:
        parse_artifact(data, source="a.json")
    message = info.value.message
    assert expected in message and "\n" not in message
    assert "artifact 'a.json'" in message


@pytest.mark.invariant
def test_an_artifact_without_a_version_is_refused() -> None:
    for data in (_without(upstream_v1(), "artifact_version"), _without(_v2(), "artifact_version")):
        with pytest.raises(ArtifactError, match="no artifact_version"):
            ExecutionArtifact.from_dict(data)


@pytest.mark.invariant
def test_an_artifact_of_any_mode_but_single_turn_is_refused() -> None:
    for data in (upstream_v1(), _v2()):
        data["input"]["mode"] = "conversational"
        with pytest.raises(ArtifactError, match=r'\$\.input\.mode must be "single_turn"'):
            ExecutionArtifact.from_dict(data)


def test_a_hostile_key_is_escaped_in_the_message() -> None:
    data = upstream_v1()
    data["output"]["metadata"] = "\x1b[2J"
    data["input"]["routing"] = {"ok": True}
    with pytest.raises(ArtifactError) as info:
        ExecutionArtifact.from_dict(data)
    assert "\x1b" not in info.value.message and "$.output.metadata" in info.value.message


def test_a_missing_file_a_directory_and_an_oversized_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="does not exist"):
        read_artifact(tmp_path / "nope.json")
    with pytest.raises(ArtifactError, match="is a directory"):
        read_artifact(tmp_path)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(MAX_ARTIFACT_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(ArtifactError, match="16 MiB limit"):
        read_artifact(big)


def test_a_fifo_given_as_an_artifact_file_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ArtifactError, match=r"not a regular file \(a FIFO\); pipe it in with"):
        read_artifact(tmp_path / "pipe")  # without O_NONBLOCK this would wait for a writer


def test_an_artifact_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(json.dumps(upstream_v1()), encoding="utf-8")
    assert read_artifact(path).execution_id == upstream_v1()["execution_id"]
    assert read_artifact(str(path)).version == V1


def test_validate_names_the_path_and_accepts_good_data() -> None:
    validate(upstream_v1())
    validate(_v2(), "v2")
    with pytest.raises(ArtifactError, match=r"\$\.output\.content"):
        validate(_with(_v2(), None, "output", "content"), "v2")


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_json)
def test_random_json_never_crashes_the_reader(value: Any) -> None:
    with contextlib.suppress(ArtifactError):
        ExecutionArtifact.from_dict(value)
    with contextlib.suppress(ArtifactError):
        parse_artifact(json.dumps(value).encode())


_paths_v2 = [
    ("artifact_version",),
    ("execution_id",),
    ("timestamp",),
    ("input",),
    ("input", "prompt"),
    ("input", "model_id"),
    ("input", "routing"),
    ("input", "tools"),
    ("input", "messages"),
    ("output", "content"),
    ("output", "metadata"),
    ("continuation", "reason"),
    ("backend", "base_url"),
    ("lineage", "parent_execution_id"),
    ("lineage", "relation"),
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_paths_v2), _json, st.sampled_from(["v1", "v2"]))
def test_a_valid_artifact_with_one_field_replaced_by_random_json_never_crashes_it(
    path: tuple[str, ...], value: Any, version: str
) -> None:
    data = upstream_v1() if version == "v1" else _v2()
    if version == "v1" and path[0] in ("backend", "lineage"):
        path = ("input", "skills")
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    try:
        artifact = ExecutionArtifact.from_dict(data)
    except ArtifactError:
        return
    jsonschema.validate(artifact.to_dict(), load_schema(artifact.version))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_never_crash_the_reader(data: bytes) -> None:
    with contextlib.suppress(ArtifactError):
        parse_artifact(data)


@functools.cache
def _printed_schema(version: str) -> jsonschema.protocols.Validator:
    """What `jsonschema.validate(..., schema)` checks against the printed schema, built once
    (the schema itself checked against its meta-schema, as validate() would each time)."""
    schema = json.loads(schema_text(version))
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


@settings(max_examples=100, deadline=None)
@given(
    prompt=st.text(),
    content=st.text(),
    model=st.text(min_size=1),
    metadata=st.dictionaries(st.text(), st.integers() | st.text()),
    tools=st.lists(st.text(), max_size=3),
    requested=st.booleans(),
    chained=st.booleans(),
)
def test_every_emitted_artifact_validates_against_the_printed_schema(
    prompt: str,
    content: str,
    model: str,
    metadata: dict[str, Any],
    tools: list[str],
    requested: bool,
    chained: bool,
) -> None:
    for text in (prompt, content, model, *tools, *metadata):
        if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
            return  # lone surrogates cannot be encoded as UTF-8 by anyone
    response = Response(content=content, model_id=model, metadata=metadata)
    turn = Turn(response, None, (Message(role="user", content=prompt),))
    parent = make_artifact() if chained else None
    artifact = make_artifact(
        turn=turn,
        prompt=prompt,
        model_id=model,
        tools=tools,
        parent=parent,
        continuation=Continuation(requested),
    )
    for version in SUPPORTED_VERSIONS:
        emitted = json.loads(dumps_artifact(artifact, version))
        _printed_schema(version).validate(emitted)
        assert parse_artifact(dumps_artifact(artifact, version).encode()).prompt == prompt


# -- writing -----------------------------------------------------------------------------------


def test_writing_is_atomic_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text("old", encoding="utf-8")
    artifact = make_artifact()
    write_artifact(artifact, path)
    assert read_artifact(path) == artifact
    assert os.listdir(tmp_path) == ["a.json"]


def test_a_failed_write_keeps_the_old_file_and_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.json"
    path.write_text("old", encoding="utf-8")

    def refuse(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(ArtifactError, match="No space left on device"):
        write_artifact(make_artifact(), path)
    assert path.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["a.json"]


def test_an_unwritable_destination_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="does not exist"):
        check_destination(tmp_path / "no" / "a.json")
    with pytest.raises(ArtifactError, match="is a directory"):
        check_destination(tmp_path)
    check_destination(tmp_path / "a.json")
    check_destination("-")


def test_jsonschema_is_not_imported_until_an_artifact_is_read_or_written() -> None:
    code = (
        "import sys, ore.artifacts, ore.cli\n"
        "assert 'jsonschema' not in sys.modules\n"
        "from ore.artifacts import schema_text; schema_text()\n"
        "assert 'jsonschema' not in sys.modules\n"
        "from ore.artifacts import validate\n"
        "try:\n    validate({}, 'v2')\nexcept Exception:\n    pass\n"
        "assert 'jsonschema' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
