"""The content-addressed blob store: loose blobs, and packs for large batches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.store.blobs import ABANDONED_AFTER_S, PACK_MIN_BLOBS, BlobStore, DamagedBlob, MissingBlob, content_hash
from tests.conftest import ROOT

SMALL, LARGE = 3, 10 * PACK_MIN_BLOBS  # a batch of loose files, a batch written to a pack


def _contents(count: int, tag: str = "") -> list[bytes]:
    return [f"{tag}file {i}\n".encode() * (i % 7 + 1) for i in range(count)]


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


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


@pytest.mark.parametrize("count", [SMALL, LARGE])
def test_a_batch_shows_its_blobs_only_once_committed(tmp_path: Path, count: int) -> None:
    store = BlobStore(tmp_path / "blobs")
    contents = _contents(count) + [bytes(range(256)) * 10, b""]
    with store.batch() as batch:
        digests = [batch.put(data) for data in contents]
        assert batch.put(contents[0]) == digests[0]
        for digest in digests:
            assert not store.has(digest)  # not readable until it is durable
            with pytest.raises(FileNotFoundError):
                store.get(digest)
    assert [store.get(d) for d in digests] == contents
    assert all(store.has(d) for d in digests)


def test_a_large_batch_is_one_pack_and_its_index_not_a_file_per_blob(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    with store.batch() as batch:
        for data in _contents(LARGE):
            batch.put(data)
    assert [Path(f).suffix for f in _files(tmp_path / "blobs")] == [".idx", ".pack"]


@pytest.mark.parametrize("count", [SMALL, LARGE])
def test_a_batch_that_fails_leaves_no_blob_and_no_file(tmp_path: Path, count: int) -> None:
    store = BlobStore(tmp_path / "blobs")
    kept = store.put(b"stored before")
    with pytest.raises(RuntimeError, match="the snapshot failed"):
        with store.batch() as batch:
            lost = [batch.put(data) for data in _contents(count)]
            raise RuntimeError("the snapshot failed")
    assert not any(store.has(d) for d in lost)
    assert _files(tmp_path / "blobs") == [f"{kept[:2]}/{kept[2:]}"]


def test_blobs_already_stored_are_not_written_again(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    with store.batch() as batch:
        for data in _contents(LARGE):
            batch.put(data)
    before = _files(tmp_path / "blobs")
    reopened = BlobStore(tmp_path / "blobs")
    reopened.put(_contents(1)[0])
    with reopened.batch() as batch:
        for data in _contents(LARGE):
            batch.put(data)
    assert _files(tmp_path / "blobs") == before


def test_packed_blobs_survive_reopening_the_store(tmp_path: Path) -> None:
    with BlobStore(tmp_path / "blobs").batch() as batch:
        digests = [batch.put(data) for data in _contents(LARGE)]
    with BlobStore(tmp_path / "blobs").batch() as batch:
        digests += [batch.put(data) for data in _contents(LARGE, tag="second ")]
    reopened = BlobStore(tmp_path / "blobs")
    assert [reopened.get(d) for d in digests] == _contents(LARGE) + _contents(LARGE, tag="second ")


def test_a_corrupted_byte_in_a_pack_is_detected(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    contents = _contents(LARGE)
    with store.batch() as batch:
        digests = [batch.put(data) for data in contents]
    [pack] = (tmp_path / "blobs" / "packs").glob("*.pack")
    raw = bytearray(pack.read_bytes())
    raw[raw.index(contents[5]) + 3] ^= 0x01
    pack.write_bytes(raw)
    for store in (store, BlobStore(tmp_path / "blobs")):
        with pytest.raises(OSError, match="corrupt"):
            store.get(digests[5])
        assert store.get(digests[6]) == contents[6]


@pytest.mark.allow_warning_logs
def test_a_torn_pack_index_is_ignored_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with BlobStore(tmp_path / "blobs").batch() as batch:
        digest = batch.put(_contents(LARGE)[0])
        for data in _contents(LARGE)[1:]:
            batch.put(data)
    [index] = (tmp_path / "blobs" / "packs").glob("*.idx")
    index.write_bytes(index.read_bytes()[:-1])
    reopened = BlobStore(tmp_path / "blobs")
    assert not reopened.has(digest)
    assert "corrupt" in caplog.text
    assert reopened.get(reopened.put(_contents(LARGE)[0])) == _contents(LARGE)[0]  # can be stored again


_KILLED_WRITER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from core.store.blobs import BlobStore
with BlobStore(Path(sys.argv[2])).batch() as batch:
    for i in range(100):
        batch.put(f"killed {i}\\n".encode() * 2000)  # 1.6 MB in all: past the pack's write buffer
    print("written", flush=True)
    time.sleep(60)
"""


