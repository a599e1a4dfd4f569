"""The timeline rows' prepared texts, colours and Gantt bars: made when a row is painted, forgotten beyond
PREPARED runs, kept current for agents and batches."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from core import (
    AgentKey,
    AgentStarted,
    BatchKey,
    BatchStarted,
    CallFinished,
    CallQueued,
    CallStarted,
    RollbackFinished,
    RunKey,
    RunStatus,
    Timeline,
)
from core.errors import ErrorInfo, ErrorKind
from core.models.batches import PlanInfo
from gui.window.timeline.model import TimelineModel
from gui.window.timeline.prepared import PREPARED, PreparedRows

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _timeline(runs: int = 0) -> Timeline:
    """An agent with `runs` finished Read calls (c0, c1, ...)."""
    timeline = Timeline()
    timeline.apply(AgentStarted(agent_id="a", session_id="s", name="lead", agent_kind="scripted", at=_at(0)))
    for n in range(runs):
        timeline.apply(CallQueued(call_id=f"c{n}", agent_id="a", tool="Read", args={}, summary=f"file{n}.txt",
                                  at=_at(1)))
        timeline.apply(CallFinished(call_id=f"c{n}", status=RunStatus.DONE, duration_s=0.5, at=_at(1.5)))
    return timeline


def _rows(timeline: Timeline) -> PreparedRows:
    rows = PreparedRows()
    rows.reset(timeline)
    return rows


def test_a_run_row_is_forgotten_beyond_prepared_rows_and_prepared_again_when_painted() -> None:
    rows = _rows(_timeline(PREPARED + 1))
    first = RunKey("c0")
    rows.prepare(first, _at(2))
    shown = rows.cells[first], rows.tips[first], rows.brushes[first], rows.bar_tips[first]
    assert shown == (("Read", "file0.txt", "✓ done", "500 ms", "", ""), "c0", "success", "queued 0.50 s")
    for n in range(1, PREPARED + 1):  # a person scrolls through every row
        rows.prepare(RunKey(f"c{n}"), _at(2))
    assert len(rows.prepared) == PREPARED
    assert first not in rows.cells and first not in rows.bars and first not in rows.tips  # the oldest painted: gone
    assert RunKey("c1") in rows.cells and RunKey(f"c{PREPARED}") in rows.cells
    rows.prepare(first, _at(2))  # scrolled back to the top
    assert (rows.cells[first], rows.tips[first], rows.brushes[first], rows.bar_tips[first]) == shown
    assert RunKey("c1") not in rows.cells and len(rows.prepared) == PREPARED  # now the oldest painted goes


def test_the_model_paints_a_forgotten_row_as_it_was(qtbot: Any) -> None:
    model = TimelineModel(_timeline(PREPARED + 1))
    lead = model.index(0, 0)
    texts = [model.index(0, column, lead).data() for column in range(3)]
    for row in range(1, PREPARED + 1):
        model.index(row, 2, lead).data()
    assert RunKey("c0") not in model._rows.cells  # forgotten: painted again below, it is prepared again
    assert [model.index(0, column, lead).data() for column in range(3)] == texts == ["Read", "file0.txt", "✓ done"]


def test_a_changed_run_is_prepared_anew_with_its_new_status_colour_and_error(qtbot: Any) -> None:
    timeline = _timeline()
    timeline.apply(CallQueued(call_id="r", agent_id="a", tool="Bash", args={}, summary="make", at=_at(1)))
    timeline.apply(CallStarted(call_id="r", at=_at(1)))
    rows = _rows(timeline)
    key = RunKey("r")
    rows.refresh(key, _at(2))
    rows.prepare(key, _at(2))
    assert rows.cells[key][2] == "● running" and rows.brushes[key] == "running" and key in rows.live
    error = ErrorInfo(kind=ErrorKind.NOT_FOUND, message="make: no rule to make target")
    timeline.apply(CallFinished(call_id="r", status=RunStatus.FAILED, error=error, duration_s=1.0, at=_at(3)))
    rows.refresh(key, _at(3))
    assert key not in rows.cells and key not in rows.live  # no longer ticking; prepared when painted again
    rows.prepare(key, _at(3))
    assert rows.cells[key][2] == "✗ failed" and rows.brushes[key] == "danger"
    assert rows.tips[key] == "make: no rule to make target"
    timeline.apply(RollbackFinished(rollback_id="rb", call_id="r", paths=("out.o",), undone_paths=("out.o",),
                                    undone_by="rb"))
    rows.refresh(key, _at(4))
    rows.prepare(key, _at(4))
    assert rows.cells[key][2] == "↶ undone" and rows.brushes[key] == "muted"


def test_an_agent_row_rolls_up_its_calls_and_its_runs_share_its_time_window() -> None:
    timeline = _timeline(2)
    timeline.apply(CallQueued(call_id="bad", agent_id="a", tool="Read", args={}, summary="x", at=_at(2)))
    timeline.apply(CallFinished(call_id="bad", status=RunStatus.FAILED, at=_at(3)))
    rows = _rows(timeline)
    lead = AgentKey("a")
    rows.refresh(lead, _at(4))
    assert rows.cells[lead][:2] == ("lead", "3 calls · 1 failed") and rows.brushes[lead] == "danger"
    assert rows.tips[lead].startswith("lead")
    for call_id in ("c0", "c1", "bad"):
        rows.prepare(RunKey(call_id), _at(4))
    windows = {id(rows.bars[RunKey(call_id)].window) for call_id in ("c0", "c1", "bad")}
    assert len(windows) == 1  # drawn to one scale: the bars line up
    assert list(rows.groups_of(RunKey("c0"))) == [lead] and list(rows.groups_of(lead)) == [lead]


def test_a_batch_row_is_prepared_only_once_painted_and_reset_forgets_everything() -> None:
    timeline = _timeline(1)
    plan = PlanInfo(levels=(("find",),), critical_path=("find",), max_parallelism=1)
    timeline.apply(BatchStarted(batch_id="b1", agent_id="a", name="scan", plan=plan, size=1, at=_at(2)))
    rows = _rows(timeline)
    batch = BatchKey("b1")
    assert rows.unshown(batch) and not rows.unshown(AgentKey("a"))
    rows.prepare(batch, _at(2))
    assert not rows.unshown(batch) and rows.cells[batch][0] == "☰ scan"
    rows.prepare(RunKey("c0"), _at(2))
    rows.reset(_timeline())
    assert not rows.cells and not rows.bars and not rows.prepared and not rows.windows and not rows.live
