"""Tools, the gate, routing and skills through the installed `ore` command, against the loopback
Ollama imitation: one chat request per turn (none when the gate or a validation refuses), tool
and skill text in the documented order, and never in a saved session."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from _cli import needs_ore, one_line_error, run_ore

pytestmark = needs_ore
PERSONA = "Aya"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The working folder for the command, with a file inside and a secret just outside."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("NOTES INSIDE\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("TOP SECRET\n", encoding="utf-8")
    return folder


ore = run_ore


def sent(fake_ollama) -> list[dict[str, str]]:
    """The messages of the one chat request the server got."""
    requests = fake_ollama.chat_requests()
    assert len(requests) == 1
    return requests[0]["messages"]


def skill_block(messages: list[dict[str, str]], name: str) -> str:
    """The `[Skill:NAME]` block of the one system message (without its end marker)."""
    assert [m["role"] for m in messages].count("system") == 1 and messages[0]["role"] == "system"
    start = messages[0]["content"].index(f"[Skill:{name}]\n")
    end = messages[0]["content"].index(f"\n[/Skill:{name}]", start)
    return messages[0]["content"][start:end]


def all_request_text(fake_ollama) -> str:
    return json.dumps(fake_ollama.requests)


def user_skill(env: dict[str, str], name: str, front: str, body: str = "Answer in haiku.") -> Path:
    folder = Path(env["ORE_HOME"]) / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{front}---\n{body}\n", encoding="utf-8")
    return folder


# -- listing ------------------------------------------------------------------------------------


def test_list_tools_shows_name_permissions_and_description(fake_ollama, ore_env) -> None:
    result = ore("--list-tools", env=ore_env)
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert [r[:2] for r in rows] == [
        ["codebase", "filesystem-read"],
        ["echo", "none"],
        ["read-file", "filesystem-read"],
    ]
    assert fake_ollama.requests == []


def test_list_skills_shows_the_bundled_skills(fake_ollama, ore_env) -> None:
    result = ore("--list-skills", env=ore_env)
    assert result.returncode == 0, result.stderr
    names = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert {"summarise", "review-diff", "explain-code"} <= set(names)
    assert result.stderr == "" and fake_ollama.requests == []


@pytest.mark.invariant
def test_one_malformed_skill_among_good_ones_still_lists_the_good_ones(
    fake_ollama, ore_env
) -> None:
    user_skill(ore_env, "good-one", "name: good-one\ndescription: Fine.\n")
    bad = user_skill(ore_env, "bad-one", "name: bad-one\ndescription: [unclosed\n")
    result = ore("--list-skills", env=ore_env)
    assert result.returncode == 0
    names = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert "good-one" in names and "summarise" in names and "bad-one" not in names
    warning = one_line_error(result)
    assert warning.startswith("Warning:") and str(bad / "SKILL.md") in warning


# -- tools and the gate -------------------------------------------------------------------------


@pytest.mark.invariant
def test_a_tool_result_reaches_one_request_after_the_persona_and_before_the_prompt(
    fake_ollama, ore_env
) -> None:
    result = ore("what did it say?", "--tool", "echo", "--tool-arg", "text=hello", env=ore_env)
    assert result.returncode == 0, result.stderr
    messages = sent(fake_ollama)
    # Shape 2: the tool block opens the turn's one user message, the prompt closes it.
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == "[Tool:echo]\nhello\n[/Tool:echo]\n\nwhat did it say?"


@pytest.mark.invariant
def test_a_denied_tool_makes_no_request_and_names_the_grant(fake_ollama, ore_env, work) -> None:
    result = ore("hi", "--tool", "read-file", "--tool-arg", "path=notes.txt", env=ore_env, cwd=work)
    assert result.returncode == 1
    line = one_line_error(result)
    assert "filesystem-read" in line and "--grant filesystem-read" in line
    assert fake_ollama.chat_requests() == [] and "NOTES INSIDE" not in all_request_text(fake_ollama)


def test_a_granted_read_file_injects_the_file(fake_ollama, ore_env, work) -> None:
    result = ore(
        "summarise",
        "--tool",
        "read-file",
        "--tool-arg",
        "path=notes.txt",
        "--grant",
        "filesystem-read",
        env=ore_env,
        cwd=work,
    )
    assert result.returncode == 0, result.stderr
    assert (
        sent(fake_ollama)[1]["content"]
        == "[Tool:read-file]\nFile: notes.txt (13 bytes)\nNOTES INSIDE\n[/Tool:read-file]\n\nsummarise"
    )


@pytest.mark.invariant
@pytest.mark.parametrize(
    "args, code, expected",
    [
        (["--grant", "everything"], 2, "filesystem-read, filesystem-write, shell, network"),
        (["--tool", "echo", "--tool-arg", "no-equals"], 2, "KEY=VALUE"),
        (["--tool", "echo", "--tool-arg", "text=a", "--tool-arg", "text=b"], 2, "more than once"),
        (["--tool", "nosuch"], 2, "unknown tool 'nosuch'"),
        (
            ["--tool", "read-file", "--tool-arg", "bogus=1", "--grant", "filesystem-read"],
            2,
            "no argument 'bogus'",
        ),
        (["--tool", "read-file", "--grant", "filesystem-read"], 1, "missing the argument 'path'"),
        (
            [
                "--tool",
                "read-file",
                "--tool-arg",
                "path=../secret.txt",
                "--grant",
                "filesystem-read",
            ],
            1,
            "outside",
        ),
        (
            ["--tool", "read-file", "--tool-arg", "path=missing.txt", "--grant", "filesystem-read"],
            1,
            "no such file",
        ),
        (["--route", "--tool", "echo"], 2, "--route and --tool"),
        (["--skill", "nosuch"], 1, "unknown skill 'nosuch'"),
        (["--skill-resource", "x.md"], 2, "--skill-resource needs --skill"),
    ],
    ids=[
        "unknown-grant",
        "malformed-arg",
        "repeated-arg",
        "unknown-tool",
        "unknown-arg",
        "missing-arg",
        "outside",
        "missing-file",
        "route-and-tool",
        "unknown-skill",
        "resource-without-skill",
    ],
)
def test_refusals_make_no_request_and_exit_with_their_code(
    fake_ollama, ore_env, work, args: list[str], code: int, expected: str
) -> None:
    result = ore("hi", *args, env=ore_env, cwd=work)
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr and expected in result.stderr
    assert fake_ollama.chat_requests() == []
    assert "TOP SECRET" not in all_request_text(fake_ollama) + result.stderr + result.stdout


# -- skills -------------------------------------------------------------------------------------


@pytest.mark.invariant
@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_skill_and_tool_make_one_system_message_and_no_two_same_roles_in_a_row(
    fake_ollama, ore_env, backend: str
) -> None:
    flags = ["go", "--skill", "summarise", "--tool", "echo", "--tool-arg", "text=T"]
    if backend == "ollama":
        result = ore(*flags, "--save-session", "s", env=ore_env)
        assert result.returncode == 0, result.stderr
        result = ore(*flags, "--resume-session", "s", env=ore_env)
        messages = fake_ollama.chat_requests()[-1]["messages"]
    else:
        from fake_openai import FakeOpenAI

        with FakeOpenAI() as server:
            env = {**ore_env, "ORE_BACKEND": "openai", "ORE_BASE_URL": server.url}
            result = ore(*flags, "-m", "llama3.2:latest", env=env)
            (request,) = server.chat_requests()
        messages = request["messages"]
    assert result.returncode == 0, result.stderr
    roles = [m["role"] for m in messages]
    assert roles.count("system") == 1 and roles[0] == "system"
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    # Persona, then the skill, in the one system message; the tool block, then the prompt, in
    # the turn's user message (shape 2: the order of old, now in two messages).
    assert messages[0]["content"].index(PERSONA) < messages[0]["content"].index("[Skill:summarise]")
    assert skill_block(messages, "summarise").startswith("[Skill:summarise]\n# Summarise")
    assert messages[-1] == {"role": "user", "content": "[Tool:echo]\nT\n[/Tool:echo]\n\ngo"}


def test_a_user_skill_overrides_the_bundled_one(fake_ollama, ore_env) -> None:
    user_skill(ore_env, "summarise", "name: summarise\ndescription: Mine.\n", "MY OWN WAY")
    assert ore("x", "--skill", "summarise", env=ore_env).returncode == 0
    assert skill_block(sent(fake_ollama), "summarise") == "[Skill:summarise]\nMY OWN WAY"


def test_activating_a_malformed_skill_says_why_and_makes_no_request(fake_ollama, ore_env) -> None:
    user_skill(ore_env, "broken", "name: broken\n")
    result = ore("x", "--skill", "broken", env=ore_env)
    assert result.returncode == 1
    assert "skill 'broken' is malformed" in one_line_error(result)
    assert "description" in result.stderr and fake_ollama.chat_requests() == []


def test_an_unknown_skill_among_thousands_is_one_short_line_with_the_closest_names(
    fake_ollama, ore_env
) -> None:
    for n in range(3000):
        user_skill(ore_env, f"skill-{n:04d}", f"name: skill-{n:04d}\ndescription: number {n}\n")
    result = ore("--skill", "skill-12345", "hi", env=ore_env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert len(line) < 200, line
    assert re.search(r"did you mean skill-\d{4}, skill-\d{4}, skill-\d{4}\? 30\d\d skills", line)
    assert fake_ollama.chat_requests() == []


def test_a_skill_resource_is_added_only_when_asked_for(fake_ollama, ore_env) -> None:
    folder = user_skill(ore_env, "styled", "name: styled\ndescription: d\n", "BODY")
    (folder / "references").mkdir()
    (folder / "references" / "style.md").write_text("SHORT SENTENCES", encoding="utf-8")
    assert ore("x", "--skill", "styled", env=ore_env).returncode == 0
    assert (
        ore("x", "--skill", "styled", "--skill-resource", "style.md", env=ore_env).returncode == 0
    )
    plain, extra = (skill_block(r["messages"], "styled") for r in fake_ollama.chat_requests())
    assert plain == "[Skill:styled]\nBODY"
    assert extra == "[Skill:styled]\nBODY\n\n[Resource:references/style.md]\nSHORT SENTENCES"


@pytest.mark.invariant
@pytest.mark.parametrize("name", ["../../../secret.txt", "references/../../../secret.txt", "out"])
def test_a_skill_resource_outside_the_skill_folder_is_refused(
    fake_ollama, ore_env, work, name: str
) -> None:
    folder = user_skill(ore_env, "styled", "name: styled\ndescription: d\n")
    (folder / "references").mkdir()
    (folder / "references" / "out").symlink_to(work.parent / "secret.txt")
    result = ore("x", "--skill", "styled", "--skill-resource", name, env=ore_env)
    assert result.returncode == 1
    assert "TOP SECRET" not in result.stderr + all_request_text(fake_ollama)
    assert fake_ollama.chat_requests() == []


# -- sessions never hold tool or skill text -----------------------------------------------------


@pytest.mark.invariant
def test_tool_and_skill_text_never_reach_a_saved_session(fake_ollama, ore_env) -> None:
    flags = ["--skill", "review-diff", "--tool", "echo", "--tool-arg", "text=TOOL-TEXT"]
    fake_ollama.reply = "an answer"  # not an echo: the turn's user message now holds the tool text
    assert ore("first", *flags, "--save-session", "s", env=ore_env).returncode == 0
    assert ore("second", *flags, "--resume-session", "s", env=ore_env).returncode == 0
    stored = (Path(ore_env["ORE_HOME"]) / "sessions" / "s.json").read_text(encoding="utf-8")
    assert "TOOL-TEXT" not in stored and "[Skill:" not in stored and "[Tool:" not in stored
    second = fake_ollama.chat_requests()[1]["messages"]
    # The persona and this turn's skill, the stored history (first, answer), then this turn's
    # tool block and prompt in one user message.
    assert skill_block(second, "review-diff").startswith("[Skill:review-diff]\n")
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[1]["content"] == "first"
    assert second[3]["content"] == "[Tool:echo]\nTOOL-TEXT\n[/Tool:echo]\n\nsecond"
    assert sum("[Tool:echo]" in m["content"] for m in second) == 1


def test_in_a_repl_the_tool_runs_before_every_turn(fake_ollama, ore_env) -> None:
    result = ore("-i", "--tool", "echo", "--tool-arg", "text=T", env=ore_env, input="a\nb\n")
    assert result.returncode == 0, result.stderr
    requests = fake_ollama.chat_requests()
    assert len(requests) == 2
    assert [r["messages"][1]["content"] for r in requests] == [
        "[Tool:echo]\nT\n[/Tool:echo]\n\na",
        "[Tool:echo]\nT\n[/Tool:echo]\n\nb",
    ]


# -- routing ------------------------------------------------------------------------------------


def routing_line(result: subprocess.CompletedProcess[str]) -> dict:
    lines = [line for line in result.stderr.splitlines() if line.startswith("[routing] ")]
    assert len(lines) == 1, result.stderr
    return json.loads(lines[0].removeprefix("[routing] "))


def test_a_dry_run_shows_the_routing_decision_on_stderr_and_in_its_document(
    fake_ollama, ore_env
) -> None:
    result = ore("--dry-run", "--route", "summarise this", env=ore_env, input="a long log\n")
    assert result.returncode == 0, result.stderr
    decision = routing_line(result)
    assert decision["target"] == "summarise"
    assert json.loads(result.stdout)["routing"]["target"] == "summarise"
    assert fake_ollama.chat_requests() == []


def test_a_routed_skill_is_activated_and_the_decision_is_one_stderr_line(
    fake_ollama, ore_env
) -> None:
    result = ore("--route", "summarise this", env=ore_env, input="a long log\n")
    assert result.returncode == 0, result.stderr
    decision = routing_line(result)
    assert decision["target"] == "summarise" and decision["target_type"] == "skill"
    assert set(decision) == {
        "target",
        "target_type",
        "confidence",
        "args",
        "reasoning",
        "id",
        "timestamp",
    }
    assert skill_block(sent(fake_ollama), "summarise").startswith("[Skill:summarise]\n")


def test_route_with_json_includes_the_decision(fake_ollama, ore_env, work) -> None:
    result = ore(
        "--route",
        "--json",
        "--grant",
        "filesystem-read",
        "read file notes.txt",
        env=ore_env,
        cwd=work,
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["routing"]["target"] == "read-file" and out["routing"]["args"] == {
        "path": "notes.txt"
    }
    assert "NOTES INSIDE" in sent(fake_ollama)[1]["content"]


def test_a_prompt_without_hints_falls_back_to_a_plain_turn(fake_ollama, ore_env) -> None:
    result = ore("--route", "what is a monad?", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert routing_line(result)["target_type"] == "fallback"
    assert [m["role"] for m in sent(fake_ollama)] == ["system", "user"]


def test_the_route_threshold_can_demand_a_more_specific_match(fake_ollama, ore_env) -> None:
    result = ore("--route", "--route-threshold", "0.9", "summarise this", env=ore_env)
    assert routing_line(result)["target_type"] == "fallback"
    assert len(sent(fake_ollama)) == 2


def test_a_routed_tool_is_still_gated(fake_ollama, ore_env, work) -> None:
    result = ore("--route", "read file notes.txt", env=ore_env, cwd=work)
    assert result.returncode == 1 and "--grant filesystem-read" in result.stderr
    assert fake_ollama.chat_requests() == []


@pytest.mark.invariant
@pytest.mark.parametrize(
    "prompt",
    [
        "read file ../secret.txt",
        "read file {outside}/secret.txt",
        "show file link.txt",
        "read file up/secret.txt",
        "read file ../secret.txt root={outside}",
    ],
)
@pytest.mark.parametrize("piped", [False, True], ids=["argument", "piped"])
def test_no_prompt_makes_a_routed_read_reach_outside_the_working_folder(
    fake_ollama, ore_env, work, prompt: str, piped: bool
) -> None:
    (work / "link.txt").symlink_to(work.parent / "secret.txt")
    (work / "up").symlink_to(work.parent)
    text = prompt.format(outside=work.parent)
    args = ["--route", "--grant", "filesystem-read", "--route-threshold", "0"]
    result = (
        ore(*args, env=ore_env, cwd=work, input=text)
        if piped
        else ore(*args, text, env=ore_env, cwd=work)
    )
    assert result.returncode == 1 and "outside the allowed folder" in result.stderr
    assert fake_ollama.chat_requests() == []
    assert "TOP SECRET" not in all_request_text(fake_ollama) + result.stdout + result.stderr


def test_dry_run_shows_tool_and_skill_messages_and_calls_nothing(fake_ollama, ore_env) -> None:
    result = ore(
        "hi",
        "--dry-run",
        "--model",
        "m",
        "--skill",
        "explain-code",
        "--tool",
        "echo",
        "--tool-arg",
        "text=T",
        env=ore_env,
    )
    assert result.returncode == 0, result.stderr
    roles = [m["role"] for m in json.loads(result.stdout)["messages"]]
    assert roles == ["system", "user"] and fake_ollama.requests == []


def test_the_working_folder_is_the_default_root(fake_ollama, ore_env, work) -> None:
    env = {**ore_env, "PWD": "/"}  # only the real cwd counts
    result = ore(
        "x",
        "--tool",
        "read-file",
        "--tool-arg",
        "path=notes.txt",
        "--grant",
        "filesystem-read",
        env=env,
        cwd=work,
    )
    assert result.returncode == 0, result.stderr
    assert os.fspath(work) not in sent(fake_ollama)[1]["content"]


# -- the codebase tool --------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small Python project to run `ore` in: pkg/core.py is imported by pkg/a.py and pkg/b.py,
    main.py imports those two; a secret lies just outside, and a symlink inside points at it."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "core.py").write_text("def execute(x):\n    return x\n", encoding="utf-8")
    (root / "pkg" / "a.py").write_text("from pkg.core import execute\n", encoding="utf-8")
    (root / "pkg" / "b.py").write_text("from pkg import core\n", encoding="utf-8")
    (root / "main.py").write_text("import pkg.a\nimport pkg.b\n", encoding="utf-8")
    (tmp_path / "outside.py").write_text('SECRET = "TOP SECRET"\n', encoding="utf-8")
    (root / "leak.py").symlink_to(tmp_path / "outside.py")
    return root


def tool_block(fake_ollama, name: str = "codebase") -> str:
    """The one tool block of the one chat request: it opens the user message after the persona,
    before the prompt."""
    messages = sent(fake_ollama)
    assert [m["role"] for m in messages] == ["system", "user"]
    content = messages[1]["content"]
    assert content.startswith(f"[Tool:{name}]\n")
    return content[: content.index(f"[/Tool:{name}]")]


@pytest.mark.invariant
def test_a_granted_codebase_query_reaches_one_request(fake_ollama, ore_env, project) -> None:
    result = ore(
        "--tool",
        "codebase",
        "--tool-arg",
        "op=top-files",
        "--grant",
        "filesystem-read",
        "which files matter?",
        env=ore_env,
        cwd=project,
    )
    assert result.returncode == 0, result.stderr
    block = tool_block(fake_ollama)
    assert block.startswith("[Tool:codebase]\nQuery: top-files\n")
    assert all(f in block for f in ("pkg/core.py", "pkg/a.py", "pkg/b.py", "main.py"))
    assert block.index("pkg/core.py") < block.index("main.py")  # ranked: most depended-on first
    assert "TOP SECRET" not in all_request_text(fake_ollama) and "leak.py" not in block
    assert sent(fake_ollama)[1]["content"].endswith("[/Tool:codebase]\n\nwhich files matter?")


@pytest.mark.invariant
@pytest.mark.parametrize("how", ["tool", "route"])
def test_codebase_without_the_grant_is_refused_with_no_request(
    fake_ollama, ore_env, project, how: str
) -> None:
    args = (
        ["--tool", "codebase", "--tool-arg", "op=top-files", "which files matter?"]
        if how == "tool"
        else ["--route", "what depends on pkg/a.py"]
    )
    result = ore(*args, env=ore_env, cwd=project)
    assert result.returncode == 1
    assert "--grant filesystem-read" in result.stderr.splitlines()[-1]
    assert fake_ollama.chat_requests() == []
    assert not (Path(ore_env["ORE_HOME"]) / "cache" / "graph").exists()  # the tool never ran


@pytest.mark.parametrize(
    "prompt, args, expected",
    [
        ("what depends on pkg/a.py", {"op": "dependents", "file": "pkg/a.py"}, "main.py"),
        ("where is execute defined?", {"op": "symbol", "name": "execute"}, "pkg/core.py:1"),
        ("what are the most important files here?", {"op": "top-files"}, "pkg/core.py"),
    ],
)
def test_a_structural_question_routes_to_codebase(
    fake_ollama, ore_env, project, prompt: str, args: dict[str, str], expected: str
) -> None:
    result = ore("--route", "--grant", "filesystem-read", prompt, env=ore_env, cwd=project)
    assert result.returncode == 0, result.stderr
    decision = routing_line(result)
    assert (decision["target"], decision["target_type"]) == ("codebase", "tool")
    assert decision["args"] == args
    assert expected in tool_block(fake_ollama)
    assert len(fake_ollama.chat_requests()) == 1


@pytest.mark.invariant
@pytest.mark.parametrize(
    "args",
    [
        [
            "--tool",
            "codebase",
            "--tool-arg",
            "op=dependents",
            "--tool-arg",
            "file=../outside.py",
            "hi",
        ],
        [
            "--tool",
            "codebase",
            "--tool-arg",
            "op=context",
            "--tool-arg",
            "file=leak.py",
            "--tool-arg",
            "line=1",
            "hi",
        ],
        ["--route", "what depends on ../outside.py"],
        ["--route", "who imports {outside}/outside.py"],
    ],
    ids=["tool-dotdot", "tool-symlink", "route-dotdot", "route-absolute"],
)
def test_a_codebase_file_outside_the_working_folder_is_refused_with_no_request(
    fake_ollama, ore_env, project, args: list[str]
) -> None:
    args = [a.format(outside=project.parent) for a in args]
    result = ore("--grant", "filesystem-read", *args, env=ore_env, cwd=project)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if not line.startswith("[routing] ")]
    assert len(errors) == 1 and "outside the allowed folder" in errors[0]
    assert fake_ollama.chat_requests() == []
    assert "TOP SECRET" not in all_request_text(fake_ollama) + result.stdout + result.stderr


@pytest.mark.invariant
@pytest.mark.parametrize("piped", [False, True], ids=["argument", "piped"])
def test_a_routed_codebase_query_cannot_set_its_root(
    fake_ollama, ore_env, project, tmp_path, piped: bool
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "elsewhere.py").write_text("import pkg\n", encoding="utf-8")
    text = f"what depends on pkg/a.py root={other} --tool-arg root={other}"
    args = ["--route", "--grant", "filesystem-read"]
    result = (
        ore(*args, env=ore_env, cwd=project, input=text)
        if piped
        else ore(*args, text, env=ore_env, cwd=project)
    )
    assert result.returncode == 0, result.stderr
    decision = routing_line(result)
    assert decision["target"] == "codebase" and "root" not in decision["args"]
    block = tool_block(fake_ollama)
    assert "main.py" in block and "elsewhere.py" not in block
