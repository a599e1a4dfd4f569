"""A batch as a graph: edges from three sources, batches that cannot run, and the plan shown before running."""

from __future__ import annotations

from typing import Any

import pytest

from core.models.batches import BatchCall
from core.orchestration.graph import BatchError, CycleError, Graph, build_graph, plan_info
from tests.conftest import RUNAWAY_S


def call(id: str, *depends_on: str, **args: Any) -> BatchCall:
    return BatchCall(id=id, tool="read", depends_on=depends_on, args=args)


def chain(n: int) -> list[BatchCall]:
    """n calls, each waiting for the one after it: the deepest possible search from the first."""
    return [call(f"c{i}", *([f"c{i + 1}"] if i + 1 < n else [])) for i in range(n)]


def test_a_diamond_runs_the_middle_calls_side_by_side() -> None:
    graph = build_graph([call("a"), call("b", "a"), call("c", "a"), call("d", "b", "c")])
    assert dict(graph.needs) == {"a": set(), "b": {"a"}, "c": {"a"}, "d": {"b", "c"}}
    assert graph.dependents("a") == {"b", "c"} and graph.dependents("d") == frozenset()
    assert graph.ready(set()) == ["a"]
    assert graph.ready({"a"}) == ["b", "c"]
    assert graph.ready({"a", "b"}) == ["c"]
    assert graph.ready({"a", "b", "c"}) == ["d"]
    assert graph.ready({"a", "b", "c", "d"}) == []
    assert graph.ready(["a", "b"]) == ["c"] and graph.ready({"a": "done"}) == ["b", "c"]
    plan = plan_info(graph)
    assert plan.levels == (("a",), ("b", "c"), ("d",))
    assert plan.critical_path == ("a", "b", "d") and plan.max_parallelism == 2


def test_independent_calls_are_all_ready_at_once_in_batch_order() -> None:
    graph = build_graph([call("z"), call("m"), call("a")])
    assert graph.order == ("z", "m", "a") and graph.ready(()) == ["z", "m", "a"]
    plan = plan_info(graph)
    assert plan.levels == (("z", "m", "a"),) and plan.max_parallelism == 3
    assert plan.critical_path == ("z",)  # all equal: the first in the batch


def test_explicit_referenced_and_declared_dependencies_all_become_edges() -> None:
    calls = [call("a"), call("b"), call("d"), call("c", "a", prompt="Summarise ${b.text}", cfg={"x": ["${b.data}"]})]
    graph = build_graph(calls, declared={"c": ["d"]})
    assert graph.needs["c"] == {"a", "b", "d"}
    assert graph.dependents("b") == {"c"} and graph.dependents("d") == {"c"}
    assert graph.ready({"a", "b"}) == ["d"]


def test_an_escaped_reference_is_not_an_edge() -> None:
    graph = build_graph([call("a", cmd="echo $${outside.text}")])
    assert graph.needs["a"] == frozenset()


@pytest.mark.parametrize(("calls", "declared", "path", "message"), [
    ([call("a", "a")], None, ["a", "a"],
     'dependency cycle: a -> a (call "a" depends on "a": a call cannot wait for itself)'),
    ([call("a", p="${a.text}")], None, ["a", "a"],
     'dependency cycle: a -> a (call "a": args.p: ${a.text} refers to "a": a call cannot wait for itself)'),
    ([call("a")], {"a": ["a"]}, ["a", "a"],
     'dependency cycle: a -> a (call "a" depends on "a" (declared by its tool): a call cannot wait for itself)'),
    ([call("a", "b"), call("b", "a")], None, ["a", "b", "a"], "dependency cycle: a -> b -> a"),
    ([call("a", p="${b.text}"), call("b", q=["${a.data}"])], None, ["a", "b", "a"], "dependency cycle: a -> b -> a"),
    ([call("a"), call("b")], {"a": ["b"], "b": ["a"]}, ["a", "b", "a"],
     "dependency cycle: a -> b -> a (declared by a tool: a -> b, b -> a)"),
    ([call("a", "b"), call("b")], {"b": ["a"]}, ["a", "b", "a"],
     "dependency cycle: a -> b -> a (declared by a tool: b -> a)"),
    ([call("a", "b"), call("b", p="${a.text}")], {"b": ["a"]}, ["a", "b", "a"], "dependency cycle: a -> b -> a"),
    # Found from x, which only leads into the cycle; reported from the cycle's first call in the batch.
    ([call("x", "a"), call("b", "c"), call("c", "a"), call("a", "b")], None, ["b", "c", "a", "b"],
     "dependency cycle: b -> c -> a -> b"),
    # Two cycles: the one reached first in batch order.
    ([call("p", "q"), call("q", "p"), call("r", "s"), call("s", "r")], None, ["p", "q", "p"],
     "dependency cycle: p -> q -> p"),
])
def test_a_cycle_is_reported_with_its_exact_path(calls: list[BatchCall], declared: dict[str, list[str]] | None,
                                                 path: list[str], message: str) -> None:
    with pytest.raises(CycleError) as caught:
        build_graph(calls, declared)
    assert caught.value.path == path and str(caught.value) == message
    assert isinstance(caught.value, BatchError) and isinstance(caught.value, ValueError)


