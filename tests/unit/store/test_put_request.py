"""PutRequest: the store's put argument, and its copy of a stored message for the re-put sites."""

from __future__ import annotations

from pathlib import Path

from _store_util import BORN, small_config

from broker.store import MessageStore, PutMessageStatus, PutRequest
from protocol.message_ext import MessageExt


def test_from_ext_copies_the_message_and_applies_changes() -> None:
    msg = MessageExt(
        topic="T", body=b"b", flag=3, properties={"A": "1"}, queue_id=2, sys_flag=8, born_timestamp=7,
        born_host=("1.2.3.4", 5), reconsume_times=4, prepared_transaction_offset=99,
    )  # fmt: skip
    req = PutRequest.from_ext(msg, topic="R", reconsume_times=5)
    assert (req.topic, req.queue_id, req.flag, req.sys_flag, req.born_timestamp, req.born_host) == (
        "R", 2, 3, 8, 7, ("1.2.3.4", 5),
    )  # fmt: skip
    assert (req.body, req.properties, req.reconsume_times) == (b"b", {"A": "1"}, 5)
    # the prepared-transaction offset names the half message a commit settles: never copied by accident
    assert req.prepared_transaction_offset == 0
    assert PutRequest.from_ext(msg, prepared_transaction_offset=99).prepared_transaction_offset == 99


async def test_a_re_put_of_a_stored_message_keeps_its_fields(tmp_path: Path) -> None:
    store = MessageStore.open(small_config(tmp_path))
    await store.start()
    try:
        first = await store.put_message(PutRequest("T", 0, 6, 0, 123, BORN, b"body", {"K": "v"}, 2))
        assert first.status is PutMessageStatus.PUT_OK
        stored = store.look_message_by_offset(first.items[0].wrote_offset)
        assert stored is not None
        again = await store.put_message(PutRequest.from_ext(stored, topic="U", queue_id=1))
        assert again.status is PutMessageStatus.PUT_OK
        copy = store.look_message_by_offset(again.items[0].wrote_offset)
        assert copy is not None
        assert (copy.topic, copy.queue_id, copy.flag, copy.born_timestamp, copy.reconsume_times) == ("U", 1, 6, 123, 2)
        assert (copy.body, copy.properties) == (b"body", {"K": "v"})
    finally:
        await store.close()
