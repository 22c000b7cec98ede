"""ORE, the Orchestrated Reasoning Engine: input -> one reasoner call -> output.

Public names are imported lazily (PEP 562, through `ore._lazy`), so `import ore` stays cheap for
commands that call no model: `ore --help` must not pay for `ollama`, `networkx` or `jsonschema`.
Type checkers see every name's real type through the imports under `TYPE_CHECKING`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import exports
from ._version import __version__

if TYPE_CHECKING:
    from .artifacts import ExecutionArtifact, build_artifact, read_artifact
    from .backends import Backend, OllamaBackend, OpenAIBackend
    from .core import Turn, build_messages, execute
    from .errors import OreError
    from .store import FileSessionStore
    from .turn import TurnRequest, TurnResult, run_turn
    from .turn_types import Reasoner, RoutingDecision, RoutingTarget, TurnOptions
    from .types import (
        ActiveSkill,
        Message,
        Response,
        Session,
        SkillMetadata,
        ToolResult,
        Usage,
    )

__all__ = [
    "ActiveSkill",
    "Backend",
    "ExecutionArtifact",
    "FileSessionStore",
    "Message",
    "OllamaBackend",
    "OpenAIBackend",
    "OreError",
    "Reasoner",
    "Response",
    "RoutingDecision",
    "RoutingTarget",
    "Session",
    "SkillMetadata",
    "ToolResult",
    "Turn",
    "TurnOptions",
    "TurnRequest",
    "TurnResult",
    "Usage",
    "__version__",
    "build_artifact",
    "build_messages",
    "execute",
    "read_artifact",
    "run_turn",
]

if not TYPE_CHECKING:  # type checkers see the imports above, and no catch-all __getattr__
    __getattr__, __dir__ = exports(
        __name__,
        {
            "ActiveSkill": ".types",
            "Message": ".types",
            "Response": ".types",
            "Session": ".types",
            "SkillMetadata": ".types",
            "ToolResult": ".types",
            "Usage": ".types",
            "Reasoner": ".turn_types",
            "RoutingDecision": ".turn_types",
            "RoutingTarget": ".turn_types",
            "TurnOptions": ".turn_types",
            "TurnRequest": ".turn",
            "TurnResult": ".turn",
            "run_turn": ".turn",
            "Turn": ".core",
            "build_messages": ".core",
            "execute": ".core",
            "OreError": ".errors",
            "Backend": ".backends",
            "OllamaBackend": ".backends",
            "OpenAIBackend": ".backends",
            "FileSessionStore": ".store",
            "ExecutionArtifact": ".artifacts",
            "build_artifact": ".artifacts",
            "read_artifact": ".artifacts",
            "__version__": "._version",  # imported above; listed so that dir(ore) names it
        },
    )
