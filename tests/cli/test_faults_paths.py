"""An OS error at one of ORE's own folders is one line naming the path and the fix (issue 26,
item 4), and a skills folder that cannot be read never stops a bundled skill, a listing or
routing: the bundled skills are still there. Through the real command.

Tests may run as root, where mode 000 denies nothing: a symlink loop and a file standing where
a folder belongs give the same kind of error everywhere; the permission case is skipped there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _cli import needs_ore, one_line_error, run_ore

pytestmark = needs_ore

BUNDLED = "review-diff"


def _loop(path: Path) -> str:
    path.symlink_to(path.name)  # a link to itself: ELOOP for anything below it
    return "symbolic link"


def _file(path: Path) -> str:
    path.write_text("not a folder\n", encoding="utf-8")
    return "a file stands where a folder belongs"


def _denied(path: Path) -> str:
    if os.geteuid() == 0:
        pytest.skip("running as root: mode 000 denies nothing (the loop and file cases cover it)")
    path.mkdir()
    path.chmod(0)
    return "give your user access"


BROKEN = [
    pytest.param(_loop, id="symlink-loop"),
    pytest.param(_file, id="file-in-its-place"),
    pytest.param(_denied, id="mode-000"),
]


@pytest.fixture
def broken_skills(request, ore_env):
    """`$ORE_HOME/skills` made unusable by `request.param`; the fix the line should give."""
    skills = Path(ore_env["ORE_HOME"]) / "skills"
    fix = request.param(skills)
    yield skills, fix
    if skills.is_dir() and not skills.is_symlink():
        skills.chmod(0o700)


def _one_warning(stderr: str, path: Path, fix: str) -> None:
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if str(path) in line]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("Warning: cannot read the skills folder") and fix in lines[0]


@pytest.mark.invariant
@pytest.mark.parametrize("broken_skills", BROKEN, indirect=True)
def test_an_unreadable_skills_folder_is_one_line_and_the_bundled_skills_stay(
    fake_ollama, ore_env, broken_skills
) -> None:
    skills, fix = broken_skills
    listed = run_ore("--list-skills", env=ore_env)
    assert listed.returncode == 0
    assert BUNDLED in listed.stdout
    _one_warning(listed.stderr, skills, fix)

    used = run_ore("--skill", BUNDLED, "hi", env=ore_env)
    assert used.returncode == 0, used.stderr
    assert used.stdout == "echo: hi\n"
    assert "Traceback" not in used.stderr

    routed = run_ore("--route", "-v", "review this diff", env=ore_env)
    assert routed.returncode == 0, routed.stderr
    assert f'"target": "{BUNDLED}"' in routed.stderr
    _one_warning(routed.stderr, skills, fix)


@pytest.mark.parametrize("broken_skills", BROKEN, indirect=True)
def test_an_unknown_skill_names_the_folder_that_could_not_be_read(
    fake_ollama, ore_env, broken_skills
) -> None:
    skills, fix = broken_skills
    result = run_ore("--skill", "mine", "hi", env=ore_env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert "'mine'" in line and str(skills) in line and fix in line
    assert fake_ollama.chat_requests() == []


def test_a_skill_folder_that_is_a_symlink_loop_is_skipped_with_one_line(ore_env) -> None:
    skills = Path(ore_env["ORE_HOME"]) / "skills"
    skills.mkdir()
    _loop(skills / "mine")
    result = run_ore("--list-skills", env=ore_env)
    assert result.returncode == 0 and BUNDLED in result.stdout
    warned = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(warned) == 1 and "Traceback" not in result.stderr
    assert str(skills / "mine") in warned[0] and "symbolic link" in warned[0]


@pytest.mark.parametrize("make", [_loop, _file], ids=["symlink-loop", "file-in-its-place"])
def test_a_home_that_cannot_be_read_still_runs_a_bundled_skill(
    fake_ollama, ore_env, tmp_path, make
) -> None:
    home = tmp_path / "home"
    make(home)
    env = {**ore_env, "ORE_HOME": str(home)}
    listed = run_ore("--list-skills", env=env)
    assert listed.returncode == 0 and BUNDLED in listed.stdout
    _one_warning(listed.stderr, home / "skills", "")
    for flags in (("--no-config",), ()):  # the config file cannot even be looked for
        used = run_ore(*flags, "--skill", BUNDLED, "hi", env=env)
        assert used.returncode == 0, used.stderr
        assert used.stdout == "echo: hi\n" and "Traceback" not in used.stderr
        if not flags:
            (warned,) = [line for line in used.stderr.splitlines() if "config file" in line]
            assert warned.startswith("Warning: cannot read ORE's home") and str(home) in warned


@pytest.mark.parametrize("make", [_loop, _file], ids=["symlink-loop", "file-in-its-place"])
def test_a_home_that_cannot_be_read_still_runs_a_plain_turn(
    fake_ollama, ore_env, tmp_path, make
) -> None:
    home = tmp_path / "home"
    make(home)
    for flags, without in (((), "the config file and the turn log"), (("--no-log",), "")):
        used = run_ore(*flags, "hi", env={**ore_env, "ORE_HOME": str(home)})
        assert used.returncode == 0, used.stderr
        assert used.stdout == "echo: hi\n" and "Traceback" not in used.stderr
        # One line for the one cause: the config file and the log both live there.
        (said,) = used.stderr.splitlines()
        assert said.startswith("Warning: cannot read ORE's home") and str(home) in said
        assert said.endswith(f"going on without {without or 'the config file'}")
