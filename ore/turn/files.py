"""The files a turn sends (`-f PATH`): read, bounded and named (`ContextFile`), as the marked
blocks the user message carries (`file_results`), and read again when an artifact that recorded
them is replayed (`read_again`: refused when one changed since). Naming a file on the command
line is the permission to send it; a pipe, a FIFO or a device is read once, bounded, and an
image is pointed to `--attach`. Apart from the tool, skill and routing context
(`ore.turn.context`), which these files never pass through.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Protocol

from .._frozen import contract

if TYPE_CHECKING:
    from typing import TypeVar

    from ..types import ToolResult

    _Read = TypeVar("_Read", bound="_Hashed")

__all__ = [
    "MAX_FILES_BYTES",
    "MAX_FILE_BYTES",
    "ContextFile",
    "context_file",
    "file_results",
    "read_again",
    "read_context_file",
    "read_context_files",
    "read_named",
    "read_recorded_file",
]

#: The most one `-f` file may hold: text for a prompt, not a data set.
MAX_FILE_BYTES = 4 * 1024 * 1024
#: The most all the `-f` files of one turn may hold together.
MAX_FILES_BYTES = 8 * 1024 * 1024
#: Image formats by their first bytes: such a file is pointed to `--attach`.
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")


@contract
class ContextFile:
    """A text file sent with one turn (`-f PATH`): naming it on the command line is the
    permission to send it. Turn-scoped like a tool's output (a marked block at the head of the
    user message, never stored in a session); an artifact records `record()`, never the text.

    :param name: the path as given ("-" for stdin).
    """

    name: str
    text: str = field(repr=False)
    size: int
    sha256: str

    @property
    def label(self) -> str:
        """The block's name: the file and its size, so the model knows what it reads."""
        return f"{'stdin' if self.name == '-' else self.text_name} ({self.size} bytes)"

    @property
    def text_name(self) -> str:
        """The name as text: a name that is not UTF-8 (kept by the OS's surrogate escapes) has
        U+FFFD for its odd bytes, so that the message, the artifact and the turn log can carry
        it (a replay then finds no such file and refuses, as for a changed one)."""
        return self.name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

    def record(self) -> dict[str, object]:
        return {"name": self.text_name, "size": self.size, "sha256": self.sha256}


def context_file(name: str, data: bytes) -> ContextFile:
    """`data` (read from `name`) as a context file, once checked: at most MAX_FILE_BYTES, text
    (UTF-8 without NUL bytes); an image is pointed to `--attach`.

    :raises OreError: one line naming the file and what to do.
    """
    from ..errors import OreError

    shown = "stdin" if name == "-" else f"'{name}'"
    if len(data) > MAX_FILE_BYTES:
        raise OreError(
            f"cannot send {shown} with -f: it is larger than {MAX_FILE_BYTES >> 20} MiB; "
            "send a part of it (head, sed -n) on stdin or with -f"
        )
    if data.startswith(_IMAGE_MAGIC) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
        raise OreError(f"cannot send {shown} with -f: it is an image; attach it with -a {name}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise OreError(
            f"cannot send {shown} with -f: it is not UTF-8 text (byte {exc.start}); "
            "convert it (iconv) or send a text file"
        ) from None
    if "\0" in text:
        raise OreError(f"cannot send {shown} with -f: it is binary (it holds NUL bytes)")
    import hashlib

    return ContextFile(name, text, len(data), hashlib.sha256(data).hexdigest())


def read_context_file(path: str) -> ContextFile:
    """The regular file at `path` as a context file (`context_file`); a FIFO, device or folder
    is refused, never waited on (`ore._fs`).

    :raises OreError: one line naming the file.
    """
    return context_file(
        path, read_named(path, MAX_FILE_BYTES, f"send '{path}' with -f", stdin_flag="-f -")
    )


@contract
class RecordedFile:
    """An `-f` file read again by a replay only to be compared with its record: the recorded
    text is what is sent, so nothing of its text is checked here, only its bytes' sha256."""

    sha256: str


def read_recorded_file(path: str) -> RecordedFile:
    """The file a replayed artifact's `input.files` names, read again (at most MAX_FILE_BYTES
    + 1 bytes: a longer file cannot be the one recorded) to tell whether it changed; a folder,
    a FIFO or an unreadable file is one that changed, said as such: the replay was not given
    `-f`, so "cannot send it with -f" would point the wrong way.

    :raises OreError: it cannot be read again as a regular file.
    """
    import hashlib

    from .._fs import NotRegularFile, os_error_words, read_regular
    from ..errors import OreError

    try:
        data = read_regular(path, limit=MAX_FILE_BYTES, follow_symlinks=True)
    except NotRegularFile as exc:
        why = f"it {os_error_words(exc)}"
    except (OSError, ValueError) as exc:
        why = os_error_words(exc)
    else:
        return RecordedFile(hashlib.sha256(data).hexdigest())
    raise OreError(
        f"the -f file '{path}' changed since the artifact was recorded: {why}; restore it, "
        "or chain from the artifact with a new prompt and -f"
    )


