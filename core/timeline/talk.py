"""The timeline's conversation: what each agent said, as rows among its calls, and what its responses cost.

The part of `core.timeline.tree.Timeline` that takes in `ConversationRecorded`: each message becomes a row
(`MessageKey`) appended under its agent, in the order read, so that an agent's words sit between the calls
they came before and after (its transcript is read before each of its calls is decided); the tokens of
each response are summed per agent and model, and per day and model.  Roll-ups (an agent with its
sub-agents, a session) walk the agents, never the messages.  Texts are the recorder's, capped already.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from core.events import ConversationRecorded
from core.models.conversation import Message, TokenUse, Usage
from core.timeline.keys import AgentKey, MessageKey, NodeKey
from core.timeline.nodes import AgentNode, Inserted, RunNode, Updated

Change = Inserted | Updated


class Talk:
    """The messages and token use of a timeline's agents (`Timeline` holds the tree they hang in)."""

    agents: dict[str, AgentNode]
    runs: dict[str, RunNode]

    def __init__(self) -> None:
        self.messages: dict[str, Message] = {}
        """Every message shown, by its id."""
        self.spent: dict[str, dict[str, Usage]] = {}
        """Each agent's tokens by model (its own responses only: `usage` rolls its sub-agents up)."""
        self.daily: dict[tuple[str, str], Usage] = {}
        """The workspace's tokens by (UTC day, model)."""
        self.context: dict[str, int] = {}
        """Each agent's context window in use at its latest response, in tokens."""
        self.unread: dict[str, str] = {}
        """Each agent's latest word on what of its transcript could not be read."""
        self.responses: dict[str, TokenUse] = {}
        """The response that made each call, by the agent's own id for the call (`RunNode.use_id`)."""

    def _ensure_agent(self, agent_id: str, at: datetime) -> list[Change]:
        raise NotImplementedError

    def _append(self, parent: NodeKey | None, key: NodeKey, siblings: list[NodeKey] | None = None) -> Inserted:
        raise NotImplementedError

    def sub_agents(self, key: NodeKey | str) -> list[AgentKey]:
        raise NotImplementedError

    def _on_conversation(self, e: ConversationRecorded) -> list[Change]:
        changes: list[Change] = []
        for message in e.messages:
            changes += self._add_message(message)
        if e.tokens:
            self._count(e.tokens)
            changes += [Updated(AgentKey(a)) for a in dict.fromkeys(t.agent_id for t in e.tokens) if a in self.agents]
        if e.skipped:
            self.unread[e.agent_id] = e.note
            if e.agent_id in self.agents:
                changes.append(Updated(AgentKey(e.agent_id)))
        return changes

    def _add_message(self, message: Message) -> list[Change]:
        if message.message_id in self.messages:
            return []  # read again (its file was replaced): shown once
        changes = self._ensure_agent(message.agent_id, message.at)
        self.messages[message.message_id] = message
        changes.append(self._append(AgentKey(message.agent_id), MessageKey(message.message_id)))
        return changes

    def _count(self, tokens: Iterable[TokenUse]) -> None:
        for use in tokens:
            by_model = self.spent.setdefault(use.agent_id, {})
            by_model[use.model] = by_model.get(use.model, Usage()) + use.usage
            day = (use.at.date().isoformat(), use.model)
            self.daily[day] = self.daily.get(day, Usage()) + use.usage
            self.context[use.agent_id] = use.usage.context
            for use_id in use.tool_uses:
                self.responses[use_id] = use

    # -- reading --------------------------------------------------------------------------------

    def said(self, agent_id: str) -> list[Message]:
        """The agent's own conversation, in the order shown (its sub-agents' are theirs)."""
        node = self.agents.get(agent_id)
        if node is None:
            return []
        return [self.messages[key.message_id] for key in node.children if isinstance(key, MessageKey)]

    def response_of(self, call_id: str) -> TokenUse | None:
        """The model response that made this call, with its tokens, where the agent's transcript says so (the
        response may have made other calls too: its `tool_uses`)."""
        run = self.runs.get(call_id)
        return self.responses.get(run.use_id) if run is not None and run.use_id else None

    def usage(self, agent_id: str, *, rolled: bool = True) -> dict[str, Usage]:
        """The agent's tokens by model; `rolled`: its sub-agents' (at any depth) added, what its branch cost."""
        total = dict(self.spent.get(agent_id, {}))
        if rolled:
            for sub in self.sub_agents(AgentKey(agent_id)):
                for model, used in self.usage(sub.agent_id).items():
                    total[model] = total.get(model, Usage()) + used
        return total

    def session_usage(self, session_id: str) -> dict[str, Usage]:
        """Every agent's tokens in one of the console's sessions, by model."""
        total: dict[str, Usage] = {}
        for agent in self.agents.values():
            if agent.session_id == session_id:
                for model, used in self.spent.get(agent.agent_id, {}).items():
                    total[model] = total.get(model, Usage()) + used
        return total
