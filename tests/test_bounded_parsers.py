"""Bounded parsers and input (issue 21, items 4b and 5), in process: a skill's YAML aliases are
bounded, a `--schema` check is bounded in depth and its failures are one line, model options
from anywhere go through one check, and stdin is read in chunks up to its limit."""

from __future__ import annotations

import json
import os
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from ore.cli import stdin as ore_stdin
from ore.cli.controls import check_schema, turn_options
from ore.cli.options import parse_model_options
from ore.errors import OptionError, OreError, SkillError
from ore.model_options import MODEL_OPTIONS, check_model_option, check_model_options
from ore.skills import parse_frontmatter
from ore.skills.frontmatter import YAML_EXPANSION_LIMIT
from ore.turn.answer import MAX_STRUCTURED_DEPTH, structured


def _laughs(levels: int, width: int = 9) -> str:
    lines = ["name: x", "description: y", f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + f"\nmetadata: {{boom: *l{levels - 1}}}\n"


# -- YAML aliases ------------------------------------------------------------------------------


@pytest.mark.invariant
def test_a_billion_laughs_frontmatter_is_refused_quickly() -> None:
    started = time.monotonic()
    with pytest.raises(SkillError, match="aliases expand past"):
        parse_frontmatter(_laughs(9))
    assert time.monotonic() - started < 2


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(SkillError, match="alias to itself"):
        parse_frontmatter("name: x\ndescription: y\nloop: &a [1, *a]\n")
    with pytest.raises(SkillError, match="alias to itself"):
        parse_frontmatter("name: x\ndescription: y\nloop: &a {k: *a}\n")


def test_a_few_aliases_still_load_as_yaml_reads_them() -> None:
    import yaml

    text = "name: x\ndescription: &d a skill\nmetadata:\n  short: *d\ntags: &t [a, b]\nmore: *t\n"
    assert parse_frontmatter(text) == yaml.safe_load(text)
    assert parse_frontmatter(_laughs(3)) == yaml.safe_load(_laughs(3))  # 9**3 values: fine


def test_a_long_string_repeated_by_aliases_counts_its_characters() -> None:
    long = "w" * 20_000
    text = f"name: x\ndescription: y\na: &a '{long}'\nb: &b [{', '.join(['*a'] * 60)}]\n"
    assert YAML_EXPANSION_LIMIT < 60 * 20_000
    with pytest.raises(SkillError, match="aliases expand past"):
        parse_frontmatter(text)


def test_large_frontmatter_without_aliases_loads() -> None:
    items = "\n".join(f"  - '{i}: item'" for i in range(5000))
    data = parse_frontmatter(f"name: x\ndescription: y\nhints:\n{items}\n")
    assert len(data["hints"]) == 5000


# -- --schema ----------------------------------------------------------------------------------

RECURSIVE = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#"}}]}


def _nested(depth: int) -> str:
    return "[" * depth + '"x"' + "]" * depth


@pytest.mark.invariant
@pytest.mark.parametrize("depth", [MAX_STRUCTURED_DEPTH + 1, 900, 100_000])
def test_a_recursive_schema_and_a_deep_answer_is_one_line_never_an_exception(depth: int) -> None:
    data, why = structured(_nested(depth), RECURSIVE)
    assert data is None and why is not None and "\n" not in why
    assert why.startswith("the answer ")  # where the answer went is the caller's to say


def test_an_answer_at_the_depth_bound_is_checked() -> None:
    data, why = structured(_nested(MAX_STRUCTURED_DEPTH - 1), RECURSIVE)
    assert why is None and data is not None


def test_a_recursion_error_in_the_validator_is_the_one_line_schema_error(monkeypatch) -> None:
    from jsonschema import exceptions

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(exceptions, "best_match", boom)
    data, why = structured('{"a": 1}', {"type": "object"})
    assert data is None and why is not None and "recurses too deeply" in why


@pytest.mark.invariant
def test_a_schema_check_exponential_in_the_answer_ends_in_bounded_time(monkeypatch) -> None:
    from ore.turn import answer

    monkeypatch.setattr(answer, "MAX_STRUCTURED_SECONDS", 0.3)
    both = {"type": "array", "items": {"$ref": "#"}}
    schema = {"anyOf": [both, {**both, "maxItems": 5}]}  # each level tries both: 2**depth
    started = time.monotonic()
    data, why = structured(_nested(40).replace('"x"', "1"), schema)
    assert time.monotonic() - started < 10  # unbounded would be 2**40 steps; a loaded CI is slow
    assert data is None and why is not None and why.endswith("within 0.3 seconds")


def test_a_tick_taken_in_a_weakref_callback_is_not_raised_there(monkeypatch) -> None:
    """The alarm's signal is taken where Python runs next: in a weakref callback (or a `__del__`)
    that the check's garbage sets off, its exception would be swallowed as "ignored". A tick
    raises only in the check's own code, so nothing is ignored."""
    import signal
    import sys
    import weakref

    from ore.turn.answer import _alarm

    class Held:
        pass

    ignored: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", ignored.append)
    rang: list[bool] = []
    with _alarm(5) as armed:
        assert armed
        held = Held()
        ref = weakref.ref(held, lambda _: rang.append(signal.raise_signal(signal.SIGALRM) is None))
        del held  # the callback runs here, and the signal is taken inside it
    assert rang == [True] and ref() is None
    assert ignored == []


_LISTS = "[" + ",".join(["[]"] * 1000) + "]"


def _garbage() -> None:
    """Work in a package a schema check runs in (`json`), making garbage enough to run the
    collector (and its hooks) often."""
    json.loads(_LISTS)


def test_a_tick_outside_the_checks_code_waits_for_the_next(monkeypatch) -> None:
    """A tick that lands in foreign code (a hook) is not raised there; the next, in the
    check's own code, is."""
    import gc
    import sys

    from ore.turn.answer import _alarm, _OutOfTime

    def slow_hook(phase: str, info: dict[str, int]) -> None:
        time.sleep(0.02)

    ignored: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", ignored.append)
    gc.callbacks.append(slow_hook)
    given_up = time.monotonic() + 5  # swallowed ticks would let the loop run on
    try:
        with pytest.raises(_OutOfTime), _alarm(0.2) as armed:
            assert armed
            while time.monotonic() < given_up:
                _garbage()
    finally:
        gc.callbacks.remove(slow_hook)
    assert ignored == []


def test_an_unresolvable_ref_is_the_one_line_schema_error() -> None:
    data, why = structured('{"a": 1}', {"$ref": "https://example.invalid/s.json"})
    assert data is None and why is not None and "cannot be checked" in why and "\n" not in why


def test_check_schema_takes_a_recursive_schema_and_refuses_a_deep_one() -> None:
    check_schema(RECURSIVE)
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(200):
        deep = {"items": deep}
    with pytest.raises(OptionError, match="nests deeper than"):
        check_schema(deep)
    with pytest.raises(OptionError, match=r"the artifact's input\.schema must be a JSON object"):
        check_schema([], what="the artifact's input.schema")  # type: ignore[arg-type]


# -- model options -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options,words",
    [
        ({"temperature": 2.5}, "temperature must be a number between 0 and 2"),
        ({"temperature": float("nan")}, "temperature must be a number"),
        ({"top_k": -1}, "top_k must be a whole number at least 0"),
        ({"top_k": 1.0}, "top_k must be a whole number"),
        ({"seed": True}, "seed must be a whole number"),
        ({"num_predict": 0}, "would generate nothing"),
        ({"mirostat": 1}, "is not an option ORE knows"),
        ({"stop": []}, "stop must be a list"),
        ({"stop": "END"}, None),
    ],
)
def test_recorded_options_are_checked_as_o_checks_them(
    options: dict[str, Any], words: str | None
) -> None:
    if words is None:
        assert check_model_options(options, "where") == {"stop": ("END",)}
        return
    with pytest.raises(OptionError, match=words) as caught:
        check_model_options(options, "the artifact's input.options")
    assert str(caught.value).startswith("the artifact's input.options.")


