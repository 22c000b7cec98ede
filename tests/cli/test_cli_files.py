"""-f/--file through real processes: each file a named, sized block in the turn's user
message; refused before any request when not a regular text file; recorded in the artifact
(name, size, sha256) and a replay refused when the file changed."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests._cli import one_line_error, run_ore, usage_error


def _user_message(fake_ollama) -> str:
    return fake_ollama.chat_requests()[-1]["messages"][-1]["content"]


def test_each_file_is_a_named_sized_block_before_the_prompt(ore_env, fake_ollama, tmp_path) -> None:
    a = tmp_path / "a.txt"
    a.write_text("alpha\n", encoding="utf-8")
    b = tmp_path / "b.py"
    b.write_text("print('b')", encoding="utf-8")
    result = run_ore("-f", str(a), "--file", str(b), "compare", env=ore_env)
    assert result.returncode == 0, result.stderr
    assert _user_message(fake_ollama) == (
        f"[File:{a} (6 bytes)]\nalpha\n[/File:{a} (6 bytes)]\n\n"
        f"[File:{b} (10 bytes)]\nprint('b')\n[/File:{b} (10 bytes)]\n\ncompare"
    )
    # Turn-scoped like a tool's output: a saved session keeps only the user's words.
    saved = run_ore("-f", str(a), "--save-session", "s", "q", env=ore_env)
    assert saved.returncode == 0, saved.stderr
    session = json.loads((Path(ore_env["ORE_HOME"]) / "sessions" / "s.json").read_text())
    assert session["messages"][0]["content"] == "q"


def test_dash_reads_the_file_from_stdin_and_not_the_prompt(ore_env, fake_ollama) -> None:
    result = run_ore("-f", "-", "summarize", env=ore_env, input="piped text\n")
    assert result.returncode == 0, result.stderr
    assert _user_message(fake_ollama) == (
        "[File:stdin (11 bytes)]\npiped text\n[/File:stdin (11 bytes)]\n\nsummarize"
    )


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (
            lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 20),
            "it is an image; attach it with -a",
        ),
        (lambda p: p.write_bytes(b"\xff\xfe\x00bad"), "not UTF-8 text"),
        (lambda p: p.write_bytes(b"text\0more"), "binary"),
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: os.mkfifo(p), "not a regular file (a FIFO)"),
        (lambda p: None, "no such file"),
        (lambda p: p.write_bytes(b"x" * (4 * 1024 * 1024 + 1)), "larger than 4 MiB"),
    ],
    ids=["image", "not-utf8", "nul", "folder", "fifo", "missing", "too-large"],
)
def test_what_is_not_a_text_file_is_one_line_before_any_request(
    ore_env, fake_ollama, tmp_path, make, words
) -> None:
    path = tmp_path / "f"
    make(path)
    result = run_ore("-f", str(path), "--save-session", "never", "q", env=ore_env, timeout=10)
    assert result.returncode == 1
    line = one_line_error(result)
    assert words in line and str(path) in line, line
    assert fake_ollama.chat_requests() == []
    assert not (Path(ore_env["ORE_HOME"]) / "sessions" / "never.json").exists()


def test_the_artifact_records_each_file_and_a_replay_refuses_a_changed_one(
    ore_env, fake_ollama, tmp_path
) -> None:
    """Issue 22: a replay is refused when a file named by -f is still there and changed since
    (the user may mean its new text); the advice given, a chain with -f, works."""
    notes = tmp_path / "notes.md"
    notes.write_text("# notes\n", encoding="utf-8")
    artifact = tmp_path / "run.json"
    made = run_ore("-f", str(notes), "q", "--artifact-out", str(artifact), env=ore_env)
    assert made.returncode == 0, made.stderr
    data = json.loads(artifact.read_text(encoding="utf-8"))
    digest = hashlib.sha256(b"# notes\n").hexdigest()
    assert data["input"]["files"] == [{"name": str(notes), "size": 8, "sha256": digest}]
    assert "# notes" in data["input"]["messages"][-1]["content"]
    again = run_ore("--artifact-in", str(artifact), env=ore_env)
    assert again.returncode == 0, again.stderr
    fake_ollama.clear_requests()
    notes.write_text("# notes, edited\n", encoding="utf-8")
    refused = run_ore("--artifact-in", str(artifact), env=ore_env)
    assert refused.returncode == 1
    line = one_line_error(refused)
    assert "'" + str(notes) + "' changed since the artifact was recorded" in line
    assert "chain from the artifact with a new prompt and -f" in line
    assert fake_ollama.chat_requests() == []
    chained = run_ore("--artifact-in", str(artifact), "-f", str(notes), "again", env=ore_env)
    assert chained.returncode == 0, chained.stderr
    assert "# notes, edited" in fake_ollama.chat_requests()[-1]["messages"][-1]["content"]


@pytest.mark.parametrize("now", ["a folder", "a FIFO", "binary", "too large"])
def test_a_replay_whose_file_is_now_no_text_file_says_it_changed_not_how_to_send_it(
    ore_env, fake_ollama, tmp_path, now: str
) -> None:
    """A replay reads a recorded -f file again only to compare it: one that became a folder, a
    FIFO (never waited on), binary or too large is refused as changed, and the line does not
    speak of sending it with -f, which the replay was not given."""
    notes = tmp_path / "notes.md"
    notes.write_text("# notes\n", encoding="utf-8")
    artifact = tmp_path / "run.json"
    made = run_ore("-f", str(notes), "q", "--artifact-out", str(artifact), env=ore_env)
    assert made.returncode == 0, made.stderr
    notes.unlink()
    if now == "a folder":
        notes.mkdir()
    elif now == "a FIFO":
        os.mkfifo(notes)
    else:
        notes.write_bytes(b"a\0b" if now == "binary" else b"a" * (5 << 20))
    fake_ollama.clear_requests()
    refused = run_ore("--artifact-in", str(artifact), env=ore_env, timeout=30)
    assert refused.returncode == 1
    line = one_line_error(refused)
    assert f"'{notes}' changed since the artifact was recorded" in line
    assert "cannot send" not in line and "chain from the artifact with a new prompt and -f" in line
    assert fake_ollama.chat_requests() == []


def test_a_replay_sends_the_recorded_text_of_a_file_no_longer_there(
    ore_env, fake_ollama, tmp_path
) -> None:
    """The recorded messages hold each file's text: from another folder (a relative name that
    no longer resolves), or after the file is gone, the replay sends it as it was."""
    (tmp_path / "here").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "here" / "ctx.md").write_text("# ctx\n", encoding="utf-8")
    artifact = tmp_path / "run.json"
    made = run_ore(
        "-f", "ctx.md", "q", "--artifact-out", str(artifact), env=ore_env, cwd=tmp_path / "here"
    )
    assert made.returncode == 0, made.stderr
    recorded = json.loads(artifact.read_text(encoding="utf-8"))["input"]["messages"][-1]
    fake_ollama.clear_requests()
    replayed = run_ore("--artifact-in", str(artifact), env=ore_env, cwd=tmp_path / "elsewhere")
    assert replayed.returncode == 0, replayed.stderr
    (sent,) = fake_ollama.chat_requests()
    assert sent["messages"][-1]["content"] == recorded["content"]


@pytest.mark.parametrize(
    ("mode", "words"),
    [(["-c"], "-f sends files with one new turn"), (["--artifact-in", "a.json"], "to chain")],
    ids=["repl", "replay"],
)
def test_f_where_it_cannot_apply_is_a_usage_error_not_ignored(
    ore_env, tmp_path, mode, words
) -> None:
    text = tmp_path / "t.txt"
    text.write_text("x", encoding="utf-8")
    line = usage_error(run_ore("-f", str(text), *mode, env=ore_env, cwd=tmp_path))
    assert words in line, line


def test_a_file_name_that_is_not_utf8_is_sent_logged_and_recorded(
    ore_env, fake_ollama, tmp_path
) -> None:
    odd = tmp_path / os.fsdecode(b"n\xffame.txt")  # a name the OS keeps as bytes
    odd.write_bytes(b"hello\n")
    artifact = tmp_path / "run.json"
    made = run_ore("-f", str(odd), "q", "--artifact-out", str(artifact), env=ore_env)
    assert made.returncode == 0 and made.stderr == "", made.stderr  # logged: no warning
    shown = str(odd).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    assert f"[File:{shown} (6 bytes)]" in _user_message(fake_ollama)
    data = json.loads(artifact.read_text(encoding="utf-8"))
    assert data["input"]["files"][0]["name"] == shown
    listed = run_ore("log", "list", "--json", env=ore_env)
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 1, listed.stderr
