"""Undo on a full disk, run by test_undo_faults.py inside bubblewrap with a small tmpfs as the workspace's disk.

An agent shrinks a 1 MB file with Write; the disk is then filled to the last byte; the undo must fail
with a clear message and change nothing; once space is freed the same undo succeeds.  Prints one JSON
object with what it saw.
"""

from __future__ import annotations

import asyncio
import errno
import json
import sys
from pathlib import Path

BIG = "a line of the original file\n" * 40_000  # about 1 MB


async def main(disk: Path, state: Path) -> dict[str, object]:
    from core import Console

    workspace = disk / "ws"
    workspace.mkdir()
    (workspace / "big.txt").write_text(BIG)
    (workspace / "small.txt").write_text("small\n")
    async with Console(workspace, state_dir=state) as console:
        console.set_mode("bypass")
        agent = await console.start_agent("agent", "scripted")
        shrink = await console.call(agent, "Write", {"file_path": str(workspace / "big.txt"), "content": "short\n"})
        edit = await console.call(agent, "Bash", {"command": "echo changed > small.txt && echo short >> big.txt"})
        filler = disk / "filler"
        _fill(filler)
        refused = await console.undo(shrink.call_id, force=True)
        small_refused = await console.undo(edit.call_id)
        after_refusal = {p.name: p.read_text()[:40] for p in sorted(workspace.glob("*.txt"))}
        filler.unlink()
        small = await console.undo(edit.call_id)
        done = await console.undo(shrink.call_id)
        return {"refused_ok": refused.ok, "refused_message": refused.message, "after_refusal": after_refusal,
                "small_refused_ok": small_refused.ok, "small_ok": small.ok, "small_message": small.message,
                "undo_ok": done.ok, "undo_message": done.message,
                "big_restored": (workspace / "big.txt").read_text() == BIG,
                "history": [(r.call_id, bool(r.undone_by)) for r in await console.history()]}


def _fill(path: Path) -> None:
    with open(path, "wb", buffering=0) as f:
        chunk = b"\0" * 65536
        try:
            while True:
                f.write(chunk)
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
        try:
            while True:  # the last bytes, one at a time
                f.write(b"\0")
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    print(json.dumps(asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2])))))
