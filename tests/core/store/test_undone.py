"""Which changes are undone now, from every undo ever made: undos of undos redo, and later ones win."""

from __future__ import annotations

from core.store.undone import RollbackLink, undoing, undone_positions


def test_an_undo_of_some_changes_leaves_the_others_in_force() -> None:
    undo = RollbackLink("u1", "c1", reverts=[2, 0])
    undone = undoing([undo], {"c1": 3})
    assert undone_positions(undone, "c1") == {0: "u1", 2: "u1"}
    assert undone[("c1", 2)] == ("u1", 0) and undone[("c1", 0)] == ("u1", 1)
    assert undone_positions(undone, "c2") == {}


def test_undoing_an_undo_redoes_the_call_and_a_third_undo_undoes_it_again() -> None:
    undo = RollbackLink("u1", "c1", reverts=[0, 1])
    redo = RollbackLink("u2", "u1", reverts=[0, 1])
    again = RollbackLink("u3", "c1", reverts=[0, 1])
    assert undone_positions(undoing([undo], {}), "c1") == {0: "u1", 1: "u1"}
    assert undone_positions(undoing([undo, redo], {}), "c1") == {}
    assert undone_positions(undoing([undo, redo, again], {}), "c1") == {0: "u3", 1: "u3"}


def test_redoing_one_file_of_an_undo_leaves_the_rest_undone() -> None:
    undo = RollbackLink("u1", "c1", reverts=[0, 1])
    redo_second = RollbackLink("u2", "u1", reverts=[1])
    undone = undoing([undo, redo_second], {})
    assert undone_positions(undone, "c1") == {0: "u1"}
    assert undone_positions(undone, "u1") == {1: "u2"}  # the redo itself is in force, and could be undone


def test_an_undo_of_a_redo_undoes_the_call_once_more() -> None:
    links = [RollbackLink("u1", "c1", reverts=[0]), RollbackLink("u2", "u1", reverts=[0]),
             RollbackLink("u3", "u2", reverts=[0])]
    assert undone_positions(undoing(links, {}), "c1") == {0: "u1"}


def test_an_undo_from_before_redo_existed_undoes_every_change_of_its_call() -> None:
    legacy = RollbackLink("u0", "c1", reverts=[None])
    assert undone_positions(undoing([legacy], {"c1": 3, "c2": 5}), "c1") == {0: "u0", 1: "u0", 2: "u0"}


def test_git_moves_are_undone_and_redone_at_negative_positions_apart_from_files() -> None:
    undo = RollbackLink("u1", "c1", reverts=[0], git_reverts=[-1, -2])
    assert undone_positions(undoing([undo], {}), "c1") == {0: "u1", -1: "u1", -2: "u1"}
    redo_first_move = RollbackLink("u2", "u1", reverts=[], git_reverts=[-1])
    assert undone_positions(undoing([undo, redo_first_move], {}), "c1") == {0: "u1", -2: "u1"}
