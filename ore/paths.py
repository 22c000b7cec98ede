"""Where ORE keeps its files: one place to ask, so every module agrees."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["LOG_NAME", "home_folder", "log_path", "ore_home"]

#: The turn log's file name under `$ORE_HOME` (`ore.log`).
LOG_NAME = "log.db"


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


def log_path() -> Path:
    """Where the turn log is: `$ORE_HOME/log.db` (`ore.log`). Here, where every turn already
    looks, so that a turn's record and the hold on it (`ore.log.writers`) each load only the
    module that does their work."""
    return ore_home() / LOG_NAME