def test_o_and_recorded_options_refuse_the_same_values_with_the_same_reason() -> None:
    for key, (kind, low, high) in MODEL_OPTIONS.items():
        if kind is str:
            continue
        for bad in [v for v in (low, high) if v is not None]:
            value = kind(bad - 1 if bad == low else bad + 1)
            with pytest.raises(OptionError) as by_flag:
                parse_model_options([f"{key}={value}"])
            with pytest.raises(OptionError) as by_record:
                check_model_option(key, value, "recorded")
            assert str(by_flag.value).split(": ", 1)[1] == str(by_record.value).split(": ", 1)[1]


def test_a_mapping_that_is_not_one_is_refused() -> None:
    with pytest.raises(OptionError, match="must be an object"):
        check_model_options(["temperature"], "the artifact's input.options")
    assert check_model_options(None, "x") == {}


def test_turn_options_checks_recorded_options_and_lets_a_flag_override(monkeypatch) -> None:
    from ore.cli.command import Options

    o = Options(**{name: None for name in Options._fields})._replace(
        option=("temperature=0.5",), attach=(), no_think=False
    )
    controls = turn_options(o, "ollama", {"options": {"temperature": 1, "stop": ["A"]}})
    assert controls.options == {"temperature": 0.5, "stop": ("A",)}
    with pytest.raises(OptionError, match=r"input\.options\.top_p"):
        turn_options(o, "ollama", {"options": {"top_p": 7}})


