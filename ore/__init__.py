"""ORE, the Orchestrated Reasoning Engine: input -> one reasoner call -> output.

Public names are imported lazily (PEP 562), so `import ore` stays cheap for commands that call
no model: `ore --help` must not pay for `ollama`, `networkx` or `jsonschema`.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.11.0"

_EXPORTS: dict[str, str] = {
    "ActiveSkill": "ore.types",
    "Message": "ore.types",
    "Response": "ore.types",
    "RoutingDecision": "ore.turn_types",
    "RoutingTarget": "ore.turn_types",
    "Session": "ore.types",
    "SkillMetadata": "ore.types",
    "ToolResult": "ore.types",
    "Turn": "ore.core",
    "build_messages": "ore.core",
    "execute": "ore.core",
    "OreError": "ore.errors",
    "Reasoner": "ore.turn_types",
    "Backend": "ore.backends",
    "OllamaBackend": "ore.backends",
    "OpenAIBackend": "ore.backends",
    "FileSessionStore": "ore.store",
    "ExecutionArtifact": "ore.artifacts",
    "read_artifact": "ore.artifacts",
    "build_artifact": "ore.artifacts",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ore' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
