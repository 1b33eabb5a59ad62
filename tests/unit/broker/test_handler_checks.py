"""Each broker handler's check → code → remark table (the table in its module docstring), one row per case,
dispatched through the wired registry on a fake channel, without a socket. The success rows check that a request
passing every check is served (so a check that refuses everything fails here)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from broker import topics as T
from broker.services.subscription_groups import SubscriptionGroupConfig
from protocol.bodies import TopicConfig
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from tests.integration.broker_wire import (
    PULL_SUBSCRIPTION,
    batch_body,
    heartbeat_cmd,
    pull_cmd,
    send_cmd,
    simple_cmd,
)
from tests.unit.broker.handler_support import WiredBroker, dispatch, wired_broker

R = ResponseCode


def _topic(name: str, perm: int = T.PERM_RW, queues: int = 4) -> Callable[[WiredBroker], None]:
    def setup(b: WiredBroker) -> None:
        b.topics.put(TopicConfig.with_queues(name, queues, perm))

    return setup


def _group(name: str, **fields: Any) -> Callable[[WiredBroker], None]:
    def setup(b: WiredBroker) -> None:
        b.groups.put(SubscriptionGroupConfig(name, **fields))

    return setup


@dataclass
class Row:
    """One line of a handler's table: the broker's config, what exists before, the request, the expected reply."""

    id: str
    request: Callable[[], RemotingCommand]
    code: int
    remark: str | None  # a substring of the reply's remark; None: the remark is not checked
    config: dict[str, Any] = field(default_factory=dict)
    setup: list[Callable[[WiredBroker], None]] = field(default_factory=list)
    queued_s: float = 0.0


async def _run(tmp_path: Path, row: Row) -> RemotingCommand:
    async with wired_broker(tmp_path, **row.config) as broker:
        for step in row.setup:
            step(broker)
        return await dispatch(broker, row.request(), queued_s=row.queued_s)


def _check(resp: RemotingCommand, row: Row) -> None:
    assert resp.code == row.code, (resp.code, resp.remark)
    if row.remark is not None:
        assert row.remark in (resp.remark or ""), resp.remark


# -- SEND_MESSAGE / SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE (broker/handlers/send.py) -----------------------------------

SEND_ROWS = [
    Row(
        "queued-too-long",
        lambda: send_cmd("TopicA", b"x"),
        R.SYSTEM_BUSY,
        "[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: ",
        setup=[_topic("TopicA")],
        queued_s=5.0,
    ),
    Row(
        "broker-not-writeable",
        lambda: send_cmd("TopicA", b"x"),
        R.NO_PERMISSION,
        "the broker[127.0.0.1] sending message is forbidden",
        config={"brokerPermission": 4},
        setup=[_topic("TopicA")],
    ),
    Row("illegal-topic", lambda: send_cmd("bad topic!", b"x"), R.SYSTEM_ERROR, None),
    Row(
        "system-topic",
        lambda: send_cmd(T.SCHEDULE_TOPIC, b"x"),
        R.NO_PERMISSION,
        f"Sending message to topic[{T.SCHEDULE_TOPIC}] is forbidden.",
    ),
    Row(
        "unknown-topic-no-auto-create",
        lambda: send_cmd("Nowhere", b"x"),
        R.TOPIC_NOT_EXIST,
        "topic[Nowhere] not exist, apply first please!",
        config={"autoCreateTopicEnable": False},
    ),
    Row(
        "topic-not-writeable",
        lambda: send_cmd("ReadOnly", b"x"),
        R.NO_PERMISSION,
        "the topic[ReadOnly] sending message is forbidden",
        setup=[_topic("ReadOnly", perm=T.PERM_READ)],
    ),
    Row(
        "queue-id-beyond-write-queues",
        lambda: send_cmd("TopicA", b"x", queue_id=4),
        R.SYSTEM_ERROR,
        "request queueId[4] is illegal, topic:TopicA topicConfig.writeQueueNums:4",
        setup=[_topic("TopicA")],
    ),
    Row(
        "v2-queue-id-beyond-write-queues",
        lambda: send_cmd("TopicA", b"x", queue_id=9, v2=True),
        R.SYSTEM_ERROR,
        "request queueId[9] is illegal",
        setup=[_topic("TopicA")],
    ),
    Row(
        "body-over-max-size",
        lambda: send_cmd("TopicA", b"x" * 1025),
        R.MESSAGE_ILLEGAL,
        "the message body size over max value, MAX: 1024",
        config={"maxMessageSize": 1024},
        setup=[_topic("TopicA")],
    ),
    Row(
        "batch-to-retry-topic",
        lambda: _batch("%RETRY%G", batch_body([(b"a", {})])),
        R.MESSAGE_ILLEGAL,
        "batch request does not support retry group %RETRY%G",
        setup=[_topic("%RETRY%G", queues=1)],
    ),
    Row(
        "batch-with-delay",
        lambda: _batch("TopicA", batch_body([(b"a", {"DELAY": "2"})])),
        R.MESSAGE_ILLEGAL,
        "batch message does not support delay message",
        setup=[_topic("TopicA")],
    ),
    Row("stored", lambda: send_cmd("TopicA", b"x", queue_id=1), R.SUCCESS, None, setup=[_topic("TopicA")]),
    Row("auto-created-and-stored", lambda: send_cmd("NewTopic", b"x"), R.SUCCESS, None),
]


def _batch(topic: str, body: bytes) -> RemotingCommand:
    cmd = send_cmd(topic, body)
    return RemotingCommand.request(RequestCode.SEND_BATCH_MESSAGE, {**cmd.ext_fields, "batch": "true"}, body)


@pytest.mark.parametrize("row", SEND_ROWS, ids=lambda r: r.id)
async def test_send_checks(tmp_path: Path, row: Row) -> None:
    resp = await _run(tmp_path, row)
    _check(resp, row)
    if row.code == R.SUCCESS:
        assert resp.ext_fields["queueOffset"] == "0" and resp.ext_fields["msgId"]


# -- PULL_MESSAGE (broker/handlers/pull.py) --------------------------------------------------------------------------

PULL_ROWS = [
    Row(
        "broker-not-readable",
        lambda: pull_cmd("G", "TopicA", 0, 0),
        R.NO_PERMISSION,
        "the broker[127.0.0.1] pulling message is forbidden",
        config={"brokerPermission": 2},
        setup=[_topic("TopicA")],
    ),
    Row(
        "group-unknown-no-auto-create",
        lambda: pull_cmd("G", "TopicA", 0, 0),
        R.SUBSCRIPTION_GROUP_NOT_EXIST,
        "subscription group [G] does not exist",
        config={"autoCreateSubscriptionGroup": False},
        setup=[_topic("TopicA")],
    ),
    Row(
        "group-consume-disabled",
        lambda: pull_cmd("G", "TopicA", 0, 0),
        R.NO_PERMISSION,
        "subscription group no permission, G",
        setup=[_topic("TopicA"), _group("G", consume_enable=False)],
    ),
    Row(
        "topic-unknown",
        lambda: pull_cmd("G", "Nowhere", 0, 0),
        R.TOPIC_NOT_EXIST,
        "topic[Nowhere] not exist, apply first please!",
    ),
    Row(
        "topic-not-readable",
        lambda: pull_cmd("G", "WriteOnly", 0, 0),
        R.NO_PERMISSION,
        "the topic[WriteOnly] pulling message is forbidden",
        setup=[_topic("WriteOnly", perm=T.PERM_WRITE)],
    ),
    Row(
        "queue-id-beyond-read-queues",
        lambda: pull_cmd("G", "TopicA", 4, 0),
        R.SYSTEM_ERROR,
        "queueId[4] is illegal, topic:[TopicA] topicConfig.readQueueNums:[4] consumer:[G]",
        setup=[_topic("TopicA")],
    ),
    Row(
        "bad-subscription",
        lambda: pull_cmd("G", "TopicA", 0, 0, sub="|| ||", sys_flag=PULL_SUBSCRIPTION),
        R.SUBSCRIPTION_PARSE_FAILED,
        "parse the consumer's subscription failed",
        setup=[_topic("TopicA")],
    ),
    Row(
        "no-subscription-flag-no-heartbeat",
        lambda: pull_cmd("G", "TopicA", 0, 0, sys_flag=0),
        R.SUBSCRIPTION_NOT_EXIST,
        "the consumer's group info not exist",
        setup=[_topic("TopicA")],
    ),
    Row(
        "empty-queue-at-zero",
        lambda: pull_cmd("G", "TopicA", 0, 0, sys_flag=PULL_SUBSCRIPTION),
        R.PULL_NOT_FOUND,
        None,
        setup=[_topic("TopicA")],
    ),
]


@pytest.mark.parametrize("row", PULL_ROWS, ids=lambda r: r.id)
async def test_pull_checks(tmp_path: Path, row: Row) -> None:
    resp = await _run(tmp_path, row)
    _check(resp, row)
    if row.code == R.PULL_NOT_FOUND:
        assert resp.ext_fields["nextBeginOffset"] == "0" and resp.ext_fields["maxOffset"] == "0"


async def test_pull_with_a_heartbeat_but_not_that_topic(tmp_path: Path) -> None:
    """The last row of pull.py's table: the group is heartbeated, but its subscription lacks the topic."""
    async with wired_broker(tmp_path) as broker:
        _topic("TopicA")(broker)
        _topic("Other")(broker)
        hb = await dispatch(broker, heartbeat_cmd("cid-1", "G", "Other"))
        assert hb.code == R.SUCCESS
        resp = await dispatch(broker, pull_cmd("G", "TopicA", 0, 0, sys_flag=0))
        assert (resp.code, resp.remark) == (R.SUBSCRIPTION_NOT_EXIST, "the consumer's subscription not exist")


