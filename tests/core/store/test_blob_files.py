"""The blob store's folder as `belay gc` sees it: what is stored, and removing it safely."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.store import blob_files
from core.store.blobs import PACK_MIN_BLOBS, BlobStore, MissingBlob, content_hash


def _store(tmp_path: Path) -> tuple[BlobStore, list[str], list[str]]:
    """Two loose blobs and a pack of many."""
    store = BlobStore(tmp_path / "blobs")
    loose = [store.put(b"one\n"), store.put(b"two\n")]
    with store.batch() as batch:
        packed = [batch.put(f"packed {i}\n".encode()) for i in range(2 * PACK_MIN_BLOBS)]
    return store, loose, packed


def test_the_stored_blobs_are_listed_without_reading_one(tmp_path: Path) -> None:
    store, loose, packed = _store(tmp_path)
    stored = blob_files.stored_blobs(store.root)
    assert stored.loose == {digest: 4 for digest in loose}
    [(index, held)] = stored.packs.items()
    assert index.endswith(".idx") and set(held) == set(packed)
    assert stored.bytes == sum(p.stat().st_size for p in store.root.rglob("*") if p.is_file())
    assert blob_files.stored_blobs(tmp_path / "none") == blob_files.StoredBlobs({}, {}, 0)


def test_loose_blobs_and_packs_are_removed_keeping_what_is_asked_for(tmp_path: Path) -> None:
    store, loose, packed = _store(tmp_path)
    assert blob_files.remove_loose(store.root, [loose[0], content_hash(b"never stored")]) == 4
    [index] = blob_files.stored_blobs(store.root).packs
    keep = set(packed[:3])
    assert blob_files.copy_kept(store.root, index, keep) > 0  # both packs hold the kept ones now
    assert blob_files.drop_pack(store.root, index) > 0
    again = BlobStore(store.root)
    assert [again.get(d) for d in packed[:3]] == [f"packed {i}\n".encode() for i in range(3)]
    assert again.get(loose[1]) == b"two\n" and not again.has(packed[3]) and not again.has(loose[0])
    with pytest.raises(MissingBlob):
        again.get(loose[0])
    assert blob_files.file_size(store.root / "nothing") == 0
