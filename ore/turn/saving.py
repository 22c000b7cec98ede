"""Where a conversation is kept: opening the session a turn continues, and the one place a turn
is appended to a saved session (`append_turn`). Writing is the store's (`ore.store`: atomic,
serialised, a corrupt file reported and never overwritten); this module decides what to write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..types import Session
from .request import Conversation

if TYPE_CHECKING:
    from ..store import FileSessionStore

__all__ = [
    "append_turn",
    "latest_session",
    "open_conversation",
    "save_conversation",
    "valid_name",
]


def _store() -> FileSessionStore:
    from ..store import default_store

    return default_store()


def open_conversation(
    *,
    resume: str | None = None,
    save: str | None = None,
    history: int | None = None,
    create: bool = True,
) -> Conversation:
    """The conversation a turn continues, and where it is saved.

    - `resume` alone (or `resume == save`): that session must exist; turns are appended to it.
    - `save` alone: continued if it exists, else a new session, written when its first turn
      completes (a failed or interrupted turn leaves no file). `create` checks at once that
      it can be written (`create=False`, as for a dry run, touches nothing).
    - `resume` A and `save` B: A's history continues into a new session B, written with A's
      messages when the first turn completes; A is never written. When B exists by then (before
      the call, or another process took it meanwhile), B is left as it is and the turn is saved
      as a new session `B-2` (the first free number): the answer is never lost to the name, and
      the result's conversation and `kept` say where it went.
    """

    store = _store()
    if resume is not None:
        session = store.load(resume)
        if save is None or save == resume:
            return Conversation(session, resume, len(session.messages), history)
        if store.exists(save):
            store.load(save)  # a corrupt or unreadable B is reported before any call, as ever
        return Conversation(Session(messages=session.messages), save, 0, history)
    if save is None:
        return Conversation(Session(), None, 0, history)
    if create:
        session = store.open_or_create(save)
    elif store.exists(save):
        session = store.load(save)
    else:
        session = Session()
    return Conversation(session, save, len(session.messages), history)


def append_turn(conversation: Conversation, whole: Session, model_id: str) -> Conversation:
    """Append what `whole` (the conversation with the new turn) holds beyond what the saved
    session has, remember the model that answered, and return the conversation as it is now.
    The one place a turn reaches a saved session.

    A new session (`--save-session NAME` of a name not saved yet) is written with its first
    turn; if another process saved NAME meanwhile, the turn joins it, as two processes saving
    to one name always do, and the conversation goes on with that session's id.

    The fork rule: when the conversation's name now holds another session (a fork into a name
    that exists, a name another process took first), that session is left as it is and the
    whole conversation is saved as a new session under the first free `NAME-N`; the returned
    conversation carries that name, and the next turns go there."""
    from ..sessions import record_model

    if conversation.name is None:
        return Conversation(whole, None, 0, conversation.history)
    from ..store import SessionTaken

    store = _store()
    name = conversation.name
    new = conversation.saved == 0 and not conversation.session.messages
    try:
        saved_id = store.add(
            name,
            whole.messages[conversation.saved :],
            session_id=None if new else whole.id,
            new=whole,
        )
    except SessionTaken:
        name, _ = store.save_elsewhere(name, whole)
    else:
        if saved_id != whole.id:
            whole = Session(messages=whole.messages, id=saved_id, created_at=whole.created_at)
    record_model(store, name, model_id)
    return Conversation(whole, name, len(whole.messages), conversation.history)


def save_conversation(
    name: str, session: Session, model: str, *, history: int | None = None
) -> Conversation:
    """Write `session` as a new saved session `name` (it must not exist) and go on there. An
    empty conversation is written with its first turn: no file holds no turn."""
    from ..sessions import record_model

    store = _store()
    if not session.messages:
        store.prepare(name, new=True)
        return Conversation(session, name, 0, history)
    created = store.create(name, session)
    record_model(store, name, model)
    return Conversation(created, name, len(created.messages), history)


def valid_name(name: str) -> str:
    """`name` if it can name a session, else `StoreError` saying why not."""
    from ..store import validate_name

    return validate_name(name)


def latest_session() -> str:
    """The name of the session written last (`--continue`), passing over any that holds no
    message; `StoreError` when there is none."""
    from ..sessions import latest

    return latest(_store())
