"""The permission gate: exactly four permissions, default-deny, and a refused tool never runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ore.cli.options import parse_grants
from ore.errors import GateRejected, ToolError
from ore.tools import Tool
from ore.tools.gate import PERMISSIONS, check, missing_permissions, run_gated
from ore.types import ToolResult


def recording_tool(*permissions: str) -> tuple[Tool, list[Mapping[str, Any]]]:
    """A tool that records every time its code runs."""
    calls: list[Mapping[str, Any]] = []

    def handler(args: Mapping[str, Any]) -> ToolResult:
        calls.append(args)
        return ToolResult(tool_name="spy", output="ran")

    schema = {
        "type": "object",
        "properties": {"x": {"type": "string"}},
        "additionalProperties": False,
    }
    return Tool("spy", "records calls", tuple(permissions), schema, handler), calls


def test_the_permissions_are_upstreams_four_exactly() -> None:
    assert PERMISSIONS == ("filesystem-read", "filesystem-write", "shell", "network")


def test_grants_parse_to_a_set_and_repeats_are_harmless() -> None:
    assert parse_grants(["shell", "network", "shell"]) == {"shell", "network"}
    assert parse_grants([]) == frozenset()


@pytest.mark.invariant
@pytest.mark.parametrize("grant", ["root", "Shell", "filesystem", "", "filesystem-read "])
def test_an_unknown_grant_is_an_error_listing_the_valid_ones(grant: str) -> None:
    with pytest.raises(ToolError) as info:
        parse_grants(["shell", grant])
    assert info.value.exit_code == 1
    assert all(p in info.value.message for p in PERMISSIONS)
    assert "\n" not in info.value.message


@pytest.mark.invariant
@pytest.mark.parametrize(
    "needs, granted",
    [
        (("filesystem-read",), ()),
        (("filesystem-read",), ("filesystem-write", "shell", "network")),
        (("shell", "network"), ("shell",)),
    ],
    ids=["nothing-granted", "others-granted", "partly-granted"],
)
def test_a_denied_tool_never_runs(needs: tuple[str, ...], granted: tuple[str, ...]) -> None:
    tool, calls = recording_tool(*needs)
    with pytest.raises(GateRejected):
        run_gated(tool, {"x": "1"}, frozenset(granted))
    assert calls == []


def test_the_refusal_names_each_missing_permission_and_the_flag() -> None:
    tool, _ = recording_tool("shell", "network", "filesystem-read")
    with pytest.raises(GateRejected) as info:
        check(tool, {"network"})
    assert info.value.missing == ("shell", "filesystem-read")
    assert info.value.tool == "spy"
    assert "--grant shell --grant filesystem-read" in info.value.message
    assert "network" not in info.value.message.split("needs")[1].split("which")[0]


def test_the_gate_comes_before_argument_validation() -> None:
    """A refused tool is not even asked to look at its arguments."""
    tool, calls = recording_tool("shell")
    with pytest.raises(GateRejected):
        run_gated(tool, {"not-an-argument": "1"}, ())
    assert calls == []


def test_a_granted_tool_runs_once() -> None:
    tool, calls = recording_tool("filesystem-read")
    result = run_gated(tool, {"x": "1"}, parse_grants(["filesystem-read"]))
    assert result.output == "ran"
    assert calls == [{"x": "1"}]


def test_a_tool_needing_nothing_runs_with_no_grants() -> None:
    tool, calls = recording_tool()
    run_gated(tool, {}, ())
    assert len(calls) == 1


def test_a_single_string_grant_counts_as_one_permission() -> None:
    tool, _ = recording_tool("shell")
    assert missing_permissions(tool, "shell") == ()
    assert missing_permissions(tool, "s") == ("shell",)
