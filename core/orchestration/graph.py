"""A batch as a dependency graph: who waits for whom, whether it can run at all, and its shape.

Edges come from three places: a call's `depends_on`, the calls its arguments reference (`${id...}`)
and dependencies its tool declares.  Everything here is O(calls + edges) and iterative, so a chain of
ten thousand calls costs no recursion depth.  Ties are always broken by the order of the batch, so the
same batch gives the same cycle, levels and critical path on every run.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from types import MappingProxyType

from core.models.batches import BatchCall, PlanInfo
from core.orchestration.refs import BadReference, iter_references

_SHOWN = 12  # calls of a cycle named in its message; `CycleError.path` keeps them all


class BatchError(ValueError):
    """A batch that cannot run at all: duplicate ids, an unknown dependency, a cycle."""


class CycleError(BatchError):
    """Calls that wait for each other, so none of them can ever start."""

    def __init__(self, path: list[str], detail: str = "") -> None:
        shown = path if len(path) <= _SHOWN else [*path[:_SHOWN // 2], "...", *path[-_SHOWN // 2:]]
        size = f" ({len(path) - 1} calls)" if len(shown) < len(path) else ""
        super().__init__("dependency cycle: " + " -> ".join(shown) + size + (f" ({detail})" if detail else ""))
        self.path = path
        """The cycle, each call waiting for the next, first call repeated at the end: `["a", "b", "a"]`."""


@dataclass(frozen=True, repr=False)
class Graph:
    """An acyclic batch: construction checks that every need is in the batch and that there is no cycle."""

    order: tuple[str, ...]
    """The batch's ids in the order given."""
    needs: Mapping[str, frozenset[str]] = field(hash=False)
    """id -> the ids it waits for."""
    _needs: Mapping[str, tuple[str, ...]] = field(init=False, compare=False, hash=False)
    _dependents: Mapping[str, tuple[str, ...]] = field(init=False, compare=False, hash=False)
    _topological: tuple[str, ...] = field(init=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if len(set(self.order)) != len(self.order):
            raise BatchError("a graph's order must name each id once")
        if extra := sorted(set(self.needs) - set(self.order)):
            raise BatchError(f'needs are given for "{extra[0]}", which is not in the batch')
        needs = {id: frozenset(self.needs.get(id, ())) for id in self.order}
        for id in self.order:
            if unknown := sorted(need for need in needs[id] if need not in needs):
                raise BatchError(f'call "{id}" waits for "{unknown[0]}", which is not in the batch')
        # Two bucket passes sort both adjacency lists by batch order in linear time.
        dependents: dict[str, list[str]] = {id: [] for id in self.order}
        for id in self.order:
            for need in needs[id]:
                dependents[need].append(id)
        ordered_needs: dict[str, list[str]] = {id: [] for id in self.order}
        for id in self.order:
            for dependent in dependents[id]:
                ordered_needs[dependent].append(id)
        object.__setattr__(self, "needs", MappingProxyType(needs))
        object.__setattr__(self, "_needs", MappingProxyType({k: tuple(v) for k, v in ordered_needs.items()}))
        object.__setattr__(self, "_dependents", MappingProxyType({k: tuple(v) for k, v in dependents.items()}))
        object.__setattr__(self, "_topological", _topological(self.order, self._needs))

    def dependents(self, id: str) -> frozenset[str]:
        """The ids that wait for `id`."""
        return frozenset(self._dependents[id])

    def ready(self, done: Collection[str]) -> list[str]:
        """Ids not in `done` whose needs all are, in batch order (O(calls + edges) per call)."""
        done = done if isinstance(done, (AbstractSet, Mapping)) else set(done)
        return [id for id in self.order if id not in done and all(need in done for need in self._needs[id])]

    def __repr__(self) -> str:
        edges = sum(len(needs) for needs in self._needs.values())
        return f"<Graph {len(self.order)} calls, {edges} edges>"


def build_graph(calls: Sequence[BatchCall], declared: Mapping[str, Iterable[str]] | None = None) -> Graph:
    """The batch's graph, or a BatchError saying why the batch cannot run.

    `declared` maps a call's id to further ids it must wait for (dependencies its tool declares).
    """
    first_seen: dict[str, int] = {}
    for index, call in enumerate(calls):
        if call.id in first_seen:
            raise BatchError(f'duplicate call id "{call.id}" (calls[{first_seen[call.id]}] and calls[{index}])')
        first_seen[call.id] = index
    declared = declared or {}
    if unknown := [id for id in declared if id not in first_seen]:
        raise BatchError(f'dependencies are declared for call "{unknown[0]}", which is not in the batch')
    edges = {call.id: _edges_of(call, list(declared.get(call.id, ())), first_seen) for call in calls}
    try:
        return Graph(tuple(first_seen), {id: frozenset(needs) for id, needs in edges.items()})
    except CycleError as e:
        # A tool's declared edge (two calls touching one file) can close a cycle the agent never wrote.
        by_tool = [f"{a} -> {b}" for a, b in zip(e.path, e.path[1:]) if edges[a].get(b)]
        if not by_tool:
            raise
        shown = ", ".join(by_tool[:3]) + (", ..." if len(by_tool) > 3 else "")
        raise CycleError(e.path, f"declared by a tool: {shown}") from None


def _edges_of(call: BatchCall, declared: list[str], batch: Mapping[str, int]) -> dict[str, bool]:
    """What `call` waits for, each marked True when only its tool declared it.

    An id outside the batch is a BatchError and the call itself a CycleError, naming where it comes from.
    """
    sources = [(id, False, f'call "{call.id}" depends on "{id}"') for id in call.depends_on]
    try:
        sources += [(ref.call, False, f'call "{call.id}": {where}: {ref.text} refers to "{ref.call}"')
                    for where, ref in iter_references(call.args)]
    except BadReference as e:
        raise BatchError(f'call "{call.id}": {e}') from e
    sources += [(id, True, f'call "{call.id}" depends on "{id}" (declared by its tool)') for id in declared]
    edges: dict[str, bool] = {}
    for id, by_tool, source in sources:
        if id == call.id:
            raise CycleError([id, id], f"{source}: a call cannot wait for itself")
        if id not in batch:
            raise BatchError(f"{source}, which is not in the batch")
        edges.setdefault(id, by_tool)
    return edges


def _topological(order: tuple[str, ...], needs: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """Needs before the ids that wait for them, by an iterative depth-first search; CycleError on a cycle."""
    state: dict[str, int] = {}  # absent: unvisited, 1: on the current path, 2: finished
    result: list[str] = []
    for root in order:
        if root in state:
            continue
        state[root] = 1
        stack: list[tuple[str, Iterator[str]]] = [(root, iter(needs[root]))]
        while stack:
            id, pending = stack[-1]
            for need in pending:
                if need not in state:
                    state[need] = 1
                    stack.append((need, iter(needs[need])))
                    break
                if state[need] == 1:
                    raise CycleError(_cycle([id for id, _ in stack], need, order))
            else:
                state[id] = 2
                result.append(id)
                stack.pop()
    return tuple(result)


def _cycle(path: list[str], back_to: str, order: tuple[str, ...]) -> list[str]:
    """The cycle closed by `back_to`, rotated to start at its earliest call in batch order."""
    loop = path[path.index(back_to):]
    position = {id: index for index, id in enumerate(order)}
    start = min(range(len(loop)), key=lambda i: position[loop[i]])
    loop = loop[start:] + loop[:start]
    return loop + [loop[0]]


def plan_info(graph: Graph, estimates: Mapping[str, float] | None = None) -> PlanInfo:
    """Levels, critical path and widest level; a call's estimate defaults to 1.0."""
    estimates = estimates or {}
    depth: dict[str, int] = {}
    finish: dict[str, float] = {}
    via: dict[str, str | None] = {}
    for id in graph._topological:
        needs = graph._needs[id]
        depth[id] = 1 + max((depth[need] for need in needs), default=-1)
        # max() keeps the first of equals, and needs are in batch order: ties go to the earlier call.
        before = via[id] = max(needs, key=finish.__getitem__, default=None)
        finish[id] = _estimate(estimates, id) + (finish[before] if before is not None else 0.0)
    levels: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for id in graph.order:
        levels[depth[id]].append(id)
    chain: list[str] = []
    end = max(graph.order, key=finish.__getitem__, default=None)
    while end is not None:
        chain.append(end)
        end = via[end]
    return PlanInfo(levels=tuple(tuple(level) for level in levels), critical_path=tuple(reversed(chain)),
                    max_parallelism=max((len(level) for level in levels), default=0),
                    estimates={id: _estimate(estimates, id) for id in graph.order} if estimates else {})


def remaining(graph: Graph, estimates: Mapping[str, float]) -> dict[str, float]:
    """For each call, the longest estimated path from its start to the batch's end, through what waits on it:
    the call to start first when more are ready than may run (it holds up the most)."""
    tail: dict[str, float] = {}
    for id in reversed(graph._topological):
        tail[id] = _estimate(estimates, id) + max((tail[d] for d in graph._dependents[id]), default=0.0)
    return tail


def _estimate(estimates: Mapping[str, float], id: str) -> float:
    value = float(estimates.get(id, 1.0))
    if not math.isfinite(value) or value < 0:
        raise ValueError(f'the estimate for call "{id}" must be a finite number of seconds >= 0, not {value}')
    return value
