"""One ORE turn as a library call.

    from ore.turn import TurnRequest, run_turn

    result = run_turn(TurnRequest.of("Explain a unix pipe in one sentence", model="llama3.2"))
    print(result.content)

`run_turn` is what every mode of the `ore` command runs (a single turn, an artifact's replay
or chain, each REPL turn): it gathers the turn's context (routing, skills, the gated tool),
chooses the server and the model, makes the core's one reasoner call (`ore.core.execute`),
checks the answer, appends it to the saved session and writes the artifact. It prints nothing;
the caller shows the result. See docs/library.md. Names are imported on first use, so a dry run
pays only for the request and its preview.

- `request`: what a turn is asked (`TurnRequest`, `Server`, `Conversation`); `result`: what
  it did (`TurnResult`).
- `context`: the checked plan of tool, grants, skill and routing, and each turn's gathering.
- `answer`: what an answer says about itself (empty, cut, schema, code blocks); pure.
- `saving`: the conversation a turn continues, and the one place a turn is appended to it.
- `run`: the turn itself and its preview (`--dry-run`); `server`: the server it talks to and
  the model; `replay`: the request that replays or chains from an artifact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .answer import extract_block, structured, truncation
    from .context import ContextPlan, gather, plan_context
    from .replay import recorded_controls, recorded_turn_options, replay_request
    from .request import Conversation, Server, TurnRequest, persona
    from .result import TurnNotKept, TurnResult
    from .run import artifact_of, document_of, preview, run_turn
    from .saving import (
        append_turn,
        latest_session,
        open_conversation,
        save_conversation,
        valid_name,
    )
    from .server import (
        available_models,
        backend_kind,
        choose_model,
        close,
        connect,
        refusal,
    )

__all__ = [
    "ContextPlan",
    "Conversation",
    "Server",
    "TurnNotKept",
    "TurnRequest",
    "TurnResult",
    "append_turn",
    "artifact_of",
    "available_models",
    "backend_kind",
    "choose_model",
    "close",
    "connect",
    "document_of",
    "extract_block",
    "gather",
    "latest_session",
    "open_conversation",
    "persona",
    "plan_context",
    "preview",
    "recorded_controls",
    "recorded_turn_options",
    "refusal",
    "replay_request",
    "run_turn",
    "save_conversation",
    "structured",
    "truncation",
    "valid_name",
]

if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = exports(
        __name__,
        {
            "extract_block": ".answer",
            "structured": ".answer",
            "truncation": ".answer",
            "ContextPlan": ".context",
            "gather": ".context",
            "plan_context": ".context",
            "Conversation": ".request",
            "Server": ".request",
            "TurnRequest": ".request",
            "persona": ".request",
            "TurnNotKept": ".result",
            "TurnResult": ".result",
            "available_models": ".server",
            "backend_kind": ".server",
            "choose_model": ".server",
            "close": ".server",
            "connect": ".server",
            "artifact_of": ".run",
            "document_of": ".run",
            "preview": ".run",
            "recorded_controls": ".replay",
            "recorded_turn_options": ".replay",
            "refusal": ".server",
            "replay_request": ".replay",
            "run_turn": ".run",
            "append_turn": ".saving",
            "latest_session": ".saving",
            "open_conversation": ".saving",
            "save_conversation": ".saving",
            "valid_name": ".saving",
        },
    )
