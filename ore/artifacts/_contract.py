"""The artifact contract: frozen dataclasses, their JSON forms per version, and how one is made."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from .._frozen import contract
from ..errors import ArtifactError, DataError
from ..types import Message, Response
from ._document import ARTIFACT_VERSION, SUPPORTED_VERSIONS, V1, V3, Relation, turn_document
from ._schema import check, json_type, quote, resolve_version, where

if TYPE_CHECKING:
    from ..core import Turn
    from ..turn_types import RoutingDecision

__all__ = [
    "BackendInfo",
    "Continuation",
    "ExecutionArtifact",
    "build_artifact",
    "document_artifact",
    "public_url",
    "validate",
]


def public_url(url: str | None) -> str | None:
    """`url` without user name, password, query or fragment: what may be recorded, never secrets."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port is not None:
            netloc += f":{parts.port}"
    except ValueError:
        return None
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


# -- the contract ------------------------------------------------------------------------------


@contract
class Continuation:
    """Whether the producer asked for a follow-up turn: declared by the caller, never inferred."""

    requested: bool = False
    reason: str | None = None


@contract
class BackendInfo:
    """The model server that answered: its kind and base URL (credentials are stripped)."""

    name: str
    base_url: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", public_url(self.base_url))


@contract
class ExecutionArtifact:
    """One single-turn execution, in any supported version.

    The v2 fields (`messages`, `ore_version`, `backend`, `parent_execution_id`, `relation`)
    are None (and "root") for an artifact read from v1. `controls` (v3) is the JSON form of the
    turn's `TurnOptions` (`options`, `keep_alive`, `schema`, `think`, `images`: only those set),
    empty for v1 and v2. `version` is the version it was read as (or made for) and the one
    `to_dict()` writes unless told otherwise.
    """

    execution_id: str
    timestamp: float
    prompt: str
    model_id: str
    output: Response
    routing: Mapping[str, Any] | None = None
    tools: tuple[str, ...] | None = None
    skills: tuple[str, ...] | None = None
    continuation: Continuation = field(default_factory=Continuation)
    messages: tuple[Message, ...] | None = None
    ore_version: str | None = None
    backend: BackendInfo | None = None
    parent_execution_id: str | None = None
    relation: Relation = "root"
    version: str = ARTIFACT_VERSION
    controls: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.relation == "root") != (self.parent_execution_id is None):
            raise ValueError("an artifact has a parent exactly when its relation is not 'root'")

    def to_dict(self, version: str | None = None) -> dict[str, Any]:
        """The JSON form in `version` (default: `self.version`); v1 has exactly upstream's keys,
        v2 exactly v2's (the turn controls and the reasoning are v3's)."""
        version = resolve_version(version or self.version)
        v1 = version == V1
        output = self.output.to_dict()
        if version != V3:
            output.pop("thinking", None)
        data: dict[str, Any] = {
            "artifact_version": version,
            "execution_id": self.execution_id,
            "timestamp": self.timestamp,
            "input": {
                "prompt": self.prompt,
                "model_id": self.model_id,
                "mode": "single_turn",
                "routing": dict(self.routing) if self.routing is not None else None,
                "tools": _names(self.tools, v1),
                "skills": _names(self.skills, v1),
            },
            "output": output,
            "continuation": {
                "requested": self.continuation.requested,
                "reason": self.continuation.reason,
            },
        }
        if v1:
            return data
        if self.messages is None or self.backend is None or self.ore_version is None:
            raise ArtifactError(
                f"this artifact (read as {self.version}) lacks the recorded messages, backend "
                f"or ORE version that {version} needs; write it as {V1}"
            )
        data["input"]["messages"] = [m.to_dict() for m in self.messages]
        data["ore_version"] = self.ore_version
        data["backend"] = {"name": self.backend.name, "base_url": self.backend.base_url}
        data["lineage"] = {
            "parent_execution_id": self.parent_execution_id,
            "relation": self.relation,
        }
        if version == V3:
            data["input"].update(self.controls)
        return data

    @classmethod
    def from_dict(cls, data: object, *, source: str | None = None) -> ExecutionArtifact:
        """Validate untrusted JSON data against its version's schema and build the artifact.

        :param source: where the data came from ("-" for stdin), named in error messages.
        :raises ArtifactError: one line naming the problem (for schema errors, the JSON path).
        """
        name = where(source)
        if not isinstance(data, dict):
            raise ArtifactError(
                f"{name} is a JSON {json_type(data)}, not an object; an artifact is one "
                "JSON object as written by --artifact-out"
            )
        if "artifact_version" not in data:
            raise ArtifactError(
                f"{name} has no artifact_version; this ORE reads {', '.join(SUPPORTED_VERSIONS)}"
            )
        version = data["artifact_version"]
        if not isinstance(version, str):
            raise ArtifactError(
                f"{name} is not valid: $.artifact_version must be a string, "
                f"not {json_type(version)}"
            )
        if version not in SUPPORTED_VERSIONS:
            raise ArtifactError(
                f"{name} has unsupported artifact_version {quote(version)}; "
                f"this ORE reads {', '.join(SUPPORTED_VERSIONS)}"
            )
        check(data, version, name)
        try:
            return _build(data, version)
        except OverflowError:
            raise ArtifactError(f"{name} holds a number too large to use") from None
        except (DataError, ValueError) as exc:
            detail = exc.message if isinstance(exc, DataError) else str(exc)
            raise ArtifactError(f"{name} is not valid {version}: {detail}") from exc


