"""Which row of the timeline a key names: an agent, a batch, a run or a message of an agent's conversation.

A key is text (`a:<agent id>`, `b:<batch id>`, `r:<call id>`, `m:<message id>`) so that it
travels unchanged through Qt's item roles, logs and tests; its class says
what it names and a property gives the id.  Code asks
`isinstance(key, RunKey)` and reads `key.call_id`; only `parse_key` reads a
prefix, for text that lost its class on the way (a key typed in a test, one
that went through Qt as a plain string).
"""

from __future__ import annotations

from typing import ClassVar


class NodeKey(str):
    """A timeline row's key; one of the four subclasses below."""

    __slots__ = ()
    prefix: ClassVar[str] = ""

    def __new__(cls, ident: str) -> NodeKey:
        if cls is NodeKey:
            raise TypeError("make an AgentKey, a BatchKey, a RunKey or a MessageKey (or parse_key a key's text)")
        return str.__new__(cls, cls.prefix + ident)  # not super(): a flood makes a key a call

    @property
    def ident(self) -> str:
        """The id of what the row stands for (an agent's, a batch's or a call's)."""
        return self[len(self.prefix):]

    def __getnewargs__(self) -> tuple[str]:  # copies and pickles are made from the id, not the text
        return (self.ident,)

    def __copy__(self) -> NodeKey:
        return self

    def __deepcopy__(self, memo: object) -> NodeKey:
        return self


class AgentKey(NodeKey):
    """An agent's row (sub-agents included)."""

    __slots__ = ()
    prefix = "a:"

    @property
    def agent_id(self) -> str:
        return self[2:]


class BatchKey(NodeKey):
    """A batch's row, holding its calls."""

    __slots__ = ()
    prefix = "b:"

    @property
    def batch_id(self) -> str:
        return self[2:]


class RunKey(NodeKey):
    """One call's row."""

    __slots__ = ()
    prefix = "r:"

    @property
    def call_id(self) -> str:
        return self[2:]  # past the prefix's two characters (as `ident`, without its lookups: asked of every row)


class MessageKey(NodeKey):
    """One entry of an agent's conversation (its prompt, its words, its reasoning): a row with no children."""

    __slots__ = ()
    prefix = "m:"

    @property
    def message_id(self) -> str:
        return self[2:]


LEAVES: frozenset[type[NodeKey]] = frozenset({RunKey, MessageKey})
"""The kinds of row that hold no rows (`type(key) in LEAVES`); agents' and batches' rows are groups."""

_KINDS: dict[str, type[NodeKey]] = {kind.prefix: kind for kind in (AgentKey, BatchKey, RunKey, MessageKey)}


def parse_key(text: str) -> NodeKey:
    """The key `text` spells (a key is returned as it is); ValueError for text that is no key."""
    if isinstance(text, NodeKey):
        return text
    kind = _KINDS.get(text[:2])
    if kind is None:
        raise ValueError(f"{text!r} is not a timeline key (a:, b:, r: or m: and an id)")
    return kind(text[2:])
