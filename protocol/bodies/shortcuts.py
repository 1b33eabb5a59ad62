"""Small encoders and decoders kept for existing callers; each is a one-line wrapper of a body class.

| function                  | body                                  |
|---------------------------|---------------------------------------|
| encode_consumer_list      | ConsumerListBody                      |
| encode_topic_list         | TopicList                             |
| encode_lock_response      | LockBatchResponseBody                 |
| en/decode_reset_offset_body | ResetOffsetBody                     |
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from protocol.bodies.admin import ConsumerListBody, LockBatchResponseBody
from protocol.bodies.lenient import BodyBytes, dumps
from protocol.bodies.mq import MessageQueue
from protocol.bodies.mq_maps import ResetOffsetBody

# -- small encoders kept for existing callers -----------------------------------------------------------------------


def encode_consumer_list(ids: list[str]) -> bytes:
    return ConsumerListBody(consumer_id_list=ids).encode()


def encode_topic_list(topics: Iterable[str], broker_addr: str | None = None) -> bytes:
    """TopicList as fastjson writes it: ``{"brokerAddr":...,"topicList":[...]}``, brokerAddr left out when null."""
    if broker_addr is None:
        return dumps({"topicList": sorted(topics)})
    return dumps({"brokerAddr": broker_addr, "topicList": sorted(topics)})


def encode_lock_response(mqs: Iterable[tuple[str, str, int]]) -> bytes:
    return LockBatchResponseBody(lock_ok_mq_set=[MessageQueue(t, b, q) for t, b, q in mqs]).encode()


def encode_reset_offset_body(offsets: Mapping[tuple[str, str, int], int], *, cpp: bool) -> bytes:
    """ResetOffsetBody from ``{(topic, broker, queue): offset}``: the list form for C++, J's object keys otherwise."""
    return ResetOffsetBody({MessageQueue(t, b, q): o for (t, b, q), o in offsets.items()}).encode(cpp=cpp)


def decode_reset_offset_body(body: BodyBytes) -> dict[tuple[str, str, int], int]:
    """Both ResetOffsetBody forms → ``{(topic, broker, queue): offset}``."""
    return {(mq.topic, mq.broker_name, mq.queue_id): o for mq, o in ResetOffsetBody.decode(body).offset_table.items()}
