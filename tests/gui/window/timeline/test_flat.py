"""The shown rows of the timeline as one flat list: in tree order, following the tree model, opened and closed."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from PySide6.QtCore import QModelIndex

from core import (
    AgentKey,
    AgentStarted,
    BatchKey,
    BatchStarted,
    CallFinished,
    CallQueued,
    NodeKey,
    RunKey,
    RunStatus,
    Timeline,
)
from core.models.batches import PlanInfo
from gui.window.timeline.flat import FlatTimeline
from gui.window.timeline.model import COLUMNS, TimelineModel

PLAN = PlanInfo(levels=(("x",),), critical_path=("x",), max_parallelism=1)


def _tree(model: TimelineModel, expanded: set[NodeKey], hidden: set[NodeKey],
          parent: NodeKey | None = None) -> Iterator[NodeKey]:
    """What a tree view would show, walked the slow way."""
    for key in model.told_children(parent):
        if key in hidden:
            continue
        yield key
        if key in expanded:
            yield from _tree(model, expanded, hidden, key)


def _shown(flat: FlatTimeline) -> list[NodeKey | None]:
    return [flat.key_of(flat.index(row, 0)) for row in range(flat.rowCount())]


def _session(model: TimelineModel) -> None:
    """A lead with calls and a batch, a sub-agent under it with calls, a second top-level agent."""
    timeline = model.timeline
    timeline.apply(AgentStarted(agent_id="lead", session_id="s", name="lead", agent_kind="scripted"))
    for n in range(3):
        timeline.apply(CallQueued(call_id=f"l{n}", agent_id="lead", tool="Read", args={}, summary=f"l{n}"))
    timeline.apply(BatchStarted(batch_id="b", agent_id="lead", name="tests", size=2, plan=PLAN))
    for n in range(2):
        timeline.apply(CallQueued(call_id=f"b{n}", agent_id="lead", tool="Bash", args={}, summary=f"b{n}",
                                  batch_id="b"))
    for agent, parent in (("sub", "lead"), ("other", None)):
        timeline.apply(AgentStarted(agent_id=agent, session_id="s", name=agent, agent_kind="subagent",
                                    parent_id=parent))
    for n in range(2):
        timeline.apply(CallQueued(call_id=f"s{n}", agent_id="sub", tool="Edit", args={}, summary=f"s{n}"))
        timeline.apply(CallQueued(call_id=f"o{n}", agent_id="other", tool="Grep", args={}, summary=f"o{n}"))
    model.flush()


def test_it_passes_qtmodeltester_while_rows_come_open_close_and_hide(qtmodeltester: Any) -> None:
    model = TimelineModel()
    flat = FlatTimeline(model)
    qtmodeltester.check(flat, force_py=True)  # from here on it checks every signal
    _session(model)
    flat.expand_all()
    flat.set_expanded(AgentKey("sub"), False)
    flat.set_hidden(RunKey("l1"), True)
    model.timeline.apply(CallQueued(call_id="l9", agent_id="lead", tool="Read", args={}, summary="late"))
    model.flush()
    flat.hide_only({RunKey("o0")})
    qtmodeltester.check(flat, force_py=True)
    assert flat.rowCount(flat.index(0, 0)) == 0 and flat.columnCount() == len(COLUMNS)


def test_rows_come_collapsed_and_open_in_tree_order_keeping_what_is_under_them() -> None:
    model = TimelineModel()
    flat = FlatTimeline(model)
    _session(model)
    assert _shown(flat) == [AgentKey("lead"), AgentKey("other")]  # as a tree view shows them: collapsed
    flat.set_expanded(AgentKey("lead"), True)
    assert _shown(flat) == [AgentKey("lead"), RunKey("l0"), RunKey("l1"), RunKey("l2"), BatchKey("b"),
                            AgentKey("sub"), AgentKey("other")]
    flat.set_expanded(AgentKey("sub"), True)
    flat.set_expanded(AgentKey("lead"), False)
    assert _shown(flat) == [AgentKey("lead"), AgentKey("other")]
    flat.set_expanded(AgentKey("lead"), True)  # the sub-agent is still open under it
    assert _shown(flat)[-4:] == [AgentKey("sub"), RunKey("s0"), RunKey("s1"), AgentKey("other")]
    assert flat.index(flat.row_of(RunKey("s1")), 1).data() == "s1"  # the cells are the tree model's


def test_rows_appended_under_an_open_parent_come_as_one_insert_in_their_place() -> None:
    model = TimelineModel()
    flat = FlatTimeline(model)
    flat.expand_new = True  # as the window has it
    _session(model)
    inserts: list[tuple[int, int]] = []
    flat.rowsInserted.connect(lambda parent, first, last: inserts.append((first, last)))
    for n in range(3, 103):
        model.timeline.apply(CallQueued(call_id=f"l{n}", agent_id="lead", tool="Read", args={}, summary=f"l{n}"))
    model.flush()
    at = flat.row_of(RunKey("l3"))
    assert inserts == [(at, at + 99)]
    assert _shown(flat)[at - 1:at + 1] == [RunKey("s1"), RunKey("l3")]  # after the lead's sub-agent, before other
    assert _shown(flat)[at + 100] == AgentKey("other")


def test_a_flush_of_new_batches_and_a_sub_agent_inside_one_is_one_insert_per_agent_in_tree_order() -> None:
    """Under a flood a flush brings an agent's calls, its new batches with theirs, and a sub-agent spawned inside a
    batch with its own calls: each row once, in tree order, and one insert for the lot (not one per parent)."""
    model = TimelineModel()
    model.auto_flush = False
    flat = FlatTimeline(model)
    flat.expand_new = True
    _session(model)
    inserts: list[tuple[int, int]] = []
    flat.rowsInserted.connect(lambda parent, first, last: inserts.append((first, last)))
    timeline = model.timeline
    for n in range(3):
        timeline.apply(BatchStarted(batch_id=f"nb{n}", agent_id="lead", name=f"nb{n}", size=4, plan=PLAN))
        for m in range(4):
            timeline.apply(CallQueued(call_id=f"nb{n}-{m}", agent_id="lead", tool="Bash", args={}, summary="x",
                                      batch_id=f"nb{n}"))
        if n == 0:
            timeline.apply(AgentStarted(agent_id="deep", session_id="s", name="deep", agent_kind="subagent",
                                        parent_id="lead", spawned_by="nb0-0"))
            for m in range(2):
                timeline.apply(CallQueued(call_id=f"d{m}", agent_id="deep", tool="Read", args={}, summary="d"))
        timeline.apply(CallQueued(call_id=f"after{n}", agent_id="lead", tool="Read", args={}, summary="a"))
    model.flush()
    groups = {*map(AgentKey, timeline.agents), *map(BatchKey, timeline.batches)}
    assert _shown(flat) == list(_tree(model, groups, set()))
    assert timeline.parent(AgentKey("deep")) == BatchKey("nb0")  # the sub-agent's rows are inside the batch's
    start = flat.row_of(BatchKey("nb0"))
    assert inserts == [(start, start + 3 * 5 + 1 + 2 + 3 - 1)]  # 3 batches of 4 calls, the sub-agent, its 2 calls
    assert _shown(flat)[start + 5:start + 8] == [AgentKey("deep"), RunKey("d0"), RunKey("d1")]


def test_a_row_opened_before_its_new_rows_are_shown_lists_them_once() -> None:
    """Rows the timeline has and the tree model has not shown yet (the bridge flushes once a frame) come with the
    tree model's insert, not also with the opening."""
    model = TimelineModel()
    model.auto_flush = False
    flat = FlatTimeline(model)
    _session(model)
    model.timeline.apply(CallQueued(call_id="l9", agent_id="lead", tool="Read", args={}, summary="late"))
    flat.set_expanded(AgentKey("lead"), True)  # before the flush
    assert RunKey("l9") not in _shown(flat)
    model.flush()
    assert _shown(flat).count(RunKey("l9")) == 1
    assert _shown(flat) == list(_tree(model, {AgentKey("lead")}, set()))


