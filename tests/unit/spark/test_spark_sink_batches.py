"""The sink's send batches: per (topic, queue pin), bounded by count and bytes, order kept within a group."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from spark_connector._client import OutgoingMessage
from spark_connector.options import parse_sink_options
from spark_connector.sink import batches


def msg(topic: str, n: int, size: int = 100, queue_id: int | None = None) -> OutgoingMessage:
    return OutgoingMessage(topic, bytes([n % 256]) * size, None, None, None, queue_id)


def test_batches_group_per_queue_and_respect_limits() -> None:
    opts = parse_sink_options(
        {"namesrvaddr": "h:1", "topic": "t", "sendbatchmaxmessages": "3", "sendbatchmaxbytes": "1000"}
    )
    stream = [msg("t", i) for i in range(7)] + [msg("t", 100 + i, queue_id=2) for i in range(2)]
    stream.insert(3, msg("u", 50))
    stream.append(msg("t", 200, size=5000))  # larger than a batch: alone
    out = list(batches(iter(stream), opts))
    assert all(len({(m.topic, m.queue_id) for m in b}) == 1 for b in out)
    assert all(len(b) <= 3 for b in out)
    assert [len(b) for b in out if b[0].topic == "t" and b[0].queue_id is None] == [3, 3, 1, 1]
    assert [m.body[0] for b in out if b[0].queue_id == 2 for m in b] == [100, 101]
    assert sorted(id(m) for b in out for m in b) == sorted(id(m) for m in stream)  # every message exactly once
    big = [b for b in out if len(b[0].body) == 5000]
    assert big == [[stream[-1]]]
