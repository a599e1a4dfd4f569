"""A console that undoes and redoes one big call as fast as it can until it is killed (run by test_crash.py).

On its first run it has an agent rewrite 200 files with one Bash command; on every run it then
alternates undo and redo of that call, so a kill -9 can land while an undo stages its files, renames
them into place, or records itself.  It prints "ready" once the loop starts.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

FILES = 200


async def main(workspace: Path) -> None:
    from core import Console

    async with Console(workspace) as console:
        console.set_mode("bypass")
        calls = [r for r in await console.history() if r.tool == "Bash"]
        if not calls:
            agent = await console.start_agent("crash-undoer", "scripted")
            await console.call(agent, "Bash", {"command": "for f in f*.txt; do printf 'new\\n%.0s' $(seq 300) > $f; done"})
            calls = [r for r in await console.history() if r.tool == "Bash"]
        call_id = calls[0].call_id
        print("ready", flush=True)
        while True:
            [record] = [r for r in await console.history() if r.call_id == call_id]
            report = await (console.redo(call_id) if record.undone_paths else console.undo(call_id))
            if not report.ok:
                print(f"refused: {report.message}", flush=True)
                return


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    asyncio.run(main(Path(sys.argv[1])))
