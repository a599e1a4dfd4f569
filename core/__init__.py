"""Belay's Qt-free core: the public surface front ends may use.

The window and the command line import from here and nowhere deeper:
the `Console` facade, events, records, errors, the timeline read model,
diffs, settings, and the scripted agent's loader and runner.

The facade is lazy (PEP 562): `from core import Hub` imports core.hub and what it needs, not the whole
core.  A bare `belay` paints its window before the console, the policy engine, the agents and the MCP
client are imported (issue 15, "Start fast"; tests/test_startup.py keeps it so).  `_EXPORTS` says which
module holds each name; the `TYPE_CHECKING` imports say the same to type checkers, ruff and
import-linter, and tests/test_startup.py checks that the two agree.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.agents.documents import MAX_DEPTH as MAX_DOCUMENT_DEPTH
    from core.agents.documents import DocumentError, StrictLoader, load_yaml
    from core.agents.reviewer import AutoReviewer
    from core.agents.script import ReviewRule, Script, Step, load_script
    from core.agents.scripted import ScriptedAgent, run_script
    from core.bus import Subscription
    from core.changes.diffs import compute_diff, unified_text
    from core.changes.partial import PartialError, revert_hunks
    from core.changes.tracker import Holding, WatchState
    from core.console import Console
    from core.errors import BelayError, ErrorInfo, ErrorKind
    from core.events import (
        EVENT_ADAPTER,
        AgentFinished,
        AgentStarted,
        ApprovalRequested,
        ApprovalResolved,
        BatchFinished,
        BatchStarted,
        BudgetReached,
        CallFinished,
        CallOutput,
        CallProgress,
        CallQueued,
        CallRetrying,
        CallStarted,
        ConversationRecorded,
        ElicitationRequested,
        ElicitationResolved,
        Event,
        ExternalChangesRecorded,
        Lagged,
        LinkChanged,
        McpServerChanged,
        PolicyChanged,
        ProposedFile,
        RollbackFinished,
        RollbackRefused,
        SessionStarted,
        ShellFinished,
        ShellOutput,
        ShellStarted,
    )
    from core.hub import Hub
    from core.mcp.elicitation import FormField, form_fields
    from core.mcp.elicitation import checked as checked_elicitation
    from core.mcp.elicitation import defaults as elicitation_defaults
    from core.models.bash import BashAnalysis, DisplayNode, Impact
    from core.models.batches import BatchCall, BatchReport, BatchResult, PlanInfo
    from core.models.conversation import Intent, Message, TokenUse, Usage
    from core.models.diffs import DiffLine, FileDiff, Hunk
    from core.models.mcp import ServerState, ServerStatus
    from core.models.policy import AllowScope, RuleAction, RuleEntry, Scope
    from core.models.records import AgentStatus, CallRecord, ChangeKind, Decision, FileChange, GitChange, RunStatus
    from core.orchestration.graph import BatchError, CycleError
    from core.outside.agents import SERVED_TOOLS, describe_tool
    from core.outside.claude_session import SessionEnd
    from core.outside.endpoint import install_token
    from core.outside.hook_client import answers as socket_answers
    from core.outside.hook_client import find_endpoint, hub_socket
    from core.outside.install import agent_hooks, hook_command, project_http_hook, shared_settings_file
    from core.outside.install import install as install_hooks
    from core.outside.install import settings_file as claude_settings_file
    from core.outside.install import uninstall as uninstall_hooks
    from core.policy.settings import load_retention
    from core.process.overlay import OverlaySupport
    from core.process.sandbox import SandboxInfo
    from core.remote.client import Attached, Detached, RemoteError
    from core.remote.console import RemoteConsole
    from core.remote.protocol import PROTOCOL_VERSION
    from core.remote.reach import Reach
    from core.remote.server import AttachServer
    from core.remote.ssh import SshLink, SshTarget
    from core.run.calls import AgentHandle, CallOutcome
    from core.settings import STATE_DIR_ENV, state_root, workspace_state_dir
    from core.settings import config_root as config_dir  # = core.policy.settings.config_dir, without its models
    from core.store.call_list import ListedCall
    from core.store.call_list import listed as listed_calls
    from core.store.export import export_journal
    from core.store.gc import GcPlan, GcRefused, GcResult, Retention, StoreUsage
    from core.store.gc import collect as collect_garbage
    from core.store.gc import console_open as workspace_open_in_console
    from core.store.gc import plan as plan_gc
    from core.store.gc import usage as store_usage
    from core.store.seals import JournalCheck, parse_head, verify_journal
    from core.surface import ConsoleSurface
    from core.tasks import shielded, spawn
    from core.timeline.keys import LEAVES, AgentKey, BatchKey, MessageKey, NodeKey, RunKey, parse_key
    from core.timeline.nodes import (
        AgentNode,
        BatchNode,
        BatchTotals,
        ExternalNode,
        GanttSpan,
        Inserted,
        RunNode,
        ShellNode,
        Updated,
        expected_left_s,
    )
    from core.timeline.tree import Timeline
    from core.tools.bash import BashArgs, BashSettings, no_preview
    from core.tools.names import ToolName
    from core.transcripts.prices import DEFAULTS_DATED as PRICES_DATED
    from core.transcripts.prices import PriceTable, load_prices
    from core.undo.conflicts import ConflictRegion, Take, conflict_regions, take_side
    from core.undo.report import FilePreview, Resolution, UndoPreview, UndoReport

_EXPORTS: dict[str, str] = {
    "core.agents.documents": "MAX_DOCUMENT_DEPTH=MAX_DEPTH DocumentError StrictLoader load_yaml",
    "core.agents.reviewer": "AutoReviewer",
    "core.agents.script": "ReviewRule Script Step load_script",
    "core.agents.scripted": "ScriptedAgent run_script",
    "core.bus": "Subscription",
    "core.changes.diffs": "compute_diff unified_text",
    "core.changes.partial": "PartialError revert_hunks",
    "core.changes.tracker": "Holding WatchState",
    "core.console": "Console",
    "core.errors": "BelayError ErrorInfo ErrorKind",
    "core.events": ("EVENT_ADAPTER AgentFinished AgentStarted ApprovalRequested ApprovalResolved "
                    "BatchFinished BatchStarted BudgetReached CallFinished CallOutput CallProgress CallQueued "
                    "CallRetrying CallStarted ConversationRecorded ElicitationRequested ElicitationResolved Event "
                    "ExternalChangesRecorded Lagged LinkChanged McpServerChanged PolicyChanged ProposedFile "
                    "RollbackFinished RollbackRefused SessionStarted ShellFinished ShellOutput "
                    "ShellStarted"),
    "core.hub": "Hub",
    "core.mcp.elicitation": "FormField form_fields checked_elicitation=checked elicitation_defaults=defaults",
    "core.models.bash": "BashAnalysis DisplayNode Impact",
    "core.models.conversation": "Intent Message TokenUse Usage",
    "core.models.batches": "BatchCall BatchReport BatchResult PlanInfo",
    "core.models.diffs": "DiffLine FileDiff Hunk",
    "core.models.mcp": "ServerState ServerStatus",
    "core.models.policy": "AllowScope RuleAction RuleEntry Scope",
    "core.models.records": "AgentStatus CallRecord ChangeKind Decision FileChange GitChange RunStatus",
    "core.orchestration.graph": "BatchError CycleError",
    "core.outside.agents": "SERVED_TOOLS describe_tool",
    "core.outside.claude_session": "SessionEnd",
    "core.outside.endpoint": "install_token",
    "core.outside.hook_client": "find_endpoint hub_socket socket_answers=answers",
    "core.outside.install": ("agent_hooks hook_command project_http_hook shared_settings_file install_hooks=install "
                             "claude_settings_file=settings_file uninstall_hooks=uninstall"),
    "core.policy.settings": "load_retention",
    "core.process.overlay": "OverlaySupport",
    "core.process.sandbox": "SandboxInfo",
    "core.run.calls": "AgentHandle CallOutcome",
    "core.settings": "STATE_DIR_ENV state_root workspace_state_dir config_dir=config_root",
    "core.store.call_list": "ListedCall listed_calls=listed",
    "core.store.export": "export_journal",
    "core.store.gc": ("GcPlan GcRefused GcResult Retention StoreUsage collect_garbage=collect plan_gc=plan "
                      "store_usage=usage workspace_open_in_console=console_open"),
    "core.store.seals": "JournalCheck parse_head verify_journal",
    "core.surface": "ConsoleSurface",
    "core.remote.client": "Attached Detached RemoteError",
    "core.remote.console": "RemoteConsole",
    "core.remote.protocol": "PROTOCOL_VERSION",
    "core.remote.reach": "Reach",
    "core.remote.server": "AttachServer",
    "core.remote.ssh": "SshLink SshTarget",
    "core.tasks": "shielded spawn",
    "core.timeline.keys": "AgentKey BatchKey LEAVES MessageKey NodeKey RunKey parse_key",
    "core.timeline.nodes": ("AgentNode BatchNode BatchTotals ExternalNode GanttSpan Inserted RunNode "
                            "ShellNode Updated expected_left_s"),
    "core.timeline.tree": "Timeline",
    "core.tools.bash": "BashArgs BashSettings no_preview",
    "core.tools.names": "ToolName",
    "core.transcripts.prices": "PRICES_DATED=DEFAULTS_DATED PriceTable load_prices",
    "core.undo.conflicts": "ConflictRegion Take conflict_regions take_side",
    "core.undo.report": "FilePreview Resolution UndoPreview UndoReport",
}
"""Module -> the names it gives the facade, space separated; `exported=original` where the facade renames."""

_WHERE: dict[str, tuple[str, str]] = {
    exported: (module, original or exported)
    for module, names in _EXPORTS.items()
    for exported, _, original in (name.partition("=") for name in names.split())
}


def __getattr__(name: str) -> Any:
    """A facade name, imported from its module the first time it is asked for, then kept here."""
    try:
        module, original = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module 'core' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), original)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "DocumentError", "MAX_DOCUMENT_DEPTH", "StrictLoader", "load_yaml",
    "AgentFinished", "AgentHandle", "AgentKey", "AgentNode", "AgentStarted", "AgentStatus", "ApprovalRequested",
    "ApprovalResolved", "AutoReviewer", "BashAnalysis", "BashArgs", "BashSettings", "BatchCall", "BatchError",
    "BatchFinished",
    "BatchKey", "BatchNode", "BatchReport", "BatchResult", "BatchStarted", "BatchTotals", "BelayError",
    "CallFinished", "CallOutcome", "CallOutput", "CallProgress", "CallQueued", "CallRecord", "CallRetrying",
    "agent_hooks", "CallStarted", "ChangeKind", "claude_settings_file", "shared_settings_file", "config_dir", "Console",
    "project_http_hook",
    "CycleError", "Decision",
    "describe_tool", "DiffLine", "DisplayNode", "ErrorInfo", "ErrorKind", "Event", "EVENT_ADAPTER",
    "expected_left_s", "ExternalChangesRecorded", "ExternalNode", "FileChange", "FileDiff", "FilePreview",
    "find_endpoint", "GanttSpan",
    "GitChange", "Holding", "hook_command", "Hub", "Hunk", "Impact", "Inserted", "install_hooks", "install_token",
    "hub_socket", "Lagged", "LinkChanged",
    "load_script", "McpServerChanged", "no_preview", "NodeKey", "OverlaySupport", "parse_key", "PlanInfo",
    "PolicyChanged", "ProposedFile",
    "Resolution", "ReviewRule", "RollbackFinished", "RollbackRefused", "RuleEntry", "run_script", "RunKey", "RunNode",
    "ConflictRegion", "conflict_regions", "take_side", "Take",
    "RunStatus", "SandboxInfo", "Script", "ScriptedAgent", "SERVED_TOOLS", "ServerState", "ServerStatus",
    "SessionEnd", "SessionStarted", "ShellFinished", "ShellNode", "ShellOutput", "ShellStarted", "shielded", "spawn",
    "STATE_DIR_ENV", "state_root", "Step", "Subscription", "Timeline", "ToolName", "UndoPreview", "UndoReport",
    "unified_text", "uninstall_hooks", "Updated", "WatchState", "workspace_state_dir",
    "checked_elicitation", "ElicitationRequested", "ElicitationResolved", "elicitation_defaults", "FormField",
    "form_fields",
    "compute_diff", "PartialError", "revert_hunks",
    "ConsoleSurface",
    "ListedCall", "listed_calls",
    "collect_garbage", "export_journal", "GcPlan", "GcRefused", "GcResult", "load_retention", "plan_gc", "Retention",
    "store_usage", "StoreUsage", "workspace_open_in_console", "JournalCheck", "parse_head", "verify_journal",
    "Attached", "AttachServer", "Detached", "PROTOCOL_VERSION", "Reach", "RemoteConsole", "RemoteError",
    "socket_answers",
    "SshLink", "SshTarget",
    "AllowScope", "RuleAction", "Scope",
    "ConversationRecorded", "Intent", "LEAVES", "Message", "MessageKey", "TokenUse", "Usage",
    "load_prices", "PRICES_DATED", "PriceTable", "BudgetReached",
]
