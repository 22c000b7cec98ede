"""Where ORE keeps its files: one place to ask, so every module agrees."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ore_home"]


def ore_home() -> Path:
    """ORE's home directory: `$ORE_HOME` when set and not empty, else `~/.ore` (`~` expanded).

    Only computes the path; nothing is created here. Callers create what they write.
    """
    return Path(os.environ.get("ORE_HOME") or "~/.ore").expanduser()