def test_a_long_cycle_keeps_its_whole_path_but_a_short_message() -> None:
    calls = chain(10_000)
    calls[-1] = call("c9999", "c0")
    with pytest.raises(CycleError) as caught:
        build_graph(calls)
    assert caught.value.path == [f"c{i}" for i in range(10_000)] + ["c0"]
    assert str(caught.value) == ("dependency cycle: c0 -> c1 -> c2 -> c3 -> c4 -> c5 -> ... -> c9995 -> c9996"
                                 " -> c9997 -> c9998 -> c9999 -> c0 (10000 calls)")


@pytest.mark.parametrize(("calls", "declared", "message"), [
    ([call("a"), call("b"), call("a")], None, 'duplicate call id "a" (calls[0] and calls[2])'),
    ([call("a", "ghost")], None, 'call "a" depends on "ghost", which is not in the batch'),
    ([call("a", edits=[{}, {"old_string": "x ${ghost.text}"}])], None,
     'call "a": args.edits[1].old_string: ${ghost.text} refers to "ghost", which is not in the batch'),
    ([call("a")], {"a": ["ghost"]}, 'call "a" depends on "ghost" (declared by its tool), which is not in the batch'),
    ([call("a")], {"ghost": ["a"]}, 'dependencies are declared for call "ghost", which is not in the batch'),
    ([call("a", p="${a.}")], None,
     "call \"a\": args.p: ${a.}: expected a field name after '.' at position 4, found '}'"),
])
def test_a_batch_that_cannot_run_says_why(calls: list[BatchCall], declared: dict[str, list[str]] | None,
                                          message: str) -> None:
    with pytest.raises(BatchError) as caught:
        build_graph(calls, declared)
    assert str(caught.value) == message and not isinstance(caught.value, CycleError)


def test_a_graph_built_by_hand_is_checked_too() -> None:
    with pytest.raises(CycleError, match="^dependency cycle: a -> b -> a$"):
        Graph(("a", "b"), {"a": frozenset({"b"}), "b": frozenset({"a"})})
    with pytest.raises(BatchError, match='^call "a" waits for "b", which is not in the batch$'):
        Graph(("a",), {"a": frozenset({"b"})})
    assert Graph(("a",), {}).needs == {"a": frozenset()}


def test_a_graph_describes_itself_briefly() -> None:
    graph = build_graph([call("a"), call("b", "a"), call("c", "a", "b")])
    assert repr(graph) == "<Graph 3 calls, 3 edges>"


def test_plan_on_a_hand_computed_batch_with_estimates() -> None:
    graph = build_graph([
        call("fetch"), call("parse", "fetch"), call("lint", "fetch"), call("index"),
        call("report", "parse", "lint", "index"), call("notify", "index"),
    ])
    estimates = {"fetch": 2.0, "parse": 1.0, "lint": 5.0, "index": 3.0, "report": 0.5, "unknown": 9.0}
    # Finish times: fetch 2, parse 3, lint 7, index 3 (notify 4 without an estimate), report 7 + 0.5.
    plan = plan_info(graph, estimates)
    assert plan.levels == (("fetch", "index"), ("parse", "lint", "notify"), ("report",))
    assert plan.critical_path == ("fetch", "lint", "report")
    assert plan.max_parallelism == 3
    # Without estimates every call counts 1: parse and lint tie, the earlier in the batch wins.
    assert plan_info(graph).critical_path == ("fetch", "parse", "report")
    # A long independent call outweighs a chain of short ones.
    assert plan_info(graph, {"notify": 10.0}).critical_path == ("index", "notify")


def test_an_empty_batch_has_an_empty_plan() -> None:
    graph = build_graph([])
    assert graph.ready(set()) == []
    plan = plan_info(graph)
    assert (plan.levels, plan.critical_path, plan.max_parallelism) == ((), (), 0)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_an_impossible_estimate_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match='the estimate for call "a" must be a finite number of seconds >= 0'):
        plan_info(build_graph([call("a")]), {"a": bad})


@pytest.mark.timeout(RUNAWAY_S)  # linear: a blink; quadratic: 10^8 steps
def test_ten_thousand_calls_in_a_chain_build_and_plan_quickly() -> None:
    calls = chain(10_000)
    plan = plan_info(build_graph(calls))
    assert len(plan.levels) == 10_000 and plan.max_parallelism == 1
    assert plan.levels[0] == ("c9999",) and plan.critical_path[0] == "c9999" and len(plan.critical_path) == 10_000


@pytest.mark.timeout(RUNAWAY_S)  # linear: a blink; quadratic: 10^8 steps
def test_ten_thousand_independent_calls_build_and_plan_quickly() -> None:
    calls = [call(f"c{i}") for i in range(10_000)]
    graph = build_graph(calls)
    plan = plan_info(graph)
    assert plan.max_parallelism == 10_000 and len(plan.levels) == 1 and plan.critical_path == ("c0",)
    assert len(graph.ready(set())) == 10_000


def test_the_path_left_from_each_call_is_its_estimate_and_the_longest_after_it() -> None:
    from core.orchestration.graph import remaining

    graph = build_graph([BatchCall(id=i, tool="T", depends_on=d) for i, d in
                         (("a", []), ("b", ["a"]), ("c", ["a"]), ("d", ["b", "c"]), ("e", []))])
    tail = remaining(graph, {"a": 1.0, "b": 2.0, "c": 5.0, "d": 1.0})
    assert tail == {"a": 7.0, "b": 3.0, "c": 6.0, "d": 1.0, "e": 1.0}  # e has no estimate: 1 s, as plan_info
    assert plan_info(graph, {"a": 1.0, "b": 2.0, "c": 5.0, "d": 1.0}).critical_path == ("a", "c", "d")
