"""A turn's artifact document (`ore.artifacts._document.turn_document`): the one place a turn
becomes an artifact. `build_artifact` is that document read back, the turn log keeps it as it
is, and both give the same JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from ore.artifacts import (
    V3,
    BackendInfo,
    Continuation,
    build_artifact,
    document_artifact,
    turn_document,
    validate,
)
from ore.core import Turn
from ore.turn_types import Image, RoutingDecision, TurnOptions
from ore.types import Message, Response


def plain_turn() -> Turn:
    sent = (Message(role="system", content="be brief"), Message(role="user", content="q"))
    response = Response(content="a", model_id="llama3.2:latest", metadata={"eval_count": 3})
    return Turn(response=response, session=None, sent=sent)


def controlled_turn() -> Turn:
    options = TurnOptions(
        options={"temperature": 0.2, "stop": ("END",)},
        keep_alive="5m",
        schema={"type": "object"},
        think="low",
        images=(Image(name="cat.png", media_type="image/png", data=b"\x89PNG\r\n\x1a\nxx"),),
    )
    response = Response(content='{"a": 1}', model_id="m", thinking="because")
    return Turn(response=response, session=None, sent=(Message("user", "q"),), options=options)


PARENT = build_artifact(
    plain_turn(), prompt="first", model_id="m", backend=BackendInfo("ollama", None)
)

CASES: dict[str, tuple[Turn, dict[str, Any]]] = {
    "a plain root": (plain_turn(), {}),
    "controls, tools, skills, files and a routing decision": (
        controlled_turn(),
        {
            "tools": ["git_diff"],
            "skills": ["review"],
            "files": [{"name": "a.py", "size": 3, "sha256": "0" * 64}],
            "routing": RoutingDecision(target="git_diff", target_type="tool", confidence=1.0),
        },
    ),
    "a chain": (plain_turn(), {"parent": PARENT}),
    "a replay": (plain_turn(), {"parent": PARENT, "relation": "replay"}),
    "a declared continuation": (
        plain_turn(),
        {"continuation": Continuation(True, "needs a second pass")},
    ),
}


def _document_arguments(kwargs: dict[str, Any]) -> dict[str, Any]:
    """`build_artifact`'s arguments as `turn_document` takes them."""
    args = dict(kwargs)
    parent = args.pop("parent", None)
    if parent is not None:
        args["parent_id"] = parent.execution_id
    declared = args.pop("continuation", None)
    if declared is not None:
        args["continuation"] = (declared.requested, declared.reason)
    return args


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_the_document_is_what_the_built_artifact_writes(case: str) -> None:
    turn, kwargs = CASES[case]
    backend = BackendInfo("openai", "http://127.0.0.1:8080/v1")
    artifact = build_artifact(turn, prompt="q", model_id="m", backend=backend, **kwargs)
    document = turn_document(
        turn,
        prompt="q",
        model_id="m",
        backend=("openai", "http://127.0.0.1:8080/v1"),
        **_document_arguments(kwargs),
    )
    written = artifact.to_dict(V3)
    document["timestamp"] = written["timestamp"]  # each is stamped when it is made
    assert json.dumps(document) == json.dumps(written)  # the same keys, in the same order
    validate(document)  # a valid ore.exec.v3 document
    assert document_artifact(document) == artifact


def test_the_built_artifact_holds_the_turn_itself() -> None:
    turn = controlled_turn()
    artifact = build_artifact(turn, prompt="q", model_id="m", backend=BackendInfo("x", None))
    assert artifact.output == turn.response
    assert artifact.messages == turn.sent
    assert artifact.controls == turn.options.to_dict()


def test_a_relation_that_contradicts_the_parent_is_refused() -> None:
    with pytest.raises(ValueError, match="relation"):
        turn_document(plain_turn(), prompt="q", model_id="m", backend=("x", None), relation="chain")
    with pytest.raises(ValueError, match="relation"):
        turn_document(
            plain_turn(),
            prompt="q",
            model_id="m",
            backend=("x", None),
            parent_id="p",
            relation="root",
        )


def test_making_a_document_defines_no_contract_class() -> None:
    """The turn log's record makes the document of every logged turn: the module it loads
    holds no class, so a turn does not pay for defining the artifact's three."""
    probe = (
        "import sys\n"
        "from ore.artifacts import turn_document\n"
        "print(sorted(m for m in sys.modules if m.startswith('ore.artifacts')))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert loaded.strip() == "['ore.artifacts', 'ore.artifacts._document']"