def test_whatever_is_done_the_list_is_the_tree_as_a_tree_view_shows_it() -> None:
    rng = random.Random(7)
    timeline = Timeline()
    model = TimelineModel(timeline)
    model.auto_flush = False
    flat = FlatTimeline(model)
    agents, batches, calls = ["a0"], [], 0
    timeline.apply(AgentStarted(agent_id="a0", session_id="s", name="a0", agent_kind="scripted"))
    expanded: set[NodeKey] = set()
    for step in range(1500):
        roll = rng.random()
        if roll < 0.05:
            name = f"a{len(agents)}"
            timeline.apply(AgentStarted(agent_id=name, session_id="s", name=name, agent_kind="subagent",
                                        parent_id=rng.choice([None, *agents])))
            agents.append(name)
        elif roll < 0.1:
            name = f"b{len(batches)}"
            timeline.apply(BatchStarted(batch_id=name, agent_id=rng.choice(agents), name=name, size=3, plan=PLAN))
            batches.append(name)
        elif roll < 0.7:
            batch = rng.choice([None, *batches]) if batches else None
            agent = timeline.batches[batch].agent_id if batch else rng.choice(agents)
            timeline.apply(CallQueued(call_id=f"c{calls}", agent_id=agent, tool="Read", args={}, summary="x",
                                      batch_id=batch))
            calls += 1
        elif roll < 0.8:
            model.flush()
        elif roll < 0.9:
            key: NodeKey = rng.choice([*map(AgentKey, agents), *map(BatchKey, batches)])
            if key in timeline.parent_table():
                open_it = rng.random() < 0.7
                flat.set_expanded(key, open_it)
                (expanded.add if open_it else expanded.discard)(key)
        elif roll < 0.96 and calls:
            hidden_now = [key for key in timeline.parent_table() if flat.is_hidden(key)]
            if hidden_now and rng.random() < 0.5:
                flat.set_hidden(rng.choice(hidden_now), False)
            else:  # a recent call, or now and then an agent or a batch with what is under it
                pool = [*map(AgentKey, agents), *map(BatchKey, batches)] if rng.random() < 0.2 else \
                    [RunKey(f"c{n}") for n in range(max(calls - 30, 0), calls)]
                flat.set_hidden(rng.choice(pool), True)
        elif roll < 0.97:
            flat.expand_all()
            expanded = {*map(AgentKey, agents), *map(BatchKey, batches)}
        if step % 10 == 0:
            hidden = {key for key in timeline.parent_table() if flat.is_hidden(key)}
            assert _shown(flat) == list(_tree(model, expanded, hidden)), step
    model.flush()
    hidden = {key for key in timeline.parent_table() if flat.is_hidden(key)}
    assert _shown(flat) == list(_tree(model, expanded, hidden))
    assert len(_shown(flat)) > 100