def test_a_pack_a_killed_batch_left_is_never_read_and_is_swept_an_hour_later(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    child = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(ROOT), str(root)], stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"written\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    [orphan] = (root / "packs").iterdir()
    assert orphan.suffix == ".pack" and orphan.stat().st_size > 0  # blobs on disk, and no index
    killed = "killed 3\n".encode() * 2000
    store = BlobStore(root)
    assert not store.has(content_hash(killed))
    with pytest.raises(FileNotFoundError):
        store.get(content_hash(killed))
    assert store.get(store.put(killed)) == killed
    assert orphan.exists()  # it might still be being written
    old = time.time() - ABANDONED_AFTER_S - 60
    os.utime(orphan, (old, old))
    BlobStore(root).has(content_hash(killed))
    assert not orphan.exists()


def test_a_batch_in_progress_is_not_swept_and_is_seen_by_other_stores_once_committed(tmp_path: Path) -> None:
    writer, reader = BlobStore(tmp_path / "blobs"), BlobStore(tmp_path / "blobs")
    contents = _contents(LARGE)
    assert not reader.has(content_hash(contents[0]))  # the reader has read the (empty) pack folder
    with writer.batch() as batch:
        digests = [batch.put(data) for data in contents]
        [pack] = (tmp_path / "blobs" / "packs").glob("*.pack")
        old = time.time() - ABANDONED_AFTER_S - 60
        os.utime(pack, (old, old))  # looks abandoned, but its batch holds it
        assert not BlobStore(tmp_path / "blobs").has(digests[0])
    assert [reader.get(d) for d in digests] == contents


def test_threads_read_while_a_batch_commits(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    old = {store.put(b"loose"): b"loose"}
    with store.batch() as batch:
        old.update((batch.put(data), data) for data in _contents(LARGE, tag="old "))
    new = {content_hash(data): data for data in _contents(LARGE * 4, tag="new ")}
    committed, failures = threading.Event(), []

    def read() -> None:
        try:
            while True:
                done = committed.is_set()
                for digest, data in [*old.items(), *new.items()]:
                    try:
                        assert store.get(digest) == data
                    except FileNotFoundError:
                        assert digest in new and not done, f"{digest[:12]} missing"
                if done:
                    return
        except BaseException as exc:
            failures.append(exc)

    readers = [threading.Thread(target=read, name=f"reader {i}") for i in range(4)]
    for thread in readers:
        thread.start()
    with store.batch() as batch:
        for data in new.values():
            batch.put(data)
    committed.set()
    for thread in readers:
        thread.join(timeout=30)
    assert failures == []


def test_a_damaged_blob_is_named_with_its_file_and_never_returned(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    digest = store.put(b"what undo puts back\n")
    loose = tmp_path / "blobs" / digest[:2] / digest[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"something else\n")
    with pytest.raises(DamagedBlob) as caught:
        store.get(digest)
    assert isinstance(caught.value, OSError) and str(loose) in str(caught.value)
    assert "does not match its hash" in str(caught.value)


def test_a_missing_blob_is_a_file_not_found_naming_where_it_should_be(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    digest = store.put(b"gone\n")
    loose = tmp_path / "blobs" / digest[:2] / digest[2:]
    loose.unlink()
    with pytest.raises(MissingBlob) as caught:
        store.get(digest)
    assert isinstance(caught.value, FileNotFoundError) and str(loose) in str(caught.value)


def test_a_packed_blob_whose_pack_was_cut_short_is_damaged_naming_the_pack(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    with store.batch() as batch:
        digests = [batch.put(data) for data in _contents(LARGE)]
    [pack] = (tmp_path / "blobs" / "packs").glob("*.pack")
    pack.chmod(0o644)
    pack.write_bytes(pack.read_bytes()[:10])
    with pytest.raises(DamagedBlob) as caught:
        BlobStore(tmp_path / "blobs").get(digests[-1])
    assert str(pack) in str(caught.value)
