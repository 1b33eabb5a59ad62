"""Pure client state, beyond the example tests in test_client_process_queue.py and test_client_offset_store.py:
the commit offset as a property over any consume order, and LocalFileOffsetStore's .bak fallback and atomic write."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from client.consumer.offset_store import LocalFileOffsetStore
from client.consumer.process_queue import ProcessQueue
from client.message import MessageQueue
from protocol.message_ext import MessageExt


def _msgs(offsets: list[int], size: int = 10) -> list[MessageExt]:
    return [MessageExt(topic="T", body=b"x" * size, queue_offset=o) for o in offsets]


# -- ProcessQueue ----------------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    offsets=st.lists(st.integers(0, 10_000), min_size=1, max_size=60, unique=True),
    data=st.data(),
)
def test_commit_offset_property(offsets: list[int], data: st.DataObject) -> None:
    pq = ProcessQueue()
    assert pq.put(_msgs(offsets)) == len(offsets)
    assert pq.put(_msgs(offsets[:3])) == 0, "a message already held is not added twice"
    done = data.draw(st.lists(st.sampled_from(offsets), unique=True))
    left = sorted(set(offsets) - set(done))
    got = pq.remove(_msgs(done))
    assert got == (left[0] if left else max(offsets) + 1)
    assert len(pq) == len(left) and pq.bytes == 10 * len(left)
    assert pq.span() == (left[-1] - left[0] if left else 0)


# -- LocalFileOffsetStore --------------------------------------------------------------------------------------------

MQ0 = MessageQueue("T", "broker-a", 0)
MQ1 = MessageQueue("T", "broker-a", 1)


async def test_local_store_main_missing_uses_bak_and_nothing_is_empty(tmp_path: Path) -> None:
    s = LocalFileOffsetStore(str(tmp_path), "c@1", "G")
    await s.load()
    assert s.snapshot() == {}
    s.update(MQ1, 4)
    s.write()
    s.update(MQ1, 8)
    s.write()
    os.unlink(s.path)
    s2 = LocalFileOffsetStore(str(tmp_path), "c@1", "G")
    await s2.load()
    assert s2.read_memory(MQ1) == 4


async def test_local_store_write_never_leaves_main_file_missing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A crash between writing the tmp file and renaming it leaves the old main file readable."""
    s = LocalFileOffsetStore(str(tmp_path), "c@1", "G")
    s.update(MQ0, 1)
    s.write()
    s.update(MQ0, 2)

    def crash(src: str, dst: str) -> None:
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", crash)
    await s.persist([MQ0])  # logged, not raised
    monkeypatch.undo()
    s2 = LocalFileOffsetStore(str(tmp_path), "c@1", "G")
    await s2.load()
    assert s2.read_memory(MQ0) == 1