def read_named(path: str, limit: int, doing: str, *, stdin_flag: str | None = None) -> bytes:
    """The regular file a user named (`-f`, `--attach`), at most `limit + 1` bytes: a FIFO,
    device or folder is refused, never waited on (`ore._fs`); a link is followed. A pipe
    (`-f <(cmd)`, a FIFO) is pointed to `stdin_flag` (`-f -`), which reads one.

    :raises OreError: one line, `cannot DOING: why` ("there is no such file" ...).
    """
    from .._fs import NotRegularFile, os_error_words, read_regular
    from ..errors import OreError

    try:
        return read_regular(path, limit=limit, follow_symlinks=True)
    except FileNotFoundError:
        raise OreError(f"cannot {doing}: there is no such file") from None
    except NotRegularFile as exc:
        hint = ""
        if stdin_flag is not None and _is_pipe(path):
            hint = f"; pipe it in instead: cmd | ore {stdin_flag} ..."
        raise OreError(f"cannot {doing}: it {os_error_words(exc)}{hint}") from None
    except (OSError, ValueError) as exc:
        raise OreError(f"cannot {doing}: {os_error_words(exc)}") from None


def _is_pipe(path: str) -> bool:
    """Whether `path` is a pipe (a FIFO, or `/dev/fd/N` of a shell's `<(cmd)`)."""
    import os
    import stat

    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_context_files(
    names: Iterable[str], read_stdin: Callable[[int], bytes], on_note: Callable[[str], None]
) -> tuple[ContextFile, ...]:
    """The `-f` files in order, each read and checked (`read_context_file`; "-" is what
    `read_stdin(limit)` gives), at most MAX_FILES_BYTES together. A file named again (the same
    name, or another name of the same file: `./a`, a link) is sent once; `on_note` hears so.

    :raises OreError: a file that cannot be sent, or the files together past the total.
    """
    from ..errors import OreError

    files: list[ContextFile] = []
    seen: dict[object, str] = {}
    said: set[tuple[str, str]] = set()  # each repetition said once, however often it is made
    total = 0
    for name in names:
        first = seen.setdefault(_identity(name), name)
        if first is not name:
            if (first, name) not in said:
                said.add((first, name))
                again = "again" if first == name else f"again as '{name}'"
                on_note(f"-f '{first}' is named {again}: it is sent once")
            continue
        if name == "-":
            found = context_file("-", read_stdin(MAX_FILE_BYTES + 1))
        else:
            found = read_context_file(name)
        total += found.size
        if total > MAX_FILES_BYTES:
            raise OreError(
                f"cannot send the -f files: together they are larger than "
                f"{MAX_FILES_BYTES >> 20} MiB (at '{found.text_name}'); send fewer, or parts "
                "of them (head, sed -n)"
            )
        files.append(found)
    return tuple(files)


def _identity(name: str) -> object:
    """What makes two names one file: its device and inode; the name itself for stdin, or for
    a path that cannot be looked at (reading it then says why)."""
    import os

    if name == "-":
        return name
    try:
        found = os.stat(name)
    except (OSError, ValueError):
        return name
    return (found.st_dev, found.st_ino)


def file_results(files: Iterable[ContextFile]) -> tuple[ToolResult, ...]:
    """Each file as the marked block the user message carries (`[File:NAME (N bytes)]`)."""
    from ..types import ToolResult

    return tuple(ToolResult(tool_name=f.label, output=f.text, kind="file") for f in files)


class _Hashed(Protocol):
    """What a file read again is compared by: its bytes' sha256."""

    @property
    def sha256(self) -> str: ...


def read_again(
    records: object,
    read: Callable[[str], _Read],
    *,
    noun: str,
    flag: str,
    field: str,
    recorded: bool = False,
) -> tuple[_Read, ...]:
    """The files a replayed artifact recorded in `input.<field>` (name, sha256), each read again
    with `read`: the one way a replay takes a file again (`--attach` images, whose bytes the
    artifact does not hold; an `-f` file's text is in the recorded messages, never read again).
    One that changed since, is gone, or was read from stdin is refused: the recorded turn cannot
    be sent as it was. An artifact is data from anywhere: a malformed record is refused too.

    :param noun: names the file in the errors (`image`); `flag` is the flag to chain with
        instead.
    :param recorded: the artifact holds the files' text (`-f`): one read from stdin or no
        longer there (another folder) is sent as recorded, and only one still there and
        changed is refused (the user may mean its new text: they chain with `flag`).
    :raises OreError: a file that changed, is gone, was read from stdin, or a bad record.
    """
    import os.path

    from ..errors import ArtifactError, OreError

    if not records:
        return ()
    if not isinstance(records, list | tuple):
        raise ArtifactError(f"the artifact's input.{field} is not a list")
    found = []
    for record in records:
        if not isinstance(record, Mapping) or not isinstance(record.get("name"), str):
            raise ArtifactError(f"the artifact's input.{field} holds an entry without a name")
        name = record["name"]
        if recorded and (name == "-" or not os.path.lexists(name)):
            continue
        if name == "-":
            raise OreError(
                f"the artifact's {noun} was read from stdin, which ORE cannot read again; chain "
                f"from the artifact with a new prompt and {flag} instead"
            )
        current = read(name)
        if current.sha256 != record.get("sha256"):
            raise OreError(
                f"the {noun} '{name}' changed since the artifact was recorded (its sha256 "
                f"differs); restore it, or chain from the artifact with a new prompt and {flag}"
            )
        found.append(current)
    return tuple(found)
