"""Two paths exchanged in one step, for race tests: a folder and a symlink to elsewhere
swapped while ORE reads beneath them."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

__all__ = ["exchanger"]


def exchanger(a: bytes, b: bytes) -> Callable[[], None]:
    """Exchange `a` and `b` in one step with renameat2(RENAME_EXCHANGE) where the C library has
    it, so neither is ever missing; else by three renames (which leave moments where `a` is)."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:

        def swap() -> None:
            os.rename(a, a + b".tmp")
            os.rename(b, a)
            os.rename(a + b".tmp", b)

        return swap

    def exchange() -> None:
        if renameat2(-100, a, -100, b, 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
            raise OSError(ctypes.get_errno(), "renameat2 failed")

    return exchange