def test_hiding_many_rows_is_one_reset_and_a_few_are_told_row_by_row(qtbot: Any) -> None:
    model = TimelineModel()
    flat = FlatTimeline(model)
    _session(model)
    flat.expand_all()
    resets: list[int] = []
    removed: list[tuple[int, int]] = []
    flat.modelReset.connect(lambda: resets.append(1))
    flat.rowsRemoved.connect(lambda parent, first, last: removed.append((first, last)))
    flat.hide_only({RunKey("l1"), AgentKey("sub")})  # the sub-agent's calls go with it
    assert not resets and len(removed) == 2
    assert RunKey("s0") not in _shown(flat) and RunKey("l0") in _shown(flat)
    for n in range(100):
        model.timeline.apply(CallQueued(call_id=f"m{n}", agent_id="other", tool="Read", args={}, summary="x"))
    model.flush()
    flat.hide_only({RunKey(f"m{n}") for n in range(100)})
    assert resets == [1]
    every_group = {*map(AgentKey, ("lead", "sub", "other")), BatchKey("b")}
    assert _shown(flat) == list(_tree(model, every_group, {RunKey(f"m{n}") for n in range(100)}))


def test_rows_that_come_while_hiding_new_wait_hidden() -> None:
    model = TimelineModel()
    flat = FlatTimeline(model)
    flat.expand_new = True
    _session(model)
    flat.hiding_new = True
    model.timeline.apply(CallQueued(call_id="l9", agent_id="lead", tool="Read", args={}, summary="late"))
    model.flush()
    assert RunKey("l9") not in _shown(flat) and flat.is_hidden(RunKey("l9"))
    flat.set_hidden(RunKey("l9"), False)  # a filter pass found it matches
    shown = _shown(flat)
    assert shown.index(RunKey("l9")) == shown.index(RunKey("s1")) + 1  # the lead's last row, after its sub-agent's
    assert shown == list(_tree(model, {*map(AgentKey, ("lead", "sub", "other")), BatchKey("b")}, set()))


