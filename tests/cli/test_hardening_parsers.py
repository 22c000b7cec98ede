"""Bounded parsers and input (issue 21, items 4b and 5), through the installed `ore` command
against the loopback fake: stdin is read up to a limit, a skill's YAML aliases cannot blow up,
a recursive schema meets a deeply nested answer with one line and the answer kept, and a
replayed artifact's recorded options go through the checks `-o` makes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli import needs_ore, one_line_error, run_ore, usage_error

pytestmark = needs_ore

#: A SKILL.md of a few hundred bytes whose aliases expand 9 times per level: 9**9 values.
LAUGHS = "\n".join(
    [
        "---",
        "name: laughs",
        "description: expands forever",
        "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
        *(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)),
        "metadata: {boom: *l8}",
        "---",
        "Say lol.",
        "",
    ]
)

#: A schema that refers to itself: an answer of nested lists of any depth matches it.
RECURSIVE = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#"}}]}


def _skill(env: dict[str, str], name: str, text: str) -> Path:
    folder = Path(env["ORE_HOME"]) / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder


def _chats(fake: Any) -> list[dict[str, Any]]:
    return list(fake.chat_requests())


# -- stdin ---------------------------------------------------------------------------------------


@pytest.mark.invariant
def test_stdin_over_the_input_limit_is_one_line_exit_1_and_nothing_is_sent(
    fake_ollama, ore_env
) -> None:
    result = run_ore("--max-input", "1K", "why?", env=ore_env, input=b"x" * 1025)
    assert result.returncode == 1, result.stderr
    line = one_line_error(result)
    assert "larger than the 1 KiB limit" in line and "--max-input" in line
    assert result.stdout == "" and _chats(fake_ollama) == []


def test_stdin_at_the_limit_is_sent_whole(fake_ollama, ore_env) -> None:
    result = run_ore("--max-input", "1K", "why?", env=ore_env, input=b"y" * 1024)
    assert result.returncode == 0, result.stderr
    (chat,) = _chats(fake_ollama)
    assert "y" * 1024 in chat["messages"][-1]["content"]


def test_the_input_limit_is_read_from_ore_max_input(fake_ollama, ore_env) -> None:
    env = {**ore_env, "ORE_MAX_INPUT": "100"}
    result = run_ore("-", env=env, input=b"z" * 101)
    assert result.returncode == 1 and "100 bytes limit" in one_line_error(result)
    assert _chats(fake_ollama) == []


def test_the_default_input_limit_is_16_mib(fake_ollama, ore_env) -> None:
    result = run_ore("why?", env=ore_env, input=b"a" * (16 * 1024 * 1024 + 1), timeout=60)
    assert result.returncode == 1 and "16 MiB limit" in one_line_error(result)
    assert _chats(fake_ollama) == []


@pytest.mark.parametrize("value", ["0", "lots", "-5", "1T"])
def test_a_malformed_max_input_is_a_usage_error(fake_ollama, ore_env, value: str) -> None:
    result = run_ore("--max-input", value, "q", env=ore_env, input=b"x")
    assert result.returncode == 2 and "--max-input" in result.stderr
    assert "Traceback" not in result.stderr and _chats(fake_ollama) == []


# -- skills: YAML aliases ----------------------------------------------------------------------


@pytest.mark.invariant
def test_a_billion_laughs_skill_is_one_warning_and_the_other_skills_work(
    fake_ollama, ore_env
) -> None:
    _skill(ore_env, "laughs", LAUGHS)
    _skill(ore_env, "fine", "---\nname: fine\ndescription: a fine skill\n---\nBe fine.\n")
    listed = run_ore("--list-skills", env=ore_env, timeout=20)
    assert listed.returncode == 0, listed.stderr
    warnings = [line for line in listed.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1 and "laughs" in warnings[0] and "billion laughs" in warnings[0]
    assert "fine\ta fine skill" in listed.stdout and "laughs\t" not in listed.stdout
    used = run_ore("--skill", "fine", "go", env=ore_env, timeout=20)
    assert used.returncode == 0, used.stderr
    assert "Be fine." in json.dumps(_chats(fake_ollama))
    routed = run_ore("--route", "--dry-run", "be fine", env=ore_env, timeout=20)
    assert routed.returncode == 0, routed.stderr


def test_validate_says_why_a_billion_laughs_skill_is_refused_in_one_line(ore_env) -> None:
    folder = _skill(ore_env, "laughs", LAUGHS)
    result = run_ore("skill", "validate", str(folder), env=ore_env, timeout=20)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    (line,) = result.stdout.splitlines()  # validate reports on stdout, one line a finding
    assert "refused:" in line and "aliases expand past" in line


def test_activating_a_billion_laughs_skill_is_one_line(fake_ollama, ore_env) -> None:
    _skill(ore_env, "laughs", LAUGHS)
    result = run_ore("--skill", "laughs", "go", env=ore_env, timeout=20)
    assert result.returncode == 1 and "aliases expand past" in one_line_error(result)
    assert _chats(fake_ollama) == []


# -- --schema: bounded validation -------------------------------------------------------------


@pytest.mark.invariant
def test_a_recursive_schema_and_a_deeply_nested_answer_is_one_line_and_the_answer_kept(
    fake_ollama, ore_env, tmp_path: Path
) -> None:
    answer = "[" * 5000 + '"x"' + "]" * 5000
    fake_ollama.reply = answer
    path = tmp_path / "a.json"
    schema = json.dumps(RECURSIVE)
    result = run_ore("--schema", schema, "nest", "--artifact-out", str(path), env=ore_env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert f"the answer is on stdout as it came; the artifact is written to {path}" in line
    assert result.stdout == answer + "\n"  # never lost: a pipe gets it byte-exact
    assert json.loads(path.read_text())["output"]["content"] == answer
    as_json = run_ore("--schema", schema, "nest", "--json", env=ore_env)
    assert as_json.returncode == 1 and one_line_error(as_json)
    assert json.loads(as_json.stdout)["content"] == answer


def test_a_recursive_schema_and_a_parseable_deep_answer_is_one_line(fake_ollama, ore_env) -> None:
    answer = "[" * 200 + '"x"' + "]" * 200  # JSON Python reads, deeper than ORE checks
    fake_ollama.reply = answer
    result = run_ore("--schema", json.dumps(RECURSIVE), "--json", "nest", env=ore_env)
    assert result.returncode == 1 and "nests deeper than" in one_line_error(result)
    assert json.loads(result.stdout)["content"] == answer


def test_a_recursive_schema_and_a_shallow_answer_is_valid(fake_ollama, ore_env) -> None:
    fake_ollama.reply = '[["a", ["b"]], "c"]'
    result = run_ore("--schema", json.dumps(RECURSIVE), "nest", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [["a", ["b"]], "c"]


def test_a_schema_that_refers_nowhere_is_one_line_and_the_answer_kept(fake_ollama, ore_env) -> None:
    fake_ollama.reply = '{"a": 1}'
    schema = json.dumps({"$ref": "https://example.invalid/schema.json"})
    result = run_ore("--schema", schema, "--json", "x", env=ore_env)
    assert result.returncode == 1 and "cannot be checked" in one_line_error(result)
    assert json.loads(result.stdout)["content"] == '{"a": 1}'


def test_a_schema_nested_too_deep_is_a_usage_error(fake_ollama, ore_env) -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(300):
        schema = {"type": "array", "items": schema}
    result = run_ore("--schema", json.dumps(schema), "x", env=ore_env)
    assert "nests deeper than" in usage_error(result)
    assert _chats(fake_ollama) == []


# -- artifact options: the checks -o makes -----------------------------------------------------


def _artifact(fake_ollama, ore_env, tmp_path: Path) -> Path:
    path = tmp_path / "a.json"
    made = run_ore("-o", "temperature=0.2", "hi", "--artifact-out", str(path), env=ore_env)
    assert made.returncode == 0, made.stderr
    return path


@pytest.mark.invariant
@pytest.mark.parametrize(
    "options,words",
    [
        ({"temperature": 99}, "temperature must be a number between 0 and 2"),
        ({"temperature": "hot"}, "temperature must be a number"),
        ({"num_ctx": 1.5}, "num_ctx must be a whole number"),
        ({"seed": "7"}, "seed must be a whole number"),
        ({"num_predict": 0}, "would generate nothing"),
        ({"num_gpu": 99}, "is not an option ORE knows"),
        ({"stop": [""]}, "stop needs a text"),
        ({"stop": [1]}, "stop needs a text"),
    ],
)
def test_a_replayed_artifacts_options_go_through_the_checks_of_o(
    fake_ollama, ore_env, tmp_path: Path, options: dict[str, Any], words: str
) -> None:
    path = _artifact(fake_ollama, ore_env, tmp_path)
    artifact = json.loads(path.read_text())
    artifact["input"]["options"] = options
    path.write_text(json.dumps(artifact))
    before = len(_chats(fake_ollama))
    result = run_ore("--artifact-in", str(path), env=ore_env)
    line = usage_error(result)
    assert "the artifact's input.options" in line and words in line
    assert len(_chats(fake_ollama)) == before


def test_a_replayed_artifacts_good_options_are_sent(fake_ollama, ore_env, tmp_path: Path) -> None:
    path = _artifact(fake_ollama, ore_env, tmp_path)
    artifact = json.loads(path.read_text())
    artifact["input"]["options"] = {"temperature": 1, "stop": ["END"], "seed": 3}
    path.write_text(json.dumps(artifact))
    result = run_ore("--artifact-in", str(path), env=ore_env)
    assert result.returncode == 0, result.stderr
    sent = _chats(fake_ollama)[-1]["options"]
    assert sent["temperature"] == 1.0 and sent["stop"] == ["END"] and sent["seed"] == 3


def test_a_replayed_artifacts_recursive_schema_nested_too_deep_is_refused(
    fake_ollama, ore_env, tmp_path: Path
) -> None:
    path = _artifact(fake_ollama, ore_env, tmp_path)
    artifact = json.loads(path.read_text())
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(300):
        schema = {"items": schema}
    artifact["input"]["schema"] = schema
    path.write_text(json.dumps(artifact))
    before = len(_chats(fake_ollama))
    result = run_ore("--artifact-in", str(path), env=ore_env)
    assert "the artifact's input.schema nests deeper than" in usage_error(result)
    assert len(_chats(fake_ollama)) == before
