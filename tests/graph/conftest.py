"""What every graph test shares: its own ORE_HOME below tmp_path, so the cache and shapes files
never land in a tree a test indexes at tmp_path's top (`_trees.write_tree` writes such trees)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "orehome"))
