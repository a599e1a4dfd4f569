"""The rules table's model: each rule with its action, layer and the file that keeps it, coloured by action."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from core import RuleEntry
from gui.window.kit.theme import LIGHT
from gui.window.panels.rules_model import ENTRY_ROLE, RulesModel


def test_the_model_passes_qtmodeltester_as_the_rules_change(qtmodeltester: Any, tmp_path: Path) -> None:
    model = RulesModel(tmp_path)
    qtmodeltester.check(model, force_py=True)  # and again on every reset below
    model.set_rules([RuleEntry(rule="Bash(npm run test:*)", action="allow", scope="workspace",
                               source=tmp_path / ".belay" / "settings.toml"),
                     RuleEntry(rule="Read(./src/**)", action="deny", scope="session", timeout_s=30)])
    assert model.rowCount() == 2 and model.index(0, 3).data() == ".belay/settings.toml"
    assert model.index(1, 3).data() == "this session only (not saved)"
    assert "waits 30 s" in model.index(1, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert model.row_of(("Read(./src/**)", "deny", "session")) == 1
    model.set_rules([])
    assert model.rowCount() == 0


def test_the_action_is_coloured_and_each_rule_says_where_it_is_kept(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    workspace = tmp_path / "ws"
    entries = [RuleEntry(rule="Bash(git status:*)", action="allow", scope="user",
                         source=home / ".config" / "belay" / "settings.toml"),
               RuleEntry(rule="Bash(curl:*)", action="ask", scope="workspace", source=workspace / ".belay" / "s.toml"),
               RuleEntry(rule="Bash(rm:*)", action="deny", scope="user", source=tmp_path / "etc" / "belay.toml",
                         timeout_s=10, on_timeout="allow"),
               RuleEntry(rule="Write", action="allow", scope="session")]
    model = RulesModel(workspace)
    model.set_rules(entries)
    rows = [[model.index(r, c).data() for c in range(4)] for r in range(model.rowCount())]
    assert rows == [["Bash(git status:*)", "allow", "user (all workspaces)", "~/.config/belay/settings.toml"],
                    ["Bash(curl:*)", "ask", "workspace", ".belay/s.toml"],
                    ["Bash(rm:*)", "deny", "user (all workspaces)", str(tmp_path / "etc" / "belay.toml")],
                    ["Write", "allow", "session", "this session only (not saved)"]]
    colours = [model.index(r, 1).data(Qt.ItemDataRole.ForegroundRole).name() for r in range(4)]
    assert colours == [LIGHT.success, LIGHT.warning, LIGHT.danger, LIGHT.success]
    assert model.index(0, 0).data(Qt.ItemDataRole.ForegroundRole) is None  # only the action is coloured
    tips = [model.index(r, 0).data(Qt.ItemDataRole.ToolTipRole) for r in range(4)]
    assert tips[2] == (f"deny Bash(rm:*)\nLayer: user (all workspaces)\nFile: {tmp_path / 'etc' / 'belay.toml'}\n"
                       "An approval it asks for waits 10 s, then: allow")
    assert tips[3] == "allow Write\nLayer: session\nKept in memory until Belay closes"
    assert [model.index(r, 2).data(ENTRY_ROLE) for r in range(4)] == entries
    assert model.entry(3) == entries[3] and model.entry(4) is None
    assert model.keys() == [(e.rule, e.action, e.scope) for e in entries]
    assert model.row_of(("Write", "deny", "session")) == -1  # the same rule with another action is another rule
