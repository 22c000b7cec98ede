"""Keeping a turn, through real `ore` processes against the loopback fake (issues 26.1, 22, 23):

- once the model has answered, the answer reaches stdout (or the `--json` object) whatever
  fails after it: a session or an artifact on a full filesystem, a file past the size limit;
  the failure is one stderr line saying what was and was not kept, exit 1;
- a `--schema` answer that does not match is printed as it came, exit 1, one line;
- `--json` is one line in a pipe (JSON Lines from a loop), indented at a terminal;
- a session file appears with its first turn: a failed turn leaves none, and an empty one
  an older ORE left is hidden from listings and from `--continue`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import ORE, needs_ore, run_in_pty, run_ore

pytestmark = needs_ore

ANSWER = "echo: hi"  # what the fake answers to "hi"


def _limited(
    args: list[str], env: dict[str, str], max_file_bytes: int, lines: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`ore ARGS` whose every file stops growing at `max_file_bytes` (RLIMIT_FSIZE: a write past
    it fails with EFBIG, as a full disk fails with ENOSPC)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    return subprocess.run(
        [ORE or "ore", *args],
        capture_output=True,
        text=True,
        env=env,
        input=lines,
        stdin=subprocess.DEVNULL if lines is None else None,
        preexec_fn=limit,
        timeout=60,
    )


@contextlib.contextmanager
def _full_tmpfs(where: Path) -> Iterator[Path]:
    """A small tmpfs at `where`, filled to the last byte; skips when it cannot be mounted."""
    where.mkdir()
    mount = shutil.which("mount")
    made = (
        mount is not None
        and subprocess.run(
            [mount, "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(where)],
            capture_output=True,
        ).returncode
        == 0
    )
    if not made:
        pytest.skip("cannot mount a tmpfs here (not root, or no mount namespace)")
    try:
        (where / "sessions").mkdir(mode=0o700)  # ORE's folders exist; their files cannot grow
        with contextlib.suppress(OSError), open(where / "filler", "wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
        with pytest.raises(OSError) as full:
            (where / "probe").write_bytes(b"\0" * 4096)
        assert full.value.errno == errno.ENOSPC
        yield where
    finally:
        subprocess.run(["umount", str(where)], capture_output=True)


def _error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one `Error:` line (the turn log may add its own warning), and no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def _shown(result: subprocess.CompletedProcess[str], as_json: bool) -> str:
    return json.loads(result.stdout)["content"] if as_json else result.stdout


@pytest.mark.invariant
@pytest.mark.parametrize("as_json", [False, True], ids=["pipe", "json"])
@pytest.mark.parametrize(
    "where",
    [
        "artifact on /dev/full",
        "artifact past the file size limit",
        "artifact folder on a full tmpfs",
        "home on a full tmpfs",
    ],
)
def test_an_answer_is_never_lost_to_a_failure_after_it(
    ore_env: dict[str, str], tmp_path: Path, where: str, as_json: bool
) -> None:
    flags = ["--json"] if as_json else []
    if where == "artifact on /dev/full":
        result = run_ore(*flags, "--artifact-out", "/dev/full", "hi", env=ore_env)
        lost = "the artifact is not written"
    elif where == "artifact past the file size limit":
        args = [*flags, "--artifact-out", str(tmp_path / "a.json"), "hi"]
        result = _limited(args, ore_env, 300)
        lost = "the artifact is not written"
    elif where == "artifact folder on a full tmpfs":
        with _full_tmpfs(tmp_path / "small") as folder:
            result = run_ore(*flags, "--artifact-out", str(folder / "a.json"), "hi", env=ore_env)
            assert not (folder / "a.json").exists()
        lost = "the artifact is not written"
    else:
        with _full_tmpfs(tmp_path / "small") as home:
            env = {**ore_env, "ORE_HOME": str(home)}
            result = run_ore(*flags, "--save-session", "work", "hi", env=env)
            assert not (home / "sessions" / "work.json").exists()
        lost = "the turn is not saved in session 'work'"
    assert result.returncode == 1, result.stderr
    assert _shown(result, as_json) == (ANSWER if as_json else ANSWER + "\n")
    assert lost in _error_line(result)


@pytest.mark.invariant
def test_a_saved_turn_and_a_failed_artifact_print_the_answer_and_say_the_turn_is_saved(
    ore_env: dict[str, str], tmp_path: Path
) -> None:
    result = run_ore("--save-session", "work", "--artifact-out", "/dev/full", "hi", env=ore_env)
    assert result.returncode == 1 and result.stdout == ANSWER + "\n"
    line = _error_line(result)
    assert "the artifact is not written" in line and "the turn is saved in session 'work'" in line
    saved = json.loads((tmp_path / "sessions" / "work.json").read_text(encoding="utf-8"))
    assert [m["content"] for m in saved["messages"]] == ["hi", ANSWER]


def test_a_session_past_the_file_size_limit_keeps_the_answer_and_the_artifact(
    ore_env: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "a.json"
    first = run_ore("--save-session", "work", "hi", env=ore_env)
    assert first.returncode == 0, first.stderr
    size = (tmp_path / "sessions" / "work.json").stat().st_size
    # Room for the artifact, none for the session to grow by another turn.
    result = _limited(
        ["--resume-session", "work", "--artifact-out", str(path), "hi"], ore_env, size + 40
    )
    assert result.returncode == 1 and result.stdout == ANSWER + "\n"
    line = _error_line(result)
    assert "the turn is not saved in session 'work'" in line
    saved = json.loads((tmp_path / "sessions" / "work.json").read_text(encoding="utf-8"))
    assert len(saved["messages"]) == 2  # the session as it was: whole, never half a turn


def test_a_repl_turn_not_saved_is_shown_then_one_line(ore_env: dict[str, str]) -> None:
    result = _limited(["--save-session", "work"], ore_env, 200, lines="hi\nagain\n")
    assert result.returncode == 1 and result.stdout == ANSWER + "\n"  # a pipe stops there
    assert "the turn is not saved in session 'work'" in _error_line(result)


def test_an_answer_that_does_not_match_the_schema_is_printed_as_it_came(
    fake_ollama, ore_env: dict[str, str]
) -> None:
    fake_ollama.reply = '{"name": "Ann", "age": "forty"}'
    result = run_ore("--schema", "name, age int", "x", env=ore_env)
    assert result.returncode == 1 and result.stdout == fake_ollama.reply + "\n"
    line = _error_line(result)
    assert "$.age" in line and "the answer is on stdout as it came" in line
    assert "--json" not in line and "artifact" not in line  # nothing said that was not asked


def test_json_is_one_line_in_a_pipe_so_a_loop_makes_json_lines(ore_env: dict[str, str]) -> None:
    for args in (
        ["--json", "hi"],
        ["--dry-run", "--model", "m", "hi"],
        ["session", "list", "--json"],
    ):
        result = run_ore(*args, env=ore_env)
        assert result.returncode == 0, result.stderr
        assert result.stdout.count("\n") == 1 and json.loads(result.stdout) is not None, args


def test_json_is_indented_at_a_terminal(ore_env: dict[str, str]) -> None:
    shown = run_in_pty(["--json", "hi"], ore_env).decode()
    assert '\n  "content": "echo: hi",\n' in shown


@pytest.mark.invariant
def test_a_failed_turn_leaves_no_session_file(
    fake_ollama, ore_env: dict[str, str], tmp_path: Path
) -> None:
    fake_ollama.reply = "   "  # an empty answer: nothing is kept
    result = run_ore("--save-session", "work", "hi", env=ore_env)
    assert result.returncode == 1
    assert not (tmp_path / "sessions" / "work.json").exists()
    listed = run_ore("session", "list", env=ore_env)
    assert listed.returncode == 0 and listed.stdout == ""


def test_an_empty_session_an_older_ore_left_is_hidden_and_never_continued(
    ore_env: dict[str, str], tmp_path: Path
) -> None:
    assert run_ore("--save-session", "real", "hi", env=ore_env).returncode == 0
    empty = tmp_path / "sessions" / "empty.json"
    empty.write_text('{"id": "e", "created_at": 1.0, "messages": []}\n', encoding="utf-8")
    os.utime(empty)  # written last
    for args in (["session", "list"], ["--list-sessions"]):
        result = run_ore(*args, env=ore_env)
        assert result.returncode == 0 and "real" in result.stdout, args
        assert "empty" not in result.stdout, args
    again = run_ore("--continue", "hi", env=ore_env)
    assert again.returncode == 0, again.stderr
    real = json.loads((tmp_path / "sessions" / "real.json").read_text(encoding="utf-8"))
    assert len(real["messages"]) == 4 and empty.read_text(encoding="utf-8").count("[]") == 1