def test_changes_during_a_turn_of_the_loop_are_one_change_over_the_rows_on_screen(qtbot: Any) -> None:
    model = TimelineModel()
    flat = FlatTimeline(model)
    flat.expand_new = True
    _session(model)
    flat.on_screen = (0, 5)
    changes: list[tuple[int, int, int, int]] = []
    flat.dataChanged.connect(lambda a, b: changes.append((a.row(), b.row(), a.column(), b.column())))
    for n in range(3):
        model.painted(RunKey(f"l{n}"))  # painted once, so the tree model tells of its changes
    for n in range(3):
        model.timeline.apply(CallFinished(call_id=f"l{n}", status=RunStatus.DONE, duration_s=0.1))
    model.flush()
    assert not changes  # not yet: once, at the next turn of the loop
    qtbot.waitUntil(lambda: bool(changes))
    assert changes == [(0, 5, 0, len(COLUMNS) - 1)]
    assert flat.index(flat.row_of(RunKey("l0")), 2).data() == "✓ done"
    assert flat.data(QModelIndex()) is None


def test_folding_a_nested_branch_in_the_middle_is_one_removal_and_unfolding_one_insert(qtmodeltester: Any) -> None:
    model = TimelineModel()
    flat = FlatTimeline(model)
    flat.expand_new = True
    qtmodeltester.check(flat, force_py=True)  # from here on it checks every signal
    _session(model)
    timeline = model.timeline
    timeline.apply(AgentStarted(agent_id="deep", session_id="s", name="deep", agent_kind="subagent", parent_id="sub"))
    timeline.apply(BatchStarted(batch_id="db", agent_id="deep", name="deep batch", size=2, plan=PLAN))
    for n in range(2):
        timeline.apply(CallQueued(call_id=f"d{n}", agent_id="deep", tool="Read", args={}, summary=f"d{n}",
                                  batch_id="db"))
    model.flush()
    told: list[tuple[str, int, int]] = []
    flat.rowsRemoved.connect(lambda _parent, first, last: told.append(("removed", first, last)))
    flat.rowsInserted.connect(lambda _parent, first, last: told.append(("inserted", first, last)))
    whole = _shown(flat)
    sub = whole.index(AgentKey("sub"))
    under_sub = whole.index(AgentKey("other")) - sub - 1  # s0, s1, deep, its batch and its two calls
    assert under_sub == 6 and whole[-1] == RunKey("o1")  # rows after the branch: it is in the middle

    flat.set_expanded(AgentKey("sub"), False)
    assert told == [("removed", sub + 1, sub + under_sub)]
    assert _shown(flat) == whole[:sub + 1] + whole[sub + 1 + under_sub:]
    flat.set_expanded(AgentKey("sub"), True)
    assert told[1:] == [("inserted", sub + 1, sub + under_sub)] and _shown(flat) == whole

    flat.set_expanded(BatchKey("db"), False)  # a branch folded inside the branch, kept while its parent is folded
    flat.set_expanded(AgentKey("sub"), False)
    timeline.apply(CallQueued(call_id="d9", agent_id="deep", tool="Read", args={}, summary="late"))
    model.flush()  # a row came under the folded branch: unfolding it lists it again
    flat.set_expanded(AgentKey("sub"), True)
    expanded = {AgentKey("lead"), BatchKey("b"), AgentKey("sub"), AgentKey("deep"), AgentKey("other")}
    assert _shown(flat) == list(_tree(model, expanded, set()))
    assert RunKey("d9") in _shown(flat) and RunKey("d0") not in _shown(flat)
    assert told[-1] == ("inserted", sub + 1, sub + 5)  # s0, s1, deep, its (folded) batch, d9
    flat.expand_all()
    assert _shown(flat) == list(_tree(model, expanded | {BatchKey("db")}, set()))