#: The v3 `input` fields that record the turn controls (and the `-f` files: name, size,
#: sha256; readers tolerate unknown keys, so an older reader passes them over).
_CONTROLS = ("options", "keep_alive", "schema", "think", "images", "files")


def _names(names: tuple[str, ...] | None, v1: bool) -> list[str] | None:
    # v1 keeps what it read ([] and null both occur upstream); v2 always writes a list.
    if v1:
        return list(names) if names is not None else None
    return list(names or ())


def _build(data: dict[str, Any], version: str) -> ExecutionArtifact:
    inp, out, cont = data["input"], data["output"], data["continuation"]
    messages: tuple[Message, ...] | None = None
    extra: dict[str, Any] = {}
    tools = tuple(inp["tools"]) if inp.get("tools") is not None else None
    skills = tuple(inp["skills"]) if inp.get("skills") is not None else None
    if version != V1:
        messages = tuple(Message.from_dict(m) for m in inp["messages"])
        lineage = data["lineage"]
        backend = data["backend"]
        recorded = backend["base_url"]
        if recorded and public_url(recorded) is None:  # never quietly another address
            raise ValueError(
                f"$.backend.base_url {quote(recorded)} is not a valid address; fix it in the "
                "artifact (null lets the flags and environment choose the server)"
            )
        extra = {
            "controls": {k: inp[k] for k in _CONTROLS if k in inp} if version == V3 else {},
            "ore_version": data["ore_version"],
            "backend": BackendInfo(name=backend["name"], base_url=backend["base_url"]),
            "parent_execution_id": lineage["parent_execution_id"],
            "relation": lineage["relation"],
        }
        tools, skills = tools or None, skills or None
    return ExecutionArtifact(
        execution_id=data["execution_id"],
        timestamp=float(data["timestamp"]),
        prompt=inp["prompt"],
        model_id=inp["model_id"],
        output=Response.from_dict(out),
        routing=dict(inp["routing"]) if inp.get("routing") is not None else None,
        tools=tools,
        skills=skills,
        continuation=Continuation(requested=cont["requested"], reason=cont.get("reason")),
        messages=messages,
        version=version,
        **extra,
    )


def validate(data: object, version: str | None = None, *, source: str | None = None) -> None:
    """Check `data` against the schema of `version` (default: its own artifact_version).

    :raises ArtifactError: naming the JSON path of the first failure, e.g. `$.output.content`.
    """
    if version is None:
        ExecutionArtifact.from_dict(data, source=source)
        return
    check(data, resolve_version(version), where(source))


def build_artifact(
    turn: Turn,
    *,
    prompt: str,
    model_id: str,
    backend: BackendInfo,
    routing: RoutingDecision | None = None,
    tools: Sequence[str] = (),
    skills: Sequence[str] = (),
    parent: ExecutionArtifact | None = None,
    relation: Relation | None = None,
    continuation: Continuation | None = None,
    files: Sequence[Mapping[str, Any]] = (),
) -> ExecutionArtifact:
    """The artifact of one executed turn: its document (`turn_document`, which says what each
    argument records) read back. `turn.sent` is recorded as the exact messages sent.

    :param backend: the backend that answered, its address public (`public_url`).
    :param parent: the artifact this turn was replayed or chained from (None for a root).
    :param continuation: declared by the caller; the content is never inspected for it.
    """
    declared = continuation or Continuation()
    return document_artifact(
        turn_document(
            turn,
            prompt=prompt,
            model_id=model_id,
            backend=(backend.name, backend.base_url),
            routing=routing,
            tools=tools,
            skills=skills,
            parent_id=parent.execution_id if parent is not None else None,
            relation=relation,
            continuation=(declared.requested, declared.reason),
            files=files,
        )
    )


def document_artifact(document: Mapping[str, Any]) -> ExecutionArtifact:
    """The artifact of a document this ORE made (`turn_document`), read as a file is but
    without the schema check: untrusted JSON goes through `ExecutionArtifact.from_dict` (or
    `parse_artifact`, `read_artifact`), which validates it first."""
    data = dict(document)
    return _build(data, data["artifact_version"])
