"""One PULL_MESSAGE round trip, shared by the pull and push consumers: header, reply mapping, decoding, filtering.

Reply codes map to statuses as the J client does: SUCCESS → FOUND, PULL_NOT_FOUND → NO_NEW_MSG,
PULL_RETRY_IMMEDIATELY → NO_MATCHED_MSG, PULL_OFFSET_MOVED → OFFSET_ILLEGAL. Found messages are re-checked against
the subscription's tags (the broker filters by hash first; a SQL92 selector is the broker's alone), compressed bodies are inflated, and messages that came
back through ``%RETRY%<group>`` get their original topic restored from the RETRY_TOPIC property.

The address follows ``suggestWhichBrokerId`` of the previous reply for the queue and falls back to any replica
(``ClientInstance.find_pull_addr``): with the master gone, pulls go to a slave, without the commit-offset bit.
``start_offset`` is where a queue with no committed offset starts (J ``computePullFromWhere``).
"""

from __future__ import annotations

import dataclasses

from client.consumer.offset_store import OffsetStore
from client.consumer.selector import SQL92, MessageSelector, parse_tags
from client.instance import ClientInstance
from client.message import MessageQueue
from client.results import PullResult, PullStatus
from protocol.codes import ResponseCode
from protocol.headers import (
    PULL_FLAG_COMMIT_OFFSET,
    PULL_FLAG_SUBSCRIPTION,
    PULL_FLAG_SUSPEND,
    PullMessageRequestHeader,
)
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey
from protocol.record_decode import decode_records

RETRY_PREFIX = "%RETRY%"
_MIN_OFFSET = PropertyKey.MIN_OFFSET
_MAX_OFFSET = PropertyKey.MAX_OFFSET
_STATUS: dict[int, PullStatus] = {
    ResponseCode.SUCCESS: PullStatus.FOUND,
    ResponseCode.PULL_NOT_FOUND: PullStatus.NO_NEW_MSG,
    ResponseCode.PULL_RETRY_IMMEDIATELY: PullStatus.NO_MATCHED_MSG,
    ResponseCode.PULL_OFFSET_MOVED: PullStatus.OFFSET_ILLEGAL,
}


_TAGS_OF: dict[str, frozenset[str]] = {}  # parse_tags per expression: a consumer has a handful, pulls ask each time
_TAGS_OF_MAX = 1024


def _tags_of(expression: str) -> frozenset[str]:
    tags = _TAGS_OF.get(expression)
    if tags is None:
        if len(_TAGS_OF) >= _TAGS_OF_MAX:
            _TAGS_OF.clear()
        tags = _TAGS_OF[expression] = parse_tags(expression)
    return tags


def restore_retry_topic(msg: MessageExt, group: str) -> None:
    if msg.topic.startswith(RETRY_PREFIX):
        origin = msg.properties.get(PropertyKey.RETRY_TOPIC)
        if origin:
            msg.topic = origin


async def pull_once(
    instance: ClientInstance,
    group: str,
    mq: MessageQueue,
    offset: int,
    max_nums: int,
    expression: str | MessageSelector = "*",
    *,
    suspend_ms: int = 0,
    commit_offset: int = -1,
    sub_version: int = 0,
    timeout: float = 10.0,
) -> PullResult:
    sys_flag = PULL_FLAG_SUBSCRIPTION
    if suspend_ms > 0:
        sys_flag |= PULL_FLAG_SUSPEND
    if commit_offset >= 0:
        sys_flag |= PULL_FLAG_COMMIT_OFFSET
    topic = mq.topic
    if isinstance(expression, MessageSelector):
        kind, text = expression.expression_type, expression.expression
    else:
        kind, text = "TAG", expression
    header = PullMessageRequestHeader(  # positionally, in field order: once per pull
        group, topic, mq.queue_id, offset, max_nums, sys_flag, commit_offset, suspend_ms, sub_version,
        text or "*", kind,
    )  # fmt: skip
    addr, on_slave = await instance.find_pull_addr(mq)
    if on_slave and sys_flag & PULL_FLAG_COMMIT_OFFSET:  # J clears the commit bit for a slave
        header = dataclasses.replace(header, sys_flag=sys_flag & ~PULL_FLAG_COMMIT_OFFSET)
    code, resp, body = await instance.api.pull(addr, header, timeout)
    instance.pull_from_which[mq] = resp.suggest_which_broker_id
    status = _STATUS[code]
    msgs: list[MessageExt] = []
    if status is PullStatus.FOUND and body:
        # J's PullAPIWrapper adds the queue's bounds to every message: appended to each one's properties text as it
        # is decoded, lazily (a message's properties are split only if someone reads them; tags and msg_id read
        # their one)
        # (encode_properties of the two, written out)
        bounds = f"{_MIN_OFFSET}\x01{resp.min_offset:d}\x02{_MAX_OFFSET}\x01{resp.max_offset:d}\x02"
        msgs = decode_records(body, decompress=True, lazy=True, extra_props=bounds)
        if text and text != "*" and kind != SQL92:
            tags = _tags_of(text)
            if tags:
                msgs = [m for m in msgs if m.tags in tags]
        if topic.startswith(RETRY_PREFIX):
            for m in msgs:
                restore_retry_topic(m, group)
    return PullResult(status, resp.next_begin_offset, resp.min_offset, resp.max_offset, msgs)


async def start_offset(
    instance: ClientInstance, offset_store: OffsetStore, mq: MessageQueue, where: str, timestamp: int
) -> int:
    """J ``computePullFromWhere``: where a queue's pulling starts — the committed offset, else per ``where``
    (LAST_OFFSET: the queue's end, retry topics from 0; FIRST_OFFSET: 0, which the broker corrects to its min
    offset; TIMESTAMP: the first offset stored at ``timestamp`` ms or later)."""
    last = await offset_store.read_store(mq)
    if last is not None and last >= 0:
        return last
    if mq.topic.startswith(RETRY_PREFIX) or where == "FIRST_OFFSET":
        return 0
    addr = await instance.find_broker_addr(mq, master_only=False)
    if where == "TIMESTAMP":
        return await instance.api.search_offset(addr, mq, timestamp, instance.request_timeout)
    return await instance.api.get_max_offset(addr, mq, instance.request_timeout)
