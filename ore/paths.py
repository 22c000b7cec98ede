"""Where ORE keeps its files: one place to ask, so every module agrees."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home_folder", "ore_home"]


def home_folder() -> str:
    """ORE's home directory as text: `$ORE_HOME` when set and not empty, else `~/.ore` (`~`
    expanded). For what runs at every turn's start (the config file's place): importing
    `pathlib` costs 3-4 ms (it loads `urllib.parse` and `ipaddress`), a tenth of a dry run.

    Only computes the path; nothing is created here. Callers create what they write.
    """
    return os.path.expanduser(os.environ.get("ORE_HOME") or "~/.ore")


def ore_home() -> Path:
    """ORE's home directory (`home_folder`) as a `Path`."""
    from pathlib import Path

    return Path(home_folder())
