"""CallCache: a read-only call is answered from the cache only when the watcher vouches nothing it read changed."""

from __future__ import annotations

from pathlib import Path

from core.changes.watcher import DirtyTracker
from core.ids import new_agent_id, new_call_id
from core.paths import Workspace
from core.run.cache import CallCache
from core.run.results import ResultCache
from core.tools.base import ReadState, ToolContext, ToolOutput
from core.tools.read import Read, ReadArgs
from tests.conftest import run


class Watcher:
    """Stands in for DirtyTracker.sync: whether every change made until now has been seen."""

    def __init__(self) -> None:
        self.caught_up = True

    def sync(self) -> bool:
        return self.caught_up


def _workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    (tmp_path / "ws" / "src" / "a.py").write_text("a = 1\n")
    return Workspace(tmp_path / "ws")


def _ctx(ws: Workspace) -> ToolContext:
    return ToolContext(workspace=ws, agent_id=new_agent_id(), call_id=new_call_id(), read_state=ReadState())


def test_a_stored_result_answers_the_same_call_and_the_tool_hears_of_the_hit(tmp_path: Path) -> None:
    ws, watcher, tool = _workspace(tmp_path), Watcher(), Read()
    cache = CallCache(ResultCache(), ws, watcher.sync)
    args = ReadArgs(file_path=str(ws.root / "src" / "a.py"))

    async def scenario() -> None:
        await cache.store(cache.begin(), tool, args, ToolOutput("     1\ta = 1", {"lines": 1}))
        ctx = _ctx(ws)
        hit = await cache.lookup(tool, args, ctx)
        assert hit is not None and (hit.text, hit.data) == ("     1\ta = 1", {"lines": 1})
        assert ws.root / "src" / "a.py" in ctx.read_state.seen  # Read notes the file as seen: Edit may follow
        assert await cache.lookup(tool, ReadArgs(file_path=str(ws.root / "src" / "a.py"), limit=1), ctx) is None

    run(scenario())
    assert (cache.stats.hits, cache.stats.misses, cache.stats.entries) == (1, 1, 1)


def test_without_the_watchers_word_nothing_is_served_or_stored(tmp_path: Path) -> None:
    ws, watcher, tool = _workspace(tmp_path), Watcher(), Read()
    cache = CallCache(ResultCache(), ws, watcher.sync)
    args = ReadArgs(file_path=str(ws.root / "src" / "a.py"))

    async def scenario() -> None:
        await cache.store(cache.begin(), tool, args, ToolOutput("first"))
        watcher.caught_up = False
        ctx = _ctx(ws)
        assert await cache.lookup(tool, args, ctx) is None and ctx.read_state.seen == {}
        await cache.store(cache.begin(), tool, ReadArgs(file_path=str(ws.root / "src" / "b.py")), ToolOutput("b"))
        watcher.caught_up = True
        assert await cache.lookup(tool, ReadArgs(file_path=str(ws.root / "src" / "b.py")), _ctx(ws)) is None

    run(scenario())
    assert cache.stats.entries == 1


def test_a_change_to_what_a_result_read_drops_it_even_while_the_tool_ran(tmp_path: Path) -> None:
    ws, watcher, tool = _workspace(tmp_path), Watcher(), Read()
    cache = CallCache(ResultCache(), ws, watcher.sync)
    args = ReadArgs(file_path=str(ws.root / "src" / "a.py"))

    async def scenario() -> None:
        await cache.store(cache.begin(), tool, args, ToolOutput("old"))
        cache.changed(frozenset({"src/other.py"}), False)
        assert await cache.lookup(tool, args, _ctx(ws)) is not None
        cache.changed(frozenset({"src/a.py"}), False)
        assert await cache.lookup(tool, args, _ctx(ws)) is None
        since = cache.begin()
        cache.changed(frozenset({"src/a.py"}), False)  # changed while the tool was reading
        await cache.store(since, tool, args, ToolOutput("maybe stale"))
        assert await cache.lookup(tool, args, _ctx(ws)) is None
        await cache.store(cache.begin(), tool, args, ToolOutput("fresh"))
        cache.changed(frozenset(), True)
        assert await cache.lookup(tool, args, _ctx(ws)) is None

    run(scenario())


def test_a_tool_that_cannot_say_what_it_read_is_never_cached(tmp_path: Path) -> None:
    ws, watcher, tool = _workspace(tmp_path), Watcher(), Read()
    cache = CallCache(ResultCache(), ws, watcher.sync)
    outside = ReadArgs(file_path=str(tmp_path / "elsewhere.txt"))  # outside the workspace: no watcher sees it

    async def scenario() -> None:
        await cache.store(cache.begin(), tool, outside, ToolOutput("text"))
        assert await cache.lookup(tool, outside, _ctx(ws)) is None

    run(scenario())
    assert cache.stats.entries == 0


def test_only_a_working_watcher_keeps_a_cache_and_its_changes_reach_it(tmp_path: Path) -> None:
    ws, tool = _workspace(tmp_path), Read()
    tracker = DirtyTracker(ws.root)
    assert CallCache.kept_by(None, ws) is None
    assert CallCache.kept_by(tracker, ws) is None  # not started: it could not tell what changed
    assert tracker.start()
    try:
        cache = CallCache.kept_by(tracker, ws)
        assert cache is not None
        args = ReadArgs(file_path=str(ws.root / "src" / "a.py"))

        async def scenario() -> None:
            assert cache is not None
            await cache.store(cache.begin(), tool, args, ToolOutput("a = 1"))
            assert await cache.lookup(tool, args, _ctx(ws)) is not None
            (ws.root / "src" / "a.py").write_text("a = 2\n")
            assert await cache.lookup(tool, args, _ctx(ws)) is None  # seen before the lookup answers

        run(scenario())
    finally:
        tracker.stop()
