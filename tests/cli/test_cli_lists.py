"""Every listing through one layer (`ore.cli.tables`): an aligned table with a header at a
terminal, header-free escaped TSV in a pipe, a JSON array with --json; one session listing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _cli import needs_ore, run_in_pty, run_ore

pytestmark = needs_ore

LISTINGS = {
    "--list-tools": ("Name", "Permissions", "Description"),
    "--list-skills": ("Name", "Description"),
    "--list-models": ("Name", "Default"),
    "--list-sessions": ("Name", "Turns", "Model", "Last used", "First prompt"),
}


def terminal(env: dict[str, str]) -> dict[str, str]:
    return {**{k: v for k, v in env.items() if k != "NO_COLOR"}, "TERM": "xterm-256color"}


def plain(shown: bytes) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode("utf-8", errors="replace"))


@pytest.fixture
def saved(ore_env) -> str:
    assert run_ore("--save-session", "work", "first\tquestion", env=ore_env).returncode == 0
    return "work"


@pytest.mark.parametrize("flag", list(LISTINGS))
def test_a_listing_at_a_terminal_is_a_table_with_a_header(saved, ore_env, flag) -> None:
    text = plain(run_in_pty([flag], terminal(ore_env), columns=120))
    header = text.splitlines()[0].split()
    assert " ".join(header) == " ".join(LISTINGS[flag]), text
    assert "\t" not in text and all(len(line) <= 120 for line in text.splitlines())


@pytest.mark.parametrize("flag", list(LISTINGS))
def test_a_listing_in_a_pipe_is_header_free_tsv_with_fixed_columns(saved, ore_env, flag) -> None:
    result = run_ore(flag, env=ore_env)
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows and {len(r) for r in rows} == {len(LISTINGS[flag])}
    assert rows[0][0] != "Name"


@pytest.mark.parametrize("flag", list(LISTINGS))
def test_json_on_each_listing_is_one_array_on_one_line(saved, ore_env, flag) -> None:
    result = run_ore(flag, "--json", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 1
    data = json.loads(result.stdout)
    assert isinstance(data, list) and data and all("name" in d for d in data)


def test_tsv_cells_escape_tabs_and_line_breaks(saved, ore_env) -> None:
    result = run_ore("session", "list", env=ore_env)
    assert result.stdout.splitlines()[0].split("\t")[4] == "first question"  # one-lined
    folder = Path(ore_env["ORE_HOME"]) / "skills" / "tabbed"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        '---\nname: tabbed\ndescription: "a\\tb \\\\ c"\n---\nbody\n', encoding="utf-8"
    )
    rows = run_ore("--list-skills", env=ore_env).stdout.splitlines()
    assert "tabbed\ta\\tb \\\\ c" in rows or "tabbed\ta b \\\\ c" in rows


def test_list_sessions_shows_what_session_list_shows(saved, ore_env) -> None:
    assert (
        run_ore("--list-sessions", env=ore_env).stdout
        == run_ore("session", "list", env=ore_env).stdout
    )
    assert json.loads(run_ore("--list-sessions", "--json", env=ore_env).stdout) == json.loads(
        run_ore("session", "list", "--json", env=ore_env).stdout
    )


def test_an_empty_listing_says_so_on_stderr_only(ore_env) -> None:
    result = run_ore("--list-sessions", env=ore_env)
    assert result.returncode == 0 and result.stdout == "" and "--save-session" in result.stderr
    assert run_ore("--list-sessions", "--json", env=ore_env).stdout.strip() == "[]"
