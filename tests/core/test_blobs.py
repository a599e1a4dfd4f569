"""The content-addressed blob store."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.blobs import BlobStore, content_hash


def test_put_get_and_dedup(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    h = store.put(b"hello\n")
    assert h == content_hash(b"hello\n") and store.get(h) == b"hello\n"
    assert store.put(b"hello\n") == h
    assert len(list((tmp_path / "blobs").rglob("*"))) == 2  # one folder, one blob, no temp files


def test_binary_content_round_trips_byte_for_byte(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    data = bytes(range(256)) * 10
    assert store.get(store.put(data)) == data


def test_a_corrupt_blob_is_detected(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    h = store.put(b"original")
    (tmp_path / "blobs" / h[:2] / h[2:]).write_bytes(b"tampered")
    with pytest.raises(OSError, match="corrupt"):
        store.get(h)


def test_a_batch_shows_its_blobs_only_once_committed_and_leaves_nothing_when_it_fails(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    with store.batch() as batch:
        digest = batch.put(b"snapshot content")
        assert batch.put(b"snapshot content") == digest
        assert not store.has(digest)  # not under its name until it is durable
    assert store.get(digest) == b"snapshot content"
    try:
        with store.batch() as batch:
            lost = batch.put(b"never committed")
            raise RuntimeError("the snapshot failed")
    except RuntimeError:
        pass
    assert not store.has(lost)
    assert not list((tmp_path / "blobs").rglob("*.tmp"))
