"""The data contracts: frozen, JSON round-trippable, strict about untrusted input."""

from __future__ import annotations

import contextlib
import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ore.errors import DataError
from ore.turn_types import RoutingDecision
from ore.types import Message, Response, Session


def test_message_round_trips_through_json() -> None:
    message = Message(role="user", content="héllo")
    assert Message.from_dict(json.loads(json.dumps(message.to_dict()))) == message


def test_session_round_trips_through_json_with_upstreams_three_keys() -> None:
    session = Session().append(
        Message(role="user", content="a"), Message(role="assistant", content="b")
    )
    data = json.loads(json.dumps(session.to_dict()))
    assert set(data) == {"id", "created_at", "messages"}
    assert Session.from_dict(data) == session


def test_response_round_trips_through_json() -> None:
    response = Response(content="x", model_id="m", metadata={"eval_count": 3})
    assert Response.from_dict(json.loads(json.dumps(response.to_dict()))) == response


def test_routing_decision_round_trips() -> None:
    decision = RoutingDecision(target="echo", target_type="tool", confidence=0.8, args={"a": "b"})
    assert RoutingDecision.from_dict(decision.to_dict()) == decision


def test_contracts_are_frozen() -> None:
    message = Message(role="user", content="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.content = "y"  # type: ignore[misc]


@pytest.mark.invariant
def test_append_returns_a_new_session_and_leaves_the_old_one() -> None:
    session = Session()
    longer = session.append(Message(role="user", content="x"))
    assert session.messages == () and len(longer.messages) == 1
    assert longer.id == session.id and longer.created_at == session.created_at


@pytest.mark.invariant
def test_a_session_refuses_system_messages() -> None:
    with pytest.raises(DataError):
        Session(messages=(Message(role="system", content="x"),))
    data = Session().to_dict()
    data["messages"] = [{"role": "system", "content": "x", "id": "1", "timestamp": 1.0}]
    with pytest.raises(DataError):
        Session.from_dict(data)


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"messages": "x", "id": "1", "created_at": 1.0},
        {"messages": [], "id": 1, "created_at": 1.0},
        {"messages": [], "id": "1", "created_at": "yesterday"},
        {"messages": [{"role": "robot", "content": "x"}], "id": "1", "created_at": 1.0},
        {"messages": [{"role": "user"}], "id": "1", "created_at": 1.0},
        {"messages": [{"role": "user", "content": 5}], "id": "1", "created_at": 1.0},
    ],
    ids=[
        "list",
        "messages-not-list",
        "id-int",
        "created-str",
        "bad-role",
        "no-content",
        "content-int",
    ],
)
def test_malformed_sessions_raise_data_error_naming_the_problem(data: object) -> None:
    with pytest.raises(DataError) as info:
        Session.from_dict(data)
    assert info.value.message


@given(
    st.recursive(
        st.none() | st.booleans() | st.floats() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
    )
)
def test_random_json_never_crashes_the_session_reader(data: object) -> None:
    with contextlib.suppress(DataError):
        Session.from_dict(data)


def test_new_id_is_a_random_uuid4_string() -> None:
    import uuid

    from ore.types import new_id

    ids = {new_id() for _ in range(500)}
    assert len(ids) == 500
    for value in ids:
        parsed = uuid.UUID(value)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert str(parsed) == value  # lower-case, hyphenated: what uuid4 wrote before
