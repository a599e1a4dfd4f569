"""The inbox: every waiting call in one list, how long each has waited and has left, and J / K to move through it.

The clock the inbox reads is set by the test (the module's `time`), so the countdown is exact and no test waits.
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt

from core import ApprovalRequested, Impact
from gui.window.approvals import inbox
from gui.window.approvals.inbox import InboxModel, InboxView, seconds_left, waited
from gui.window.kit.theme import LIGHT

ASKED = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
PATHS = {"lead": "lead", "fe": "lead › frontend", "docs": "docs-writer"}


def _request(call_id: str, agent_id: str = "lead", summary: str = "notes.txt", **fields: Any) -> ApprovalRequested:
    return ApprovalRequested(call_id=call_id, agent_id=agent_id, tool="Write", summary=summary, args={},
                             reason="writes need approval in this mode", at=ASKED, **fields)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """The wall clock the inbox reads, at the moment the requests were asked; move it with `clock.now += s`."""
    now = SimpleNamespace(now=ASKED.timestamp())
    monkeypatch.setattr(inbox, "time", SimpleNamespace(time=lambda: now.now))
    return now


def _model(*requests: ApprovalRequested) -> InboxModel:
    model = InboxModel(PATHS.__getitem__)
    for request in requests:
        model.add(request)
    return model


def _row(model: InboxModel, call_id: str) -> list[str]:
    row = model.row_of(call_id)
    assert row is not None
    return [model.index(row, column).data() for column in range(model.columnCount())]


def test_each_row_says_who_asks_what_how_risky_how_long_it_waited_and_has_left(
        qtbot: Any, qtmodeltester: Any, clock: SimpleNamespace) -> None:
    model = _model()
    qtmodeltester.check(model, force_py=True)  # and on every change below
    model.add(_request("c1", "fe", "src/app.ts", impact=Impact(level="high", reasons=("writes outside",))))
    model.add(_request("c2", "docs", "README.md", timeout_s=30, on_timeout="allow"))
    model.add(_request("c3", impact=Impact(level="medium")))
    clock.now += 12
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(6)] == \
        ["Agent", "Tool", "Target", "Impact", "Waiting", "Left"]
    assert _row(model, "c1") == ["lead › frontend", "Write", "src/app.ts", "high", "12 s", ""]  # waits for ever
    assert _row(model, "c2") == ["docs-writer", "Write", "README.md", "low", "12 s", "allowed in 18 s"]
    colours = [model.index(row, 3).data(Qt.ItemDataRole.ForegroundRole) for row in range(3)]  # c1, c2, c3
    assert [c.name() if c else None for c in colours] == [LIGHT.danger, None, LIGHT.warning]
    tip = model.index(0, 2).data(Qt.ItemDataRole.ToolTipRole)
    assert tip == "lead › frontend: Write src/app.ts\nwrites need approval in this mode"
    model.remove("c2")
    assert model.row_of("c2") is None and model.rowCount() == 2


def test_the_countdown_moves_on_with_the_clock_and_stops_at_zero(qtbot: Any, clock: SimpleNamespace) -> None:
    model = _model(_request("c1", timeout_s=30))
    due: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda first, last, roles=(): due.append((first.column(), last.column())))
    clock.now += 3
    assert _row(model, "c1")[4:] == ["3 s", "denied in 27 s"]  # fixed when asked: 30 from then, not from now
    clock.now += 62
    model.tick()
    assert due == [(4, 5)]  # the age and countdown columns are repainted, nothing else
    assert _row(model, "c1")[4:] == ["1 min 05 s", "denied in 0 s"]


def test_how_long_a_request_waited_and_has_left_in_words() -> None:
    request = _request("c1", timeout_s=8)
    asked = ASKED.timestamp()
    assert [waited(request, asked + s) for s in (0, 59, 60, 3599, 3661)] == \
        ["0 s", "59 s", "1 min 00 s", "59 min 59 s", "1 h 01 min"]
    assert [seconds_left(request, asked + s) for s in (0, 2.5, 8, 20)] == [8, 6, 0, 0]  # rounded up, never below 0
    assert seconds_left(_request("c2"), asked) is None


def _view(qtbot: Any, model: InboxModel) -> InboxView:
    view = InboxView(model)
    qtbot.addWidget(view)
    view.show()
    view.setFocus()
    return view


def test_j_and_k_move_through_the_requests_and_say_which_one_is_chosen(qtbot: Any, clock: SimpleNamespace) -> None:
    model = _model(*(_request(f"c{n}", summary=f"file{n}.txt") for n in range(3)))
    view = _view(qtbot, model)
    chosen: list[str] = []
    view.chosen.connect(chosen.append)
    view.setCurrentIndex(model.index(0, 0))
    for key in (Qt.Key.Key_J, Qt.Key.Key_J, Qt.Key.Key_J, Qt.Key.Key_K):  # the third J: already at the last
        qtbot.keyClick(view, key)
    assert view.currentIndex().row() == 1
    assert chosen == ["c0", "c1", "c2", "c1"]
    qtbot.keyClick(view, Qt.Key.Key_K)
    qtbot.keyClick(view, Qt.Key.Key_K)
    assert view.currentIndex().row() == 0 and chosen[-1] == "c0"
    qtbot.keyClick(view, Qt.Key.Key_Down)  # the arrow keys move as they always do
    assert view.currentIndex().row() == 1 and chosen[-1] == "c1"


def test_the_list_follows_the_panel_without_announcing_it_back(qtbot: Any, clock: SimpleNamespace) -> None:
    model = _model(*(_request(f"c{n}", summary=f"file{n}.txt") for n in range(3)))
    view = _view(qtbot, model)
    chosen: list[str] = []
    view.chosen.connect(chosen.append)
    view.show_current("c2")
    assert view.currentIndex().row() == 2 and chosen == []
    view.show_current("gone")  # answered meanwhile: the list stays where it is
    assert view.currentIndex().row() == 2
    qtbot.keyClick(view, Qt.Key.Key_K)
    assert chosen == ["c1"]


def _columns_whole(view: InboxView) -> list[str]:
    """The headers of the columns shown, each ending inside the view (none cut off at its edge)."""
    header = view.header()
    shown = [c for c in range(header.count()) if not header.isSectionHidden(c)]
    assert all(header.sectionViewportPosition(c) + header.sectionSize(c) <= view.viewport().width() for c in shown)
    return [str(view.model().headerData(c, Qt.Orientation.Horizontal)) for c in shown]


def test_columns_step_aside_rather_than_be_cut_and_left_shows_only_for_a_deadline(
        qtbot: Any, clock: SimpleNamespace) -> None:
    model = _model(_request("c1", "fe", "src/app.ts"), _request("c2"))
    view = _view(qtbot, model)
    view.resize(900, 200)
    qtbot.waitUntil(lambda: _columns_whole(view) == ["Agent", "Tool", "Target", "Impact", "Waiting"])
    view.resize(380, 200)  # the right column of a 1024-pixel hub
    qtbot.waitUntil(lambda: _columns_whole(view) == ["Agent", "Tool", "Target", "Impact"])
    assert view.columnWidth(2) >= inbox.MIN_TARGET
    model.add(_request("c3", "docs", "README.md", timeout_s=30, on_timeout="deny"))
    qtbot.waitUntil(lambda: _columns_whole(view) == ["Agent", "Tool", "Target", "Impact", "Left"])
    view.resize(900, 200)
    qtbot.waitUntil(lambda: _columns_whole(view) == ["Agent", "Tool", "Target", "Impact", "Waiting", "Left"])


def test_the_list_is_as_tall_as_its_requests_need_from_two_to_six_rows(qtbot: Any, clock: SimpleNamespace) -> None:
    model = _model(_request("c0"), _request("c1"))
    view = _view(qtbot, model)
    view.resize(600, view.height())

    def rows_whole() -> int:
        return sum(view.viewport().rect().contains(view.visualRect(model.index(r, 0))) for r in range(model.rowCount()))

    for count in (2, 3, 6, 8):
        while model.rowCount() < count:
            model.add(_request(f"c{model.rowCount()}"))
        qtbot.waitUntil(lambda count=count: rows_whole() == min(count, 6))
        spare = view.viewport().height() - min(count, 6) * view.sizeHintForRow(0)
        assert 0 <= spare < view.sizeHintForRow(0), "an empty row's worth of space below the requests"
