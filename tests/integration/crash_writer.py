"""A console that writes files as fast as it can until it is killed (run by test_crash.py as a real process).

Each round writes every file with the round's content through the real pipeline (Write and a Bash
command), so a kill -9 can land inside a blob write, a journal commit, or a file's rename.  The command
writes a temporary file and renames it into place: a shell's own `>` truncates before it writes, and
a kill between the two would leave an empty file no supervisor could prevent.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path


async def main(workspace: Path, start: int) -> None:
    from core import Console

    async with Console(workspace) as console:
        await console.add_rule("Write", "allow", "session")
        await console.add_rule("Bash(printf:*)", "allow", "session")
        await console.add_rule("Bash(mv:*)", "allow", "session")
        agent = await console.start_agent("crash-writer", "scripted")
        print("ready", flush=True)
        for round_ in range(start, start + 100_000):
            for name in ("a", "b", "c"):
                content = f"{name} round {round_}\n" * 200
                await console.call(agent, "Write", {"file_path": str(workspace / f"{name}.txt"), "content": content})
            await console.call(agent, "Bash", {"command": f"printf 'shell round {round_}\\n' > shell.tmp && "
                                                          "mv shell.tmp shell.txt"})


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2])))
