"""What the producer puts on the wire: properties (tags, keys, delay, wait, UNIQ_KEY), zlib compression over the
threshold with the sysFlag bit, size and name checks, and the batch body."""

from __future__ import annotations

import zlib

import pytest

from client import Message, MessageTooLargeError, MQClientError, Producer
from client.message import validate_group, validate_topic
from protocol.batch import BatchItem, decode_batch, encode_batch
from protocol.message_properties import decode_properties, encode_properties
from protocol.record import SYSFLAG_COMPRESSED


@pytest.fixture
def producer() -> Producer:
    return Producer("pg", namesrv_addr="127.0.0.1:1", client_ip="10.0.0.1", instance_name="unit")


def test_properties(producer: Producer) -> None:
    msg = Message("T", b"body", tags="TagA", keys=["k1", "k2"], properties={"color": "red"}, delay_level=3)
    body, sys_flag, props = producer._prepare(msg)
    assert body == b"body" and sys_flag == 0
    assert props["TAGS"] == "TagA" and props["KEYS"] == "k1 k2" and props["color"] == "red"
    assert props["DELAY"] == "3" and props["WAIT"] == "true"
    assert len(props["UNIQ_KEY"]) == 32 and int(props["UNIQ_KEY"], 16) >= 0
    text = encode_properties(props)
    assert text.endswith("\x02") and decode_properties(text) == props
    assert Message("T", b"x", keys="single").wire_properties()["KEYS"] == "single"
    assert "WAIT" in Message("T", b"x", wait_store_ok=False).wire_properties()


def test_uniq_keys_are_unique(producer: Producer) -> None:
    ids = {producer._prepare(Message("T", b"x"))[2]["UNIQ_KEY"] for _ in range(5000)}
    assert len(ids) == 5000


def test_compression_over_the_threshold(producer: Producer) -> None:
    small = b"a" * 4096
    body, flag, _ = producer._prepare(Message("T", small))
    assert body == small and flag & SYSFLAG_COMPRESSED == 0
    big = b"abcdefgh" * 1024  # 8 KiB, compressible
    body, flag, _ = producer._prepare(Message("T", big))
    assert flag & SYSFLAG_COMPRESSED
    assert len(body) < len(big) and zlib.decompress(body) == big


def test_size_and_emptiness_checks(producer: Producer) -> None:
    with pytest.raises(MessageTooLargeError):
        producer._prepare(Message("T", b"x" * (4 * 1024 * 1024 + 1)))
    producer._prepare(Message("T", b"x" * (4 * 1024 * 1024)))  # exactly the limit is fine
    with pytest.raises(MQClientError):
        producer._prepare(Message("T", b""))


@pytest.mark.parametrize("topic", ["", " ", "a b", "x" * 128, "tópico", "SCHEDULE_TOPIC_XXXX"])
def test_bad_topics_are_refused_before_sending(producer: Producer, topic: str) -> None:
    with pytest.raises(MQClientError):
        producer._prepare(Message(topic, b"x"))


def test_name_rules() -> None:
    validate_topic("%RETRY%group_1-x|y")
    validate_topic("SCHEDULE_TOPIC_XXXX")  # may be read, not sent to
    validate_group("g" * 255)
    for bad in ("", "g" * 256, "a.b"):
        with pytest.raises(MQClientError):
            validate_group(bad)
    with pytest.raises(MQClientError):
        Producer("bad group")


def test_a_topic_read_is_not_made_sendable_and_refusals_repeat() -> None:
    """validate_topic remembers the topics that passed a send check; only those."""
    validate_topic("SCHEDULE_TOPIC_XXXX")  # a read check passes
    for topic in ("SCHEDULE_TOPIC_XXXX", "a b", "SCHEDULE_TOPIC_XXXX", "a b"):
        with pytest.raises(MQClientError):
            validate_topic(topic, sending=True)
    validate_topic("SendableT", sending=True)
    validate_topic("SendableT", sending=True)


def test_batch_body_round_trip() -> None:
    msgs = [Message("T", b"m%d" % i, tags="A", keys=[f"k{i}"]) for i in range(3)]
    items = [BatchItem(m.body, m.wire_properties(), m.flag) for m in msgs]
    decoded = decode_batch(encode_batch(items))
    assert [(d.body, d.properties["KEYS"], d.properties["TAGS"]) for d in decoded] == [
        (b"m0", "k0", "A"),
        (b"m1", "k1", "A"),
        (b"m2", "k2", "A"),
    ]


async def test_send_before_start_is_an_error(producer: Producer) -> None:
    with pytest.raises(MQClientError, match="not started"):
        await producer.send(Message("T", b"x"))
