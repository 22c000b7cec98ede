"""Issue 21, files and contention, through real `ore` processes against the loopback fake:

- an output path naming a descriptor (`/dev/stdout`, `/proc/self/fd/1`) is written through,
  as root too, never replaced by a regular file;
- an artifact keeps an existing file's mode, and a new one is created 0600;
- a fork into a name that exists or that other processes contend for never loses an answer:
  every answer is printed and saved, under the name asked or `NAME-N`, said in one stderr line.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from _cli import ORE, needs_ore, run_ore

from ore.store import FileSessionStore, SessionTaken
from ore.types import Message, Session

pytestmark = needs_ore


def ore(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_ore(*args, env=env, timeout=60)


def session(env: dict[str, str], name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (Path(env["ORE_HOME"]) / "sessions" / f"{name}.json").read_text(encoding="utf-8")
    )
    return data


def users(env: dict[str, str], name: str) -> list[str]:
    return [m["content"] for m in session(env, name)["messages"] if m["role"] == "user"]


# -- descriptors at the output path ------------------------------------------------------------


@pytest.mark.invariant
@pytest.mark.parametrize("dest", ["/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"])
def test_artifact_out_naming_stdout_on_a_file_writes_into_it_and_keeps_the_symlink(
    fake_ollama, ore_env, tmp_path: Path, dest: str
) -> None:
    # As root, /dev is writable: a rename over /dev/stdout replaced the symlink itself.
    before = os.readlink("/dev/stdout")
    out = tmp_path / "out.txt"
    with out.open("wb") as sink:
        result = subprocess.run(
            [ORE or "ore", "hi", "--artifact-out", dest],
            stdout=sink,
            stderr=subprocess.PIPE,
            env=ore_env,
            timeout=60,
        )
    assert result.returncode == 0, result.stderr
    assert os.path.islink("/dev/stdout") and os.readlink("/dev/stdout") == before
    text = out.read_text(encoding="utf-8")
    artifact = json.loads(text[text.index("{") : text.rindex("}") + 1])
    assert artifact["output"]["content"] == "echo: hi"
    assert "echo: hi\n" in text.replace(json.dumps("echo: hi"), "")
    assert [p.name for p in Path("/dev").iterdir() if p.name.endswith(".tmp")] == []


# -- modes -----------------------------------------------------------------------------------


@pytest.mark.invariant
def test_artifact_out_keeps_an_existing_files_mode_and_creates_a_new_one_0600(
    fake_ollama, ore_env, tmp_path: Path
) -> None:
    private = tmp_path / "private.json"
    private.write_text("{}", encoding="utf-8")
    private.chmod(0o600)
    shared = tmp_path / "shared.json"
    shared.write_text("{}", encoding="utf-8")
    shared.chmod(0o644)
    fresh = tmp_path / "fresh.json"
    for path in (private, shared, fresh):
        result = ore("hi", "--artifact-out", str(path), env=ore_env)
        assert result.returncode == 0, result.stderr
        assert json.loads(path.read_text(encoding="utf-8"))["output"]["content"] == "echo: hi"
    modes = [stat.S_IMODE(p.stat().st_mode) for p in (private, shared, fresh)]
    assert modes == [0o600, 0o644, 0o600]


def test_a_saved_session_is_0600(fake_ollama, ore_env) -> None:
    assert ore("--save-session", "s", "hi", env=ore_env).returncode == 0
    path = Path(ore_env["ORE_HOME"]) / "sessions" / "s.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# -- forks into a taken or contested name ------------------------------------------------------


@pytest.mark.invariant
def test_three_concurrent_forks_into_one_name_lose_no_answer(fake_ollama, ore_env) -> None:
    assert ore("--save-session", "a", "root", env=ore_env).returncode == 0
    before = session(ore_env, "a")
    fake_ollama.delay = 0.5  # every process opens its conversation before any saves
    procs = [
        subprocess.Popen(
            [ORE or "ore", "--resume-session", "a", "--save-session", "b", f"q{i}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=ore_env,
            text=True,
        )
        for i in range(3)
    ]
    deadline = time.monotonic() + 60
    results = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise
        results.append((proc.returncode, out, err))
    assert [code for code, _, _ in results] == [0, 0, 0], results
    assert sorted(out for _, out, _ in results) == [f"echo: q{i}\n" for i in range(3)]
    notes = [err.strip() for _, _, err in results if err.strip()]
    assert len(notes) == 2 and all(len(n.splitlines()) == 1 for n in notes), notes
    names = {"b", "b-2", "b-3"}
    saved = sorted(users(ore_env, name)[-1] for name in names)
    assert saved == ["q0", "q1", "q2"]
    assert all(users(ore_env, name)[0] == "root" for name in names)
    for name in ("b-2", "b-3"):
        assert any(f"'{name}'" in n for n in notes), notes
    assert session(ore_env, "a") == before
    assert not (Path(ore_env["ORE_HOME"]) / "sessions" / "b-4.json").exists()


def test_a_repl_forked_into_a_taken_name_goes_on_in_the_new_one(fake_ollama, ore_env) -> None:
    assert ore("--save-session", "a", "root", env=ore_env).returncode == 0
    assert ore("--save-session", "b", "other", env=ore_env).returncode == 0
    before = session(ore_env, "b")
    result = run_ore(
        "--resume-session", "a", "--save-session", "b", env=ore_env, input="x\ny\n", timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "echo: x" in result.stdout and "echo: y" in result.stdout
    assert session(ore_env, "b") == before
    assert users(ore_env, "b-2") == ["root", "x", "y"]
    assert result.stderr.count("'b-2'") == 1


def test_the_store_refuses_appending_to_another_session_and_saves_it_elsewhere(
    tmp_path: Path,
) -> None:
    store = FileSessionStore(tmp_path)
    store.create("b", Session())
    store.create("b-2", Session())
    before = {p.name: p.read_bytes() for p in tmp_path.glob("*.json")}
    mine = Session(messages=(Message(role="user", content="q"),))
    with pytest.raises(SessionTaken):
        store.append("b", mine.messages, session_id=mine.id)
    name, kept = store.save_elsewhere("b", mine)
    assert (name, kept) == ("b-3", mine)
    assert store.load("b-3").messages == mine.messages
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.json") if p.name != "b-3.json"} == (
        before
    )


@pytest.mark.invariant
def test_a_session_file_that_is_a_symbolic_link_is_never_followed(
    fake_ollama, ore_env, tmp_path
) -> None:
    """A link planted in the sessions folder would send a file from elsewhere to the model, and a
    save would replace the link with a file: every use of it is one line, exit 1, no model
    call, and the link and its target are left as they were."""
    assert run_ore("--save-session", "real", "first", env=ore_env).returncode == 0
    sessions = Path(ore_env["ORE_HOME"]) / "sessions"
    elsewhere = tmp_path / "elsewhere.json"
    (sessions / "real.json").rename(elsewhere)
    before = elsewhere.read_bytes()
    (sessions / "lnk.json").symlink_to(elsewhere)
    asked = len(fake_ollama.requests)
    for args in (
        ("session", "show", "lnk"),
        ("--resume-session", "lnk", "hi"),
        ("--save-session", "lnk", "hi"),
    ):
        used = run_ore(*args, env=ore_env)
        assert used.returncode == 1 and used.stdout == "", args
        lines = used.stderr.strip().splitlines()
        assert len(lines) == 1 and "symbolic link" in lines[0], used.stderr
    assert len(fake_ollama.requests) == asked
    assert (sessions / "lnk.json").is_symlink() and elsewhere.read_bytes() == before
