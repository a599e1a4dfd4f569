"""The blob store's folder as `belay gc` (core.store.gc) sees it: the blobs stored, and their removal.

The other half of core.store.blobs, which writes and reads the folder: the same layout (loose files
`root/ab/cdef...`, packs with their indexes in `root/packs/`), read through that module's own helpers.
All functions block.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from core.store.blobs import _HEX_DIGITS, _decode_index, _entries, _fsync_dir, _Packed, _PackWriter


class StoredBlobs(NamedTuple):
    """Every blob a store holds: loose ones by digest (with their size), and each indexed pack's contents."""

    loose: dict[str, int]
    packs: dict[str, dict[str, _Packed]]
    """Index file name -> the blobs its pack holds."""
    bytes: int
    """What the blob folder takes on disk: loose files, packs and indexes, and anything a crash left."""


def stored_blobs(root: Path) -> StoredBlobs:
    """Lists the blob folder: a few thousand entries a second is all it costs (no blob is read)."""
    loose: dict[str, int] = {}
    total = 0
    for folder in _entries(root):
        if folder.name == "packs" or len(folder.name) != 2 or not folder.is_dir(follow_symlinks=False):
            continue
        for entry in _entries(Path(folder.path)):
            size = _entry_size(entry)
            total += size
            if len(entry.name) == 62 and _HEX_DIGITS.issuperset(entry.name):
                loose[folder.name + entry.name] = size
    packs: dict[str, dict[str, _Packed]] = {}
    packs_folder = root / "packs"
    for entry in _entries(packs_folder):
        total += _entry_size(entry)
        if entry.name.endswith(".idx"):
            index = packs_folder / entry.name
            try:
                packs[entry.name] = _decode_index(index.read_bytes(), str(index.with_suffix(".pack"))) or {}
            except FileNotFoundError:
                continue
    return StoredBlobs(loose, packs, total)


def _entry_size(entry: os.DirEntry[str]) -> int:
    """0 for a file gone since the folder was listed (a temporary file renamed into place, say)."""
    try:
        return entry.stat(follow_symlinks=False).st_size
    except FileNotFoundError:
        return 0


def remove_loose(root: Path, digests: list[str]) -> int:
    """Deletes these loose blobs; the bytes freed.  The caller has checked that no committed row needs them."""
    freed = 0
    for digest in digests:
        path = root / digest[:2] / digest[2:]
        try:
            freed += path.stat().st_size
            path.unlink()
        except FileNotFoundError:
            continue
    return freed


def copy_kept(root: Path, index_name: str, keep: set[str]) -> int:
    """The first half of shrinking a pack: its `keep` blobs copied to a new pack, durable and indexed (both
    packs then hold them); the new pack's size on disk, 0 when nothing is kept.  `drop_pack` does the rest."""
    folder = root / "packs"
    index = folder / index_name
    entries = _decode_index(index.read_bytes(), str(index.with_suffix(".pack"))) or {}
    kept = [(digest, where) for digest, where in entries.items() if digest in keep]
    if not kept:
        return 0
    writer = _PackWriter(folder)
    try:
        for digest, where in kept:
            writer.append(digest, where.read())
    except BaseException:
        writer.abandon()
        raise
    new_index, _ = writer.commit()
    return (folder / new_index).stat().st_size + writer.path.stat().st_size


def drop_pack(root: Path, index_name: str) -> int:
    """Removes a pack: its index first (the pack, unindexed, is never read again), then the pack; the bytes
    freed.  A crash between the two leaves an unindexed pack, which any store sweeps an hour later."""
    folder = root / "packs"
    index = folder / index_name
    pack = index.with_suffix(".pack")
    freed = file_size(index) + file_size(pack)
    index.unlink(missing_ok=True)
    _fsync_dir(folder)
    pack.unlink(missing_ok=True)
    return freed


def file_size(path: Path) -> int:
    """`path`'s size in bytes; 0 when it is not there (gone meanwhile)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
