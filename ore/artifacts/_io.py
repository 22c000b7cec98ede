"""Reading artifacts from untrusted files or stdin, and writing them atomically.

Hostile input (missing, too large, empty, binary, not JSON, the wrong shape) becomes one
`ArtifactError` line; nothing else escapes the reader.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import suppress

from .._fs import NotRegularFile, atomic_write, os_error_words, read_regular, writes_through
from ..errors import ArtifactError, json_error_words
from ._contract import ExecutionArtifact
from ._schema import check, where

__all__ = [
    "MAX_ARTIFACT_BYTES",
    "check_destination",
    "dumps_artifact",
    "parse_artifact",
    "read_artifact",
    "write_artifact",
]

#: Larger inputs are refused before parsing: an artifact is one turn, not a data set.
MAX_ARTIFACT_BYTES = 16 * 1024 * 1024


class _BadNumber(ValueError):
    pass


def _no_constant(name: str) -> float:
    raise _BadNumber(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _BadNumber(f"{text[:20]} is too large for a JSON number")
    return value


def read_artifact(source: str | os.PathLike[str]) -> ExecutionArtifact:
    """Read and validate an artifact from a file path, or from stdin when `source` is "-".

    Reads at most MAX_ARTIFACT_BYTES (plus one byte, to tell that a source is over the limit).
    :raises ArtifactError: one line naming the problem: a missing file, too large, empty,
        binary, not JSON, not an object, a missing or unknown version, or a schema failure.
    """
    name = where(source)
    if str(source) == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None or sys.stdin.isatty():
            raise ArtifactError(
                "--artifact-in - reads stdin, but nothing is piped in; pipe an artifact"
            )
        data = stream.read(MAX_ARTIFACT_BYTES + 1)
    else:
        try:
            # A symlink to an artifact is fine; a FIFO or device is refused, never waited on.
            data = read_regular(source, limit=MAX_ARTIFACT_BYTES, follow_symlinks=True)
        except FileNotFoundError:
            raise ArtifactError(
                f"{name} does not exist; give the path of a file written by --artifact-out"
            ) from None
        except NotRegularFile as exc:
            if exc.is_dir:
                raise ArtifactError(f"{name} is a directory, not an artifact file") from None
            raise ArtifactError(
                f"cannot read {name}: it {os_error_words(exc)}; pipe it in with --artifact-in -"
            ) from None
        except OSError as exc:
            raise ArtifactError(f"cannot read {name}: {os_error_words(exc)}") from None
    return parse_artifact(data, source=str(source))


def parse_artifact(data: bytes, *, source: str | None = None) -> ExecutionArtifact:
    """Parse and validate artifact bytes (UTF-8 JSON); see `read_artifact` for what is refused."""
    name = where(source)
    if len(data) > MAX_ARTIFACT_BYTES:
        limit = MAX_ARTIFACT_BYTES // (1024 * 1024)
        raise ArtifactError(f"{name} is larger than the {limit} MiB limit for an artifact")
    if not data.strip():
        raise ArtifactError(f"{name} is empty; expected the JSON written by --artifact-out")
    if b"\x00" in data:
        raise ArtifactError(f"{name} is binary data, not JSON text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ArtifactError(f"{name} is not UTF-8 text (binary data?), so not JSON") from None
    try:
        obj = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
        # Lone surrogates (\ud800) parse but cannot be sent or written back: refuse them now.
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except RecursionError:
        raise ArtifactError(f"{name} is nested too deeply to be an artifact") from None
    except _BadNumber as exc:
        raise ArtifactError(f"{name} is not valid JSON: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ArtifactError(f"{name} is not JSON: {json_error_words(exc)}") from None
    except UnicodeEncodeError:
        raise ArtifactError(
            f"{name} holds an unpaired surrogate escape (\\ud800-\\udfff)"
        ) from None
    except ValueError as exc:  # an integer beyond Python's digit limit, say
        why = "an integer has too many digits" if "digits" in str(exc) else str(exc)[:80]
        raise ArtifactError(f"{name} is not valid JSON: {why}") from None
    return ExecutionArtifact.from_dict(obj, source=source)


def dumps_artifact(artifact: ExecutionArtifact, version: str | None = None) -> str:
    """The artifact as JSON text in `version`, checked against that version's schema first."""
    data = artifact.to_dict(version)
    check(data, data["artifact_version"], "the artifact to write")
    try:
        return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    except ValueError as exc:
        raise ArtifactError(f"the artifact cannot be written as JSON: {exc}") from exc


def check_destination(dest: str | os.PathLike[str]) -> None:
    """Fail early (before any model call) when `dest` cannot receive an artifact file."""
    path = os.fspath(dest)
    if not path.strip():
        raise ArtifactError("--artifact-out needs a file path, or '-' for stdout")
    if path == "-" or writes_through(path):
        return  # a FIFO, device or descriptor (/dev/null, /dev/stdout) is written through
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ArtifactError(f"cannot write the artifact to '{path}': it is a directory")
    if path.endswith(("/", os.sep)) or os.path.basename(path) in (".", ".."):
        raise ArtifactError(
            f"cannot write the artifact to '{path}': it names a folder; give a file name"
        )
    if not os.path.isdir(directory):
        raise ArtifactError(
            f"cannot write the artifact to '{path}': the directory '{directory}' does not exist"
        )
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ArtifactError(
            f"cannot write the artifact to '{path}': the directory '{directory}' is not writable"
        )


def write_artifact(
    artifact: ExecutionArtifact, dest: str | os.PathLike[str], *, version: str | None = None
) -> None:
    """Write the artifact to stdout ("-") or atomically to a file (`ore._fs.atomic_write`).

    A reader of the file sees either the previous content or the whole new artifact, never half;
    a FIFO, device or descriptor at `dest` (`/dev/stdout`, `/proc/PID/fd/N`) is written through,
    never replaced. An artifact holds tool output (a `.env`, say): a new file is created 0600,
    and an existing one keeps its mode (and owner).
    """
    text = dumps_artifact(artifact, version)
    path = os.fspath(dest)
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    check_destination(path)
    for stream in (sys.stdout, sys.stderr):  # what is buffered comes first at /dev/stdout
        with suppress(Exception):
            stream.flush()
    try:
        atomic_write(path, text.encode("utf-8"), mode=0o600, keep_mode=True)
    except OSError as exc:
        raise ArtifactError(
            f"cannot write the artifact to '{path}': {os_error_words(exc)}"
        ) from None
