"""The hub's sidebar lists: each workspace with what waits and runs in it, and every request waiting anywhere.

The lists hold a workspace's page only to find its row again; a stand-in object serves as a page here (the hub's
window test opens real ones).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core import ApprovalRequested
from gui.window.hub.models import WaitingModel, WorkspaceRow, WorkspacesModel

FONT = Qt.ItemDataRole.FontRole


def _page() -> Any:
    return object()


def test_a_workspace_row_says_what_waits_and_runs_there_and_is_bold_while_something_waits(
        qtmodeltester: Any) -> None:
    model = WorkspacesModel()
    qtmodeltester.check(model, force_py=True)  # and on every change below
    shop, blog = _page(), _page()
    model.add(WorkspaceRow(Path("/home/me/shop"), shop))
    model.add(WorkspaceRow(Path("/srv/blog"), blog, host="build-box", where="ssh://build-box/srv/blog"))
    assert model.index(0, 0).data() == "shop\nidle" and model.index(0, 0).data(FONT) is None
    assert model.index(1, 0).data() == "blog on build-box\nidle"
    assert model.index(1, 0).data(Qt.ItemDataRole.ToolTipRole) == "ssh://build-box/srv/blog"
    assert model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole) == "/home/me/shop"
    changed: list[int] = []
    model.dataChanged.connect(lambda first, last, roles=(): changed.append(first.row()))
    model.set_counts(shop, waiting=2, running=1)
    assert model.index(0, 0).data() == "shop\n2 waiting · 1 agent running"
    assert model.index(0, 0).data(FONT).bold() and changed == [0]
    assert model.index(0, 0).data(Qt.ItemDataRole.AccessibleTextRole) == "shop: 2 waiting · 1 agent running"
    model.set_counts(shop, waiting=2, running=1)
    assert changed == [0]  # the same counts again: nothing to repaint
    model.set_counts(blog, waiting=0, running=3)
    assert model.index(1, 0).data() == "blog on build-box\n3 agents running" and model.index(1, 0).data(FONT) is None
    model.set_counts(shop, waiting=0, running=0)
    assert model.index(0, 0).data() == "shop\nidle" and model.index(0, 0).data(FONT) is None
    model.set_counts(_page(), waiting=5, running=5)  # a page the hub no longer lists
    assert changed == [0, 1, 0]


def _request(call_id: str) -> ApprovalRequested:
    return ApprovalRequested(call_id=call_id, agent_id="lead", tool="Write", summary="post.md", args={},
                             reason="writes need approval in this mode")


def test_every_waiting_request_is_listed_once_oldest_first_until_answered(qtmodeltester: Any) -> None:
    model = WaitingModel()
    qtmodeltester.check(model, force_py=True)
    blog = _page()
    model.add(blog, _request("c1"), "blog · lead: Write post.md")
    model.add(blog, _request("c2"), "blog · lead: Write about.md")
    model.add(blog, _request("c1"), "blog · lead: Write post.md")  # announced again after a resync
    assert [model.index(r, 0).data() for r in range(model.rowCount())] == \
        ["blog · lead: Write post.md", "blog · lead: Write about.md"]
    assert model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole) == \
        "blog · lead: Write post.md\nwrites need approval in this mode"
    assert model.rows[0].page is blog
    model.remove("c1")
    model.remove("c1")
    assert [row.request.call_id for row in model.rows] == ["c2"]
