"""Belay's Qt-free core: the public surface front ends may use.

The window and the command line import from here and nowhere deeper:
the `Console` facade, events, records, errors, the timeline read model,
diffs, settings, and the scripted agent's loader and runner.
"""

from core.agents.reviewer import AutoReviewer
from core.agents.script import ReviewRule, Script, Step, load_script
from core.agents.scripted import ScriptedAgent, run_script
from core.bus import Subscription
from core.console import Console
from core.outside.agents import SERVED_TOOLS, describe_tool
from core.models.diffs import DiffLine, FileDiff, Hunk
from core.changes.diffs import unified_text
from core.errors import BelayError, ErrorInfo, ErrorKind
from core.events import (EVENT_ADAPTER, AgentFinished, AgentStarted, ApprovalRequested, ApprovalResolved,
                         BatchFinished, BatchStarted, CallProgress, CallRetrying,
                         CallFinished, CallOutput, CallQueued, CallStarted, Event, ExternalChangesRecorded, Lagged,
                         ProposedFile, RollbackFinished,
                         RollbackRefused, PolicyChanged, SessionStarted, ShellFinished, ShellOutput,
                         ShellStarted)
from core.orchestration.graph import BatchError, CycleError
from core.models.batches import BatchCall, BatchReport, BatchResult, PlanInfo
from core.models.records import AgentStatus, CallRecord, ChangeKind, Decision, FileChange, GitChange, RunStatus
from core.run.calls import AgentHandle, CallOutcome
from core.models.policy import RuleEntry
from core.process.sandbox import SandboxInfo
from core.models.bash import BashAnalysis, DisplayNode, Impact
from core.tools.bash import BashSettings
from core.settings import STATE_DIR_ENV, state_root, workspace_state_dir
from core.timeline.keys import AgentKey, BatchKey, NodeKey, RunKey, parse_key
from core.timeline.nodes import (AgentNode, BatchNode, BatchTotals, ExternalNode, GanttSpan, Inserted, RunNode, ShellNode,
                                 Updated)
from core.timeline.tree import Timeline
from core.outside.claude_session import SessionEnd
from core.events import McpServerChanged
from core.models.mcp import ServerState, ServerStatus
from core.outside.endpoint import install_token
from core.outside.hook_client import find_endpoint
from core.outside.install import hook_command
from core.outside.install import install as install_hooks
from core.outside.install import settings_file as claude_settings_file
from core.outside.install import uninstall as uninstall_hooks
from core.policy.settings import config_dir
from core.undo.report import FilePreview, Resolution, UndoPreview, UndoReport
from core.tasks import shielded, spawn

__all__ = [
    "McpServerChanged", "ServerState", "ServerStatus", "SessionEnd",
    "claude_settings_file", "config_dir", "hook_command", "install_hooks", "uninstall_hooks",
    "SERVED_TOOLS", "describe_tool", "find_endpoint", "install_token",
    "EVENT_ADAPTER", "STATE_DIR_ENV", "AgentFinished", "AgentHandle", "AgentNode", "AgentStarted",
    "AgentStatus", "AutoReviewer", "ApprovalRequested", "ApprovalResolved", "BelayError", "CallFinished", "CallOutcome",
    "CallOutput", "CallQueued", "CallRecord", "CallStarted", "ChangeKind", "Console", "Decision", "DiffLine", "ErrorInfo",
    "ErrorKind", "Event", "FileChange", "FileDiff", "Hunk", "Inserted", "Lagged", "NodeKey", "ProposedFile",
    "ReviewRule", "RollbackFinished", "RollbackRefused", "RunNode", "RunStatus", "Script", "ScriptedAgent",
    "PolicyChanged", "SessionStarted", "ShellFinished", "ShellOutput", "ShellStarted", "Step", "Subscription", "Timeline", "UndoReport", "Updated",
    "BashAnalysis", "BashSettings", "DisplayNode", "Impact", "RuleEntry", "SandboxInfo",
    "ExternalChangesRecorded", "ExternalNode", "FilePreview", "GitChange", "Resolution", "UndoPreview",
    "BatchCall", "BatchError", "BatchFinished", "BatchReport", "BatchResult", "BatchStarted", "CallProgress",
    "CallRetrying", "CycleError", "PlanInfo", "BatchNode", "BatchTotals", "GanttSpan", "ShellNode",
    "shielded", "spawn",
    "AgentKey", "BatchKey", "RunKey", "parse_key", "load_script", "run_script", "state_root", "unified_text", "workspace_state_dir",
]
