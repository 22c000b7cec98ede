"""The artifact's document: its versions, and a turn's `ore.exec.v3` JSON form made straight
from the turn (`turn_document`).

This is the one place a turn becomes an artifact. `build_artifact` reads the document into an
`ExecutionArtifact` (`_contract.document_artifact`, as a file is read, without the schema
check a file needs), and the turn log keeps the document as it is. So logging a turn defines
none of the contract classes: one small module and a dict (issue 23 bounds what logging adds
to a turn at 5 ms; the three classes were 2.5 of the 11.9 million instructions it added).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .._version import __version__
from ..types import now

if TYPE_CHECKING:
    from ..core import Turn
    from ..turn_types import RoutingDecision

__all__ = [
    "ARTIFACT_VERSION",
    "SUPPORTED_VERSIONS",
    "V1",
    "V2",
    "V3",
    "Relation",
    "turn_document",
]

V1 = "ore.exec.v1"
V2 = "ore.exec.v2"
V3 = "ore.exec.v3"
#: Every version this ORE reads, oldest first. A new version is appended, never replaces one.
SUPPORTED_VERSIONS = (V1, V2, V3)
#: The version written unless another is asked for (v3 since ORE 0.11).
ARTIFACT_VERSION = V3

Relation = Literal["root", "replay", "chain"]


def turn_document(
    turn: Turn,
    *,
    prompt: str,
    model_id: str,
    backend: tuple[str, str | None],
    routing: RoutingDecision | None = None,
    tools: Sequence[str] = (),
    skills: Sequence[str] = (),
    parent_id: str | None = None,
    relation: Relation | None = None,
    continuation: tuple[bool, str | None] = (False, None),
    files: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The v3 document of one executed turn, stamped now; `turn.sent` is recorded as the exact
    messages sent. Its keys are in the order `ExecutionArtifact.to_dict` writes them.

    :param prompt: the user's prompt for the turn (a replay passes the recorded prompt).
    :param model_id: the model asked for; `turn.response.model_id` is the one that answered.
    :param backend: the backend's name and its address (public: no credentials), or None.
    :param parent_id: the execution id of the artifact this turn was replayed or chained from.
    :param relation: "replay" or "chain"; default "chain" with a parent, else "root".
    :param continuation: whether the caller declared the turn unfinished, and why; the content
        is never inspected for it.
    :param files: the `-f` files' records (name, size, sha256), written as `input.files`; their
        text is in the messages sent.
    :raises ValueError: a relation that contradicts `parent_id` (a root has no parent).
    """
    if relation is None:
        relation = "chain" if parent_id is not None else "root"
    if (relation == "root") != (parent_id is None):
        raise ValueError("an artifact has a parent exactly when its relation is not 'root'")
    requested, reason = continuation
    name, base_url = backend
    inputs: dict[str, Any] = {
        "prompt": prompt,
        "model_id": model_id,
        "mode": "single_turn",
        "routing": routing.to_dict() if routing is not None else None,
        "tools": list(tools),
        "skills": list(skills),
        "messages": [m.to_dict() for m in turn.sent],
        **turn.options.to_dict(),
    }
    if files:
        inputs["files"] = [dict(f) for f in files]
    return {
        "artifact_version": V3,
        "execution_id": turn.response.id,
        "timestamp": now(),
        "input": inputs,
        "output": turn.response.to_dict(),
        "continuation": {"requested": requested, "reason": reason},
        "ore_version": __version__,
        "backend": {"name": name, "base_url": base_url},
        "lineage": {"parent_execution_id": parent_id, "relation": relation},
    }
