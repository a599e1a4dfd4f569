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
