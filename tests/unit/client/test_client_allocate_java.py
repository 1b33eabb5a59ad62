"""Allocation details that must match J's classes queue for queue (mixed Java/C++/Python groups)."""

from __future__ import annotations

from client.consumer.allocate import allocate_averagely, java_md5_hash, make_by_config, make_by_machine_room
from client.message import MessageQueue


def test_java_md5_hash_and_queue_string() -> None:
    # md5("") = d41d8cd98f00b204e9800998ecf8427e; J's MD5Hash folds the first 4 bytes big-endian
    assert java_md5_hash("") == 0xD41D8CD9
    # the consistent-hash key of a queue is J's MessageQueue.toString()
    assert str(MessageQueue("T", "b", 1)) == "MessageQueue [topic=T, brokerName=b, queueId=1]"


def test_more_consumers_than_queues() -> None:
    few = [MessageQueue("T", "b", i) for i in range(2)]
    assert [len(allocate_averagely("g", c, few, ["c1", "c2", "c3"])) for c in ("c1", "c2", "c3")] == [1, 1, 0]


def test_machine_room_split_is_javas() -> None:
    mqs = [MessageQueue("T", f"{room}@broker-{i}", q) for room in ("hz", "sh") for i in range(2) for q in range(2)]
    cids = ["c1", "c2", "c3"]
    shares = {c: make_by_machine_room({"hz"})("g", c, mqs, cids) for c in cids}
    hz = sorted(q for q in mqs if q.broker_name.startswith("hz@"))
    # J: len // n in blocks, then the remainder one each to the first consumers, from the end of the list
    assert shares == {"c1": [hz[0], hz[3]], "c2": [hz[1]], "c3": [hz[2]]}


def test_by_config_keeps_only_existing_queues() -> None:
    mqs = [MessageQueue("T", "b", i) for i in range(3)]
    assert make_by_config([mqs[2], MessageQueue("T", "gone", 0)])("g", "c1", mqs, ["c1", "c2"]) == [mqs[2]]
