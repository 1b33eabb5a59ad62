"""A damaged record is quarantined and counted once per run, however many times recovery and reads meet it."""

from __future__ import annotations

import os
from pathlib import Path

from _store_util import BORN, small_config

from broker.store import GetMessageStatus, MessageStore
from broker.store.request import GetRequest, PutRequest

T = "TopicQuarantine"


async def test_a_record_met_by_recovery_and_a_read_is_counted_once(tmp_path: Path) -> None:
    store = MessageStore.open(small_config(tmp_path))
    written = []
    for i in range(20):
        res = await store.put_message(PutRequest(T, 0, 0, 0, 1, BORN, b"m%02d" % i, {"KEYS": f"k{i}"}))
        assert res.ok
        written.append(res.items[0])
    await store.close()
    victim = written[7]
    path = tmp_path / "commitlog" / f"{0:020d}"
    data = bytearray(path.read_bytes())
    data[victim.wrote_offset + victim.size - 3] ^= 0x01  # a digit of its CRC field
    path.write_bytes(bytes(data))
    os.remove(tmp_path / "checkpoint")  # recovery walks (and verifies) every record again

    store = MessageStore.open(small_config(tmp_path))
    await store.start()
    try:
        bodies = []
        off = 0
        while (r := store.get_message_sync(GetRequest("g", T, 0, off, 32))).status is GetMessageStatus.FOUND or (
            r.next_begin_offset > off
        ):
            bodies.extend(m.body for m in r.messages())
            off = r.next_begin_offset
        assert bodies == [b"m%02d" % i for i in range(20) if i != 7]
        assert store.integrity.skipped_reads >= 1  # the read met it too
        assert store.integrity.quarantined_records == 1
        assert store.integrity.quarantined_bytes == victim.size
    finally:
        await store.close()
