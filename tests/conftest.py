"""Shared fixtures: a loopback Ollama imitation, and an environment that keeps ORE off the
user's real home directory and off any real Ollama server."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_ollama import FakeOllama

FIXTURE_MODELS = ["llama3.2:latest", "qwen2.5:0.5b"]


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
