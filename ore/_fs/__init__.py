"""Disk safety in one place: every file ORE reads, resolves inside a root, or writes.

Why one place: these rules are easy to get subtly different in four places, and each difference
is a bug someone can plant a file to trigger. Here they are written, tested and hardened once:

- `words`: the errors raised (`NotRegularFile`, `OutsideRoot`) and the wording of OS errors;
- `reading`: bounded reads that never block (no FIFO, no device), and listings;
- `beneath`: a folder pinned by descriptor, and the confined open of a path beneath it;
- `inside`: a path confined to a root named by its path (`resolve_inside`, `open_inside`);
- `writing`: atomic, durable writes, write-through to FIFOs and descriptors, writes in place;
- `locks`: `flock` on a lock file.

A leaf: standard library only, imports nothing from ORE but its lazy loader, never prints.
Names load on first use: a caller pays only for the part it needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .beneath import Pinned, open_beneath, pin_folder
    from .inside import open_below, open_inside, resolve_inside
    from .locks import exclusive_lock, open_lock
    from .reading import list_names, open_regular, read_fd, read_regular
    from .words import NotRegularFile, OutsideRoot, folder_problem, os_error_words
    from .words import not_a_folder as not_a_folder  # named by callers, outside __all__ as before
    from .writing import _OUR_TEMPS as _OUR_TEMPS  # this process's temp files: tests add to it
    from .writing import (
        atomic_write,
        durable_rename,
        write_at,
        write_note,
        writes_through,
    )

__all__ = [
    "NotRegularFile",
    "OutsideRoot",
    "Pinned",
    "atomic_write",
    "durable_rename",
    "exclusive_lock",
    "folder_problem",
    "list_names",
    "open_below",
    "open_beneath",
    "open_inside",
    "open_lock",
    "open_regular",
    "os_error_words",
    "pin_folder",
    "read_fd",
    "read_regular",
    "resolve_inside",
    "write_at",
    "write_note",
    "writes_through",
]

if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = exports(
        __name__,
        {
            "NotRegularFile": ".words",
            "OutsideRoot": ".words",
            "folder_problem": ".words",
            "not_a_folder": ".words",
            "os_error_words": ".words",
            "list_names": ".reading",
            "open_regular": ".reading",
            "read_fd": ".reading",
            "read_regular": ".reading",
            "Pinned": ".beneath",
            "open_beneath": ".beneath",
            "pin_folder": ".beneath",
            "open_below": ".inside",
            "open_inside": ".inside",
            "resolve_inside": ".inside",
            "atomic_write": ".writing",
            "durable_rename": ".writing",
            "write_at": ".writing",
            "write_note": ".writing",
            "writes_through": ".writing",
            "_OUR_TEMPS": ".writing",  # the temp files this process made: tests add to it
            "exclusive_lock": ".locks",
            "open_lock": ".locks",
        },
    )
