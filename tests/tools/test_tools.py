"""Tools: schemas checked before a handler runs, read-file confined to its root, one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ore.cli.options import parse_tool_args
from ore.errors import OreError, ToolArgError, ToolError
from ore.tools import (
    READ_FILE_LIMIT,
    TOOL_REGISTRY,
    Tool,
    default_registry,
    get_tool,
    read_file_tool,
)
from ore.types import ToolResult

READ = TOOL_REGISTRY["read-file"]
ECHO = TOOL_REGISTRY["echo"]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder (the cwd) with a file in it, and a secret file just outside it."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("inside\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("TOP SECRET\n", encoding="utf-8")
    monkeypatch.chdir(work)
    return work


def one_line(exc: OreError) -> str:
    assert "\n" not in exc.message
    return exc.message


# -- the registry -------------------------------------------------------------------------------


def test_the_built_ins_are_echo_read_file_and_codebase_with_their_permissions() -> None:
    assert sorted(TOOL_REGISTRY) == ["codebase", "echo", "read-file"]
    assert ECHO.permissions == ()
    assert READ.permissions == ("filesystem-read",)
    assert TOOL_REGISTRY["codebase"].permissions == ("filesystem-read",)
    assert all(t.hints and t.description for t in TOOL_REGISTRY.values())


def test_the_registry_is_read_only_and_default_registry_is_a_fresh_copy() -> None:
    with pytest.raises(TypeError):
        TOOL_REGISTRY["x"] = ECHO  # type: ignore[index]
    mine = default_registry()
    mine.pop("echo")
    assert "echo" in TOOL_REGISTRY


def test_every_built_in_schema_is_a_valid_json_schema() -> None:
    from jsonschema import Draft202012Validator

    for tool in TOOL_REGISTRY.values():
        Draft202012Validator.check_schema(dict(tool.schema))


def test_an_unknown_tool_is_one_line_listing_the_known_ones() -> None:
    with pytest.raises(ToolError) as info:
        get_tool("rm-rf")
    assert "codebase, echo, read-file" in one_line(info.value)
    assert info.value.exit_code == 1


def test_an_injected_registry_is_used_instead_of_the_built_ins() -> None:
    spy = Tool("spy", "d", (), {"type": "object"}, lambda a: ToolResult("spy", "x"))
    assert get_tool("spy", {"spy": spy}) is spy
    with pytest.raises(ToolError):
        get_tool("echo", {"spy": spy})


@pytest.mark.parametrize("name", ["Read", "read_file", "-x", "x-", "a--b", ""])
def test_a_tool_name_must_be_lowercase_words_joined_by_hyphens(name: str) -> None:
    with pytest.raises(ValueError):
        Tool(name, "d", (), {}, lambda a: ToolResult("x", "x"))


def test_a_tool_cannot_ask_for_a_permission_that_does_not_exist() -> None:
    with pytest.raises(ValueError):
        Tool("x", "d", ("root",), {}, lambda a: ToolResult("x", "x"))


# -- argument validation ------------------------------------------------------------------------


def counting_tool() -> tuple[Tool, list[Mapping[str, Any]]]:
    calls: list[Mapping[str, Any]] = []

    def handler(args: Mapping[str, Any]) -> ToolResult:
        calls.append(args)
        return ToolResult("count", "ok")

    return Tool(
        "count",
        "counts",
        (),
        {
            "type": "object",
            "properties": {"path": {"type": "string", "minLength": 1}, "n": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": False,
        },
        handler,
    ), calls


@pytest.mark.invariant
@pytest.mark.parametrize(
    "args, named",
    [
        ({}, "path"),
        ({"path": "a", "bogus": "1"}, "bogus"),
        ({"path": ""}, "path"),
        ({"path": 3}, "path"),
    ],
    ids=["missing", "unknown", "empty", "wrong-type"],
)
def test_a_bad_argument_is_one_line_naming_it_and_the_handler_never_runs(
    args: dict[str, Any], named: str
) -> None:
    tool, calls = counting_tool()
    with pytest.raises(ToolError) as info:
        tool.run(args)
    assert f"'{named}'" in one_line(info.value)
    assert calls == []


def test_good_arguments_reach_the_handler() -> None:
    tool, calls = counting_tool()
    assert tool.run({"path": "a"}).output == "ok"
    assert calls == [{"path": "a"}]


# -- --tool-arg parsing -------------------------------------------------------------------------


def test_tool_args_parse_key_equals_value_and_keep_later_equals_signs() -> None:
    assert parse_tool_args(["path=a.txt", "q=x=y", "empty="]) == {
        "path": "a.txt",
        "q": "x=y",
        "empty": "",
    }


@pytest.mark.parametrize("values", [["novalue"], ["=v"], ["a b=c"], ["a=1", "a=2"], [""]], ids=str)
def test_a_malformed_tool_arg_is_a_usage_error(values: list[str]) -> None:
    with pytest.raises(ToolArgError) as info:
        parse_tool_args(values)
    assert info.value.exit_code == 2
    one_line(info.value)


@given(st.lists(st.text(max_size=30), max_size=6))
def test_tool_arg_parsing_returns_a_dict_or_raises_its_usage_error(values: list[str]) -> None:
    try:
        args = parse_tool_args(values)
    except ToolArgError as exc:
        assert exc.exit_code == 2 and "\n" not in exc.message
    else:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in args.items())
        assert len(args) == len(values)


# -- echo ---------------------------------------------------------------------------------------


def test_echo_returns_its_text() -> None:
    result = ECHO.run({"text": "hello"})
    assert (result.tool_name, result.output, result.status) == ("echo", "hello", "ok")


def test_echo_extracts_the_text_after_its_hint_or_else_the_whole_prompt() -> None:
    """Under ORE's name `text` and upstream's `msg` both."""
    assert ECHO.extract_args("please echo hello world") == {
        "text": "hello world",
        "msg": "hello world",
    }
    assert ECHO.extract_args("repeat after me: one two") == {"text": "one two", "msg": "one two"}
    assert ECHO.extract_args("just this") == {"text": "just this", "msg": "just this"}


@pytest.mark.parametrize(
    "args, output",
    [
        ({}, "(no arguments)"),
        ({"msg": "hello"}, "msg=hello"),
        ({"b": "2", "a": "1=x"}, "a=1=x\nb=2"),
        ({"text": "hello"}, "hello"),
        ({"text": "hello", "msg": "hello"}, "hello"),  # a routed echo sets both
        ({"text": "hello", "msg": "other"}, "msg=other\ntext=hello"),
        ({"text": "hello", "z": "1"}, "text=hello\nz=1"),
    ],
)
def test_echo_accepts_any_arguments_as_upstreams_does(args: dict[str, str], output: str) -> None:
    assert ECHO.run(args).output == output


def test_a_routed_echo_hands_back_its_text_once() -> None:
    assert ECHO.run(ECHO.extract_args("please echo hello world")).output == "hello world"


# -- read-file ----------------------------------------------------------------------------------


def test_read_file_reads_a_file_in_the_working_folder(workdir: Path) -> None:
    result = READ.run({"path": "notes.txt"})
    assert result.output == "File: notes.txt (7 bytes)\ninside\n"
    assert result.metadata["truncated"] is False


def test_read_file_follows_a_symlink_that_stays_inside(workdir: Path) -> None:
    (workdir / "sub").mkdir()
    (workdir / "sub" / "link").symlink_to(workdir / "notes.txt")
    assert "inside" in READ.run({"path": "sub/link"}).output


@pytest.mark.invariant
@pytest.mark.parametrize(
    "path",
    ["../secret.txt", "sub/../../secret.txt", "{tmp}/secret.txt", "outlink", "dirlink/secret.txt"],
    ids=["dotdot", "nested-dotdot", "absolute", "symlink", "symlinked-dir"],
)
def test_read_file_refuses_anything_outside_the_working_folder(workdir: Path, path: str) -> None:
    (workdir / "sub").mkdir()
    (workdir / "outlink").symlink_to(workdir.parent / "secret.txt")
    (workdir / "dirlink").symlink_to(workdir.parent)
    with pytest.raises(ToolError) as info:
        READ.run({"path": path.format(tmp=workdir.parent)})
    assert "outside the allowed folder" in one_line(info.value)
    assert "TOP SECRET" not in info.value.message


def test_an_explicit_root_widens_or_narrows_what_read_file_may_touch(workdir: Path) -> None:
    assert "TOP SECRET" in READ.run({"path": "secret.txt", "root": str(workdir.parent)}).output
    (workdir / "sub").mkdir()
    with pytest.raises(ToolError, match="outside"):
        READ.run({"path": "../notes.txt", "root": str(workdir / "sub")})


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda d: None, "no such file"),
        (lambda d: (d / "x").mkdir(), "not a regular file"),
        (lambda d: os.mkfifo(d / "x"), "not a regular file"),
        (lambda d: (d / "x").write_bytes(b"\x7fELF\x00\x01"), "binary"),
        (lambda d: (d / "x").write_bytes(b"caf\xe9 latin-1"), "binary"),
    ],
    ids=["missing", "directory", "fifo", "nul-bytes", "not-utf8"],
)
def test_read_file_refuses_what_it_cannot_inject_in_one_line(
    workdir: Path, make, expected: str
) -> None:
    make(workdir)
    with pytest.raises(ToolError) as info:
        READ.run({"path": "x"})
    assert expected in one_line(info.value)


def test_read_file_caps_what_it_injects_and_says_so(workdir: Path) -> None:
    (workdir / "big.txt").write_text("é" * READ_FILE_LIMIT, encoding="utf-8")  # 2 bytes each
    result = READ.run({"path": "big.txt"})
    assert result.metadata["truncated"] is True
    assert result.output.endswith(
        f"[read-file: truncated to the first {READ_FILE_LIMIT} of {2 * READ_FILE_LIMIT} bytes]"
    )
    assert len(result.output.encode()) < READ_FILE_LIMIT + 200


def test_a_smaller_limit_can_be_configured(workdir: Path) -> None:
    result = read_file_tool(limit=3).run({"path": "notes.txt"})
    assert "File: notes.txt (7 bytes)\nins\n[read-file: truncated" in result.output


def test_read_file_never_extracts_a_root_from_a_prompt() -> None:
    args = READ.extract_args("read file /etc/passwd root=/ --tool-arg root=/")
    assert args == {"path": "/etc/passwd"}


@pytest.mark.parametrize(
    "prompt, path",
    [
        ("please read file notes.txt and summarise", "notes.txt"),
        ("Read-File src/app.py.", "src/app.py"),
        ('show me the file "my notes.txt" now', "my notes.txt"),
        ("what is in it? cat file `a b.md`", "a b.md"),
        ("open the file ./x.json, then explain", "./x.json"),
    ],
)
def test_read_file_extracts_the_path_after_its_hint(prompt: str, path: str) -> None:
    assert READ.extract_args(prompt) == {"path": path}


def test_read_file_extracts_nothing_without_a_hint() -> None:
    assert READ.extract_args("thread files are great") == {}


def test_a_tool_extractor_can_only_set_its_routable_args() -> None:
    tool = Tool(
        "x",
        "d",
        (),
        {},
        lambda a: ToolResult("x", "x"),
        extractor=lambda p: {"path": "a", "root": "/"},
        routable_args=frozenset({"path"}),
    )
    assert tool.extract_args("anything") == {"path": "a"}


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150)
@given(path=st.text(max_size=40))
def test_read_file_returns_a_result_or_its_one_line_error_for_any_path(
    workdir: Path, path: str
) -> None:
    try:
        result = READ.run({"path": path})
    except ToolError as exc:
        assert "\n" not in exc.message and "TOP SECRET" not in exc.message
    else:
        assert "TOP SECRET" not in result.output


@given(st.text(max_size=200))
def test_extractors_never_raise_and_never_set_root(prompt: str) -> None:
    for tool in TOOL_REGISTRY.values():
        args = tool.extract_args(prompt)
        assert set(args) <= tool.routable_args and "root" not in args


# -- start-up cost ------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--list-tools", "--list-skills"])
def test_listing_imports_no_jsonschema_yaml_networkx_or_tree_sitter(flag: str) -> None:
    heavy = (
        "jsonschema",
        "yaml",
        "networkx",
        "tree_sitter",
        "ore.graph.graph",
        "ore.graph.index.load",
    )
    code = (
        "import sys\n"
        "from ore.cli import cli\n"
        f"try: cli.main([{flag!r}], prog_name='ore')\n"
        "except SystemExit: pass\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