# -- stdin ---------------------------------------------------------------------------------------


def _pipe_with(data_size: int, chunk: int = 1 << 16) -> tuple[int, threading.Thread]:
    read_fd, write_fd = os.pipe()

    def write() -> None:
        block = b"x" * chunk
        left = data_size
        try:
            while left > 0:
                left -= os.write(write_fd, block[: min(chunk, left)])
        except BrokenPipeError:
            pass
        finally:
            os.close(write_fd)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return read_fd, thread


@pytest.mark.invariant
def test_reading_stdin_stops_at_the_limit_and_costs_at_most_twice_it() -> None:
    limit = 4 * 1024 * 1024
    read_fd, thread = _pipe_with(8 * limit)
    tracemalloc.start()
    try:
        with pytest.raises(OreError, match="larger than the 4 MiB limit"):
            ore_stdin._read_all(read_fd, limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        os.close(read_fd)
        thread.join(5)
    assert peak <= 2 * limit


def test_reading_stdin_up_to_the_limit_gives_it_all() -> None:
    read_fd, thread = _pipe_with(1000)
    try:
        assert ore_stdin._read_all(read_fd, 1000) == b"x" * 1000
    finally:
        os.close(read_fd)
        thread.join(5)


def test_a_file_on_stdin_over_the_limit_is_refused_without_reading_it(
    tmp_path: Path, monkeypatch
) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"y" * 2048)
    calls: list[int] = []
    real_read = os.read
    monkeypatch.setattr(ore_stdin.os, "read", lambda fd, n: calls.append(n) or real_read(fd, n))
    with path.open("rb") as f:
        monkeypatch.setattr(ore_stdin.sys, "stdin", f)
        with pytest.raises(OreError, match="larger than the 1 KiB limit"):
            ore_stdin.prompt_stdin("q", no_stdin=False, note=print, limit=1024)
        assert calls == []  # refused by its size, not read
        assert ore_stdin.prompt_stdin("q", no_stdin=False, note=print, limit=2048) == "y" * 2048
    assert calls  # the second read did read


def test_the_limit_is_named_in_its_unit() -> None:
    assert json.dumps([ore_stdin._size(n) for n in (16 << 20, 1 << 30, 1024, 1000)]) == (
        '["16 MiB", "1 GiB", "1 KiB", "1,000 bytes"]'
    )
