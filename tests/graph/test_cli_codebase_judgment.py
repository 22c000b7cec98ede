"""Acceptance, through the installed `ore` and the loopback Ollama imitation: a routed review
question about piped code makes ONE chat request whose `[Tool:codebase]` block holds the
judgment's answer (`git diff | ore --route --grant filesystem-read "does this duplicate existing
code?"` names the planted original), and hostile input is one line with no request at all."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from _cli import needs_ore, one_line_error, run_ore
from test_graph_duplicates import ORIGINAL
from test_graph_judgment import BAD, HOUSE

pytestmark = needs_ore
GRANT = ("--grant", "filesystem-read")

# The planted original's copy, every name changed: what a diff would add.
COPY = (
    ORIGINAL.replace("summarize_orders", "tally_invoices")
    .replace("orders", "invoices")
    .replace("order", "inv")
    .replace("currency", "unit")
    .replace("total", "acc")
    .replace("count", "seen")
)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git work tree: the original in shop/orders.py, committed; then a renamed copy appended
    to billing/invoices.py, not committed (what `git diff` shows)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    (root / "shop").mkdir(parents=True)
    (root / "billing").mkdir()
    (root / "shop" / "orders.py").write_text("import json\n\n\n" + ORIGINAL, encoding="utf-8")
    greet = 'def greet(name):\n    return "hello " + name\n'
    (root / "billing" / "invoices.py").write_text(greet, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    (root / "billing" / "invoices.py").write_text(greet + "\n\n" + COPY, encoding="utf-8")
    return root


def the_request(fake_ollama) -> list[dict[str, str]]:
    requests = fake_ollama.chat_requests()
    assert len(requests) == 1
    return requests[0]["messages"]


def tool_block(fake_ollama) -> str:
    messages = the_request(fake_ollama)
    # one message shape: the tool's block heads the turn's one user message, before the prompt
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"].startswith("[Tool:codebase]\n")
    return messages[1]["content"].partition("\n[/Tool:codebase]")[0]


def routing(result: subprocess.CompletedProcess[str]) -> dict[str, object]:
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("[routing] ")]
    return json.loads(line.removeprefix("[routing] "))  # type: ignore[no-any-return]


@pytest.mark.invariant
def test_a_routed_duplicate_question_names_the_planted_original(
    fake_ollama, ore_env, repo: Path
) -> None:
    diff = git(repo, "diff")
    assert "+def tally_invoices(invoices, unit):" in diff
    prompt = "does this duplicate existing code?"
    result = run_ore("--route", *GRANT, prompt, input=diff, env=ore_env, cwd=repo)
    assert result.returncode == 0, result.stderr
    decision = routing(result)
    assert (decision["target"], decision["args"]) == ("codebase", {"op": "duplicates"})
    block = tool_block(fake_ollama)
    header, first = block.splitlines()[1], block.splitlines()[4]
    assert header.startswith("Query: duplicates snippet=<") and "def tally" not in header
    assert first.split()[1:] == ["renamed", "shop/orders.py:4-14", "summarize_orders"]
    assert "billing/invoices.py" not in block  # the diff's own lines are not its duplicate
    user = the_request(fake_ollama)[1]["content"].partition("[/Tool:codebase]\n\n")[2]
    assert user.startswith(prompt + "\n\ndiff --git") and "+def tally_invoices" in user


def test_an_explicit_codebase_op_takes_piped_code_or_a_tool_arg(
    fake_ollama, ore_env, repo: Path
) -> None:
    args = ("--tool", "codebase", "--tool-arg", "op=duplicates", *GRANT, "where else is this?")
    piped = run_ore(*args, input=COPY, env=ore_env, cwd=repo)
    assert piped.returncode == 0, piped.stderr
    block = tool_block(fake_ollama)
    assert "shop/orders.py:4-14" in block and "summarize_orders" in block
    fake_ollama.clear_requests()
    given = run_ore(
        "--tool",
        "codebase",
        "--tool-arg",
        "op=similar",
        "--tool-arg",
        "name=summarize_invoices",
        *GRANT,
        "anything like it?",
        env=ore_env,
        cwd=repo,
        input=COPY,
    )
    assert given.returncode == 0, given.stderr
    assert "Query: similar name=summarize_invoices\n" in tool_block(fake_ollama)


def test_routed_convention_placement_and_consistency_questions(
    fake_ollama, ore_env, tmp_path: Path
) -> None:
    house = tmp_path / "house"
    for rel, text in HOUSE.items():
        (house / rel).parent.mkdir(parents=True, exist_ok=True)
        (house / rel).write_text(text, encoding="utf-8")
    cases = [
        ("what is the convention for error handling?", None, "errors (", "raise"),
        (
            "where should I put code that computes the tax of an invoice?",
            None,
            "terms:",
            "app/billing/tax.py",
        ),
        ("is this consistent with app?", BAD, "deviation", "`getUser` is camelCase"),
    ]
    for prompt, piped, start, needle in cases:
        fake_ollama.clear_requests()
        result = run_ore("--route", *GRANT, prompt, input=piped or b"", env=ore_env, cwd=house)
        assert result.returncode == 0, result.stderr
        block = tool_block(fake_ollama)
        assert block.splitlines()[2].startswith(start), block
        assert needle in block


@pytest.mark.invariant
@pytest.mark.parametrize(
    ("piped", "message"),
    [
        ("def broken(:\n    pass\n", "does not parse as python"),
        ("", "needs the code to compare"),
        ("x = 1\n" * 200_000, "limit is 1 MB"),
        ("\x00\x01 binary", "binary"),
    ],
    ids=["no-parse", "nothing-piped", "too-large", "binary"],
)
def test_hostile_piped_code_is_one_line_and_no_request(
    fake_ollama, ore_env, repo: Path, piped: str, message: str
) -> None:
    result = run_ore(
        "--route",
        *GRANT,
        "is this consistent with the codebase?",
        input=piped,
        env=ore_env,
        cwd=repo,
    )
    assert result.returncode == 1
    line = [x for x in result.stderr.splitlines() if not x.startswith("[routing] ")]
    assert len(line) == 1 and line[0].startswith("Error: tool 'codebase': op 'consistent'")
    assert message in line[0]
    assert fake_ollama.chat_requests() == []


def test_an_empty_repository_is_one_line(fake_ollama, ore_env, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_ore(
        "--tool",
        "codebase",
        "--tool-arg",
        "op=consistent",
        *GRANT,
        "q",
        input=BAD,
        env=ore_env,
        cwd=empty,
    )
    assert "no source files are indexed" in one_line_error(result)
    assert fake_ollama.chat_requests() == []


def test_the_graph_commands_through_the_installed_ore(ore_env, repo: Path) -> None:
    diff = git(repo, "diff")
    result = run_ore(
        "graph", "duplicates", "--snippet", "-", "--json", input=diff, env=ore_env, cwd=repo
    )
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert (rows[0]["path"], rows[0]["name"], rows[0]["kind"]) == (
        "shop/orders.py",
        "summarize_orders",
        "renamed",
    )
    big = run_ore(
        "graph", "similar", "--snippet", "-", input=b"x" * (50 << 20), env=ore_env, cwd=repo
    )
    assert "over 8 MiB" in one_line_error(big) and big.returncode == 1 and big.stdout == ""
