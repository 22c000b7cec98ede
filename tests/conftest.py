"""Shared fixtures: a loopback Ollama imitation, and an environment that keeps ORE off the
user's real home directory and off any real Ollama server. Also the progress line printed in
place of pytest's dots (tests/_progress.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _progress
import pytest
from fake_ollama import FakeOllama

FIXTURE_MODELS = ["llama3.2:latest", "qwen2.5:0.5b"]


def pytest_configure(config: pytest.Config) -> None:
    if _progress.wanted(config):
        config.pluginmanager.register(_progress.Progress(config), _progress.NAME)


@pytest.fixture(autouse=True)
def _recursion_limit() -> Iterator[None]:
    """Each test starts with the interpreter's recursion limit, whatever a test before it on
    the same worker ran (mypy's API, for one, raises it for good): tests that build trees
    deeper than the limit read it to choose their depth."""
    limit = sys.getrecursionlimit()
    yield
    sys.setrecursionlimit(limit)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process tests read and write under tmp_path, never the real ~ or ~/.ore."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ORE_HOME", str(tmp_path))


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    """A running FakeOllama with llama3.2:latest and qwen2.5:0.5b installed."""
    with FakeOllama(models=list(FIXTURE_MODELS)) as srv:
        yield srv


@pytest.fixture
def ore_env(tmp_path: Path, fake_ollama: FakeOllama) -> dict[str, str]:
    """The environment for an `ore` subprocess: HOME and ORE_HOME at tmp_path, OLLAMA_HOST at
    the fake server, NO_COLOR=1, the venv's bin first on PATH, and no ORE_* / OLLAMA_* settings
    leaking in from the caller's shell."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORE_", "OLLAMA_"))}
    env.update(
        HOME=str(tmp_path),
        ORE_HOME=str(tmp_path),
        OLLAMA_HOST=fake_ollama.host,
        NO_COLOR="1",
        PATH=os.pathsep.join([str(Path(sys.prefix) / "bin"), env.get("PATH", "")]),
    )
    return env


class Wire:
    """One loopback server of either kind, seen the same way by a test: its environment for
    `ore`, the chat request bodies it got, and the knobs for its next answers."""

    def __init__(self, name: str, fake: Any, env: dict[str, str]) -> None:
        self.name = name
        self.fake = fake
        self.env = env

    def chat_requests(self) -> list[dict[str, Any]]:
        return list(self.fake.chat_requests())

    def answer(self, text: str | None) -> None:
        """The text of the next answers (None: the fake's echo of the last user message)."""
        self.fake.reply = text

    def finish(self, reason: str) -> None:
        """`done_reason` (Ollama) or `finish_reason` (OpenAI) of the next answers."""
        if self.name == "ollama":
            self.fake.done_reason = reason
        else:
            self.fake.finish_reason = reason


@pytest.fixture(params=["ollama", "openai"])
def wire(
    request: pytest.FixtureRequest, fake_ollama: FakeOllama, ore_env: dict[str, str]
) -> Iterator[Wire]:
    """Each test runs against the loopback Ollama, then against the loopback OpenAI server."""
    if request.param == "ollama":
        yield Wire("ollama", fake_ollama, ore_env)
        return
    from fake_openai import FakeOpenAI

    with FakeOpenAI() as srv:
        yield Wire("openai", srv, {**ore_env, "ORE_BACKEND": "openai", "ORE_BASE_URL": srv.url})