# -- CONSUMER_SEND_MSG_BACK (broker/handlers/send_back.py) -----------------------------------------------------------


def _send_back(group: str, offset: int = 0) -> RemotingCommand:
    return simple_cmd(
        RequestCode.CONSUMER_SEND_MSG_BACK,
        offset=offset,
        group=group,
        delayLevel=0,
        originMsgId="00",
        originTopic="TopicA",
        unitMode="false",
        maxReconsumeTimes=16,
    )


SEND_BACK_ROWS = [
    Row(
        "group-unknown-no-auto-create",
        lambda: _send_back("G"),
        R.SUBSCRIPTION_GROUP_NOT_EXIST,
        "subscription group not exist, G",
        config={"autoCreateSubscriptionGroup": False},
    ),
    Row(
        "broker-not-writeable",
        lambda: _send_back("G"),
        R.NO_PERMISSION,
        "the broker[127.0.0.1] sending message is forbidden",
        config={"brokerPermission": 4},
    ),
    Row(
        "no-retry-queues-drops-the-message",
        lambda: _send_back("G"),
        R.SUCCESS,
        None,
        setup=[_group("G", retry_queue_nums=0)],
    ),
    Row(
        "retry-topic-not-writeable",
        lambda: _send_back("G"),
        R.NO_PERMISSION,
        "the topic[%RETRY%G] sending message is forbidden",
        setup=[_topic("%RETRY%G", perm=T.PERM_READ, queues=1)],
    ),
    Row(
        "no-message-at-offset",
        lambda: _send_back("G", offset=123456),
        R.SYSTEM_ERROR,
        "look message by offset failed, 123456",
    ),
]


@pytest.mark.parametrize("row", SEND_BACK_ROWS, ids=lambda r: r.id)
async def test_send_back_checks(tmp_path: Path, row: Row) -> None:
    _check(await _run(tmp_path, row), row)


async def test_send_back_of_a_stored_message_goes_to_the_retry_topic(tmp_path: Path) -> None:
    async with wired_broker(tmp_path) as broker:
        _topic("TopicA")(broker)
        sent = await dispatch(broker, send_cmd("TopicA", b"payload"))
        assert sent.code == R.SUCCESS
        stored = broker.store.get_max_offset_in_queue("TopicA", 0)
        assert stored == 1
        resp = await dispatch(broker, _send_back("G", offset=0))
        assert resp.code == R.SUCCESS, resp.remark
        assert broker.topics.get("%RETRY%G") is not None


# -- LOCK_BATCH_MQ / UNLOCK_BATCH_MQ (broker/handlers/lock.py) -------------------------------------------------------


def _lock(code: int, body: bytes) -> Callable[[], RemotingCommand]:
    return lambda: RemotingCommand.request(code, {}, body)


_LOCK_BODY = json.dumps(
    {"consumerGroup": "G", "clientId": "c1", "mqSet": [{"topic": "T", "brokerName": "broker-a", "queueId": 0}]}
).encode()

LOCK_ROWS = [
    Row("lock-unparsable-body", _lock(RequestCode.LOCK_BATCH_MQ, b"nope"), R.SYSTEM_ERROR, None),
    Row("lock-no-body", _lock(RequestCode.LOCK_BATCH_MQ, b""), R.SYSTEM_ERROR, "LockBatchRequestBody is missing"),
    Row("unlock-unparsable-body", _lock(RequestCode.UNLOCK_BATCH_MQ, b"{"), R.SYSTEM_ERROR, None),
    Row("lock-granted", _lock(RequestCode.LOCK_BATCH_MQ, _LOCK_BODY), R.SUCCESS, None),
    Row("unlock", _lock(RequestCode.UNLOCK_BATCH_MQ, _LOCK_BODY), R.SUCCESS, None),
]


@pytest.mark.parametrize("row", LOCK_ROWS, ids=lambda r: r.id)
async def test_lock_checks(tmp_path: Path, row: Row) -> None:
    resp = await _run(tmp_path, row)
    _check(resp, row)
    if row.id == "lock-granted":
        assert [m["queueId"] for m in json.loads(resp.body)["lockOKMQSet"]] == [0]


# -- the wiring itself ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("v2", [False, True], ids=["v1", "v2"])
async def test_a_prepared_send_is_stored_as_a_half_message(tmp_path: Path, v2: bool) -> None:
    """The send handler hands a prepared SEND_MESSAGE(_V2) to the transaction handlers: it never reaches the real
    topic."""
    async with wired_broker(tmp_path) as broker:
        _topic("TopicA")(broker)
        prepared = send_cmd("TopicA", b"tx", sys_flag=0x4, props={"TRAN_MSG": "true", "PGROUP": "P"}, v2=v2)
        resp = await dispatch(broker, prepared)
        assert resp.code == R.SUCCESS, resp.remark
        assert broker.store.get_max_offset_in_queue("TopicA", 0) == 0
        assert broker.store.get_max_offset_in_queue(T.TRANS_HALF_TOPIC, 0) == 1
