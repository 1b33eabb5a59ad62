"""The check → code → remark tables of the admin requests that reach consumers or their progress
(broker/handlers/offset_reset.py, broker/handlers/admin_queue.py, broker/handlers/admin_offsets.py), one row per
case, dispatched through the wired registry on a fake channel. Rows that need a consumer online heartbeat it first
on a ``FakeChannel``, which records what the broker sends the client and answers with ``reply``."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.errors import RequestTimeoutError
from protocol.msg_id import create_offset_msg_id
from tests.integration.broker_wire import heartbeat_cmd, send_cmd, simple_cmd
from tests.unit.broker.handler_support import (
    CheckRow,
    FakeChannel,
    WiredBroker,
    check_row,
    dispatch,
    put_topic,
    run_row,
    wired_broker,
)

R = ResponseCode
Row = CheckRow
Q = RequestCode


class SlowChannel(FakeChannel):
    """A client that never answers in time, as the connection reports it."""

    async def invoke(self, cmd: RemotingCommand, timeout: float) -> RemotingCommand:
        self.sent.append(cmd)
        raise RequestTimeoutError("no reply in 10 s")


@dataclass
class OnlineRow:
    """A row run with consumer ``cid-1`` of group G (subscribing TopicA) heartbeated on ``channel`` first, and
    ``steps`` done before the request."""

    id: str
    request: Callable[[], RemotingCommand]
    code: int
    remark: str | None
    channel: Callable[[], FakeChannel] = FakeChannel
    steps: list[Callable[[WiredBroker], None]] = field(default_factory=list)


async def _run_online(tmp_path: Path, row: OnlineRow) -> tuple[RemotingCommand, FakeChannel, WiredBroker]:
    async with wired_broker(tmp_path) as broker:
        put_topic("TopicA")(broker)
        channel = row.channel()
        hb = await dispatch(broker, heartbeat_cmd("cid-1", "G", "TopicA"), channel=channel)
        assert hb.code == R.SUCCESS, hb.remark
        channel.sent.clear()  # the NOTIFY_CONSUMER_IDS_CHANGED of the heartbeat
        sent = await dispatch(broker, send_cmd("TopicA", b"payload", queue_id=0))
        assert sent.code == R.SUCCESS, sent.remark
        for step in row.steps:
            step(broker)
        resp = await dispatch(broker, row.request())
        return resp, channel, broker


def _check_online(resp: RemotingCommand, row: OnlineRow) -> None:
    check_row(resp, CheckRow(row.id, lambda: resp, row.code, row.remark))


def _commit(group: str, topic: str, queue_id: int, offset: int) -> Callable[[WiredBroker], None]:
    def setup(b: WiredBroker) -> None:
        b.offsets.commit(group, topic, queue_id, offset)

    return setup


# -- INVOKE_BROKER_TO_RESET_OFFSET / INVOKE_BROKER_TO_GET_CONSUMER_STATUS (broker/handlers/offset_reset.py) ----------


def _reset(**overrides: object) -> RemotingCommand:
    fields: dict[str, object] = {"topic": "TopicA", "group": "G", "timestamp": -1, "isForce": "true"}
    fields.update(overrides)
    return simple_cmd(Q.INVOKE_BROKER_TO_RESET_OFFSET, **{k: v for k, v in fields.items() if v is not None})


RESET_ROWS = [
    Row("reset-missing-group", lambda: _reset(group=None), R.SYSTEM_ERROR, "the custom field <group> is null"),
    Row(
        "reset-timestamp-not-a-number",
        lambda: _reset(timestamp="yesterday"),
        R.SYSTEM_ERROR,
        "the custom field <timestamp> is not a valid number: 'yesterday'",
    ),
    Row(
        "reset-is-force-not-a-boolean",
        lambda: _reset(isForce="yes"),
        R.SYSTEM_ERROR,
        "the custom field <isForce> is not a valid boolean: 'yes'",
    ),
    Row(
        "reset-unknown-topic",
        lambda: _reset(topic="Nowhere"),
        R.SYSTEM_ERROR,
        "[reset-offset] reset offset failed, no topic in this broker. topic=Nowhere",
    ),
    Row(  # no consumer online and nothing known of the group (J 5.5's server-side reset)
        "reset-group-unknown",
        lambda: _reset(),
        R.SUBSCRIPTION_GROUP_NOT_EXIST,
        "Group G does not exist",
        setup=[put_topic("TopicA")],
    ),
    Row(  # no consumer online: the stored offsets are reset (J 5.5's server-side reset)
        "reset-no-consumer-online",
        lambda: _reset(timestamp=1234),
        R.SUCCESS,
        None,
        setup=[put_topic("TopicA"), _commit("G", "TopicA", 0, 3)],
    ),
    Row(
        "status-missing-topic",
        lambda: simple_cmd(Q.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, group="G"),
        R.SYSTEM_ERROR,
        "the custom field <topic> is null",
    ),
    Row(
        "status-no-consumer-online",
        lambda: simple_cmd(Q.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, topic="TopicA", group="G"),
        R.SYSTEM_ERROR,
        "No Any Consumer online in the consumer group: [G]",
    ),
]


@pytest.mark.parametrize("row", RESET_ROWS, ids=lambda r: r.id)
async def test_reset_offset_checks(tmp_path: Path, row: Row) -> None:
    check_row(await run_row(tmp_path, row), row)


async def test_reset_offset_with_a_consumer_online(tmp_path: Path) -> None:
    """Past every check: committed offsets set to the targets, RESET_CONSUMER_CLIENT_OFFSET sent to the client."""
    row = OnlineRow("reset", lambda: _reset(), R.SUCCESS, None, steps=[_commit("G", "TopicA", 0, 0)])
    resp, channel, broker = await _run_online(tmp_path, row)
    _check_online(resp, row)
    assert [c.code for c in channel.sent] == [Q.RESET_CONSUMER_CLIENT_OFFSET]
    assert broker.offsets.query("G", "TopicA", 0) == 1


async def test_consumer_status_relays_the_clients_table(tmp_path: Path) -> None:
    def answering() -> FakeChannel:
        ch = FakeChannel()
        ch.reply = RemotingCommand(code=R.SUCCESS, body=b'{"messageQueueTable":{"q":1}}')
        return ch

    req = simple_cmd(Q.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, topic="TopicA", group="G")
    row = OnlineRow("status", lambda: req, R.SUCCESS, None, channel=answering)
    resp, channel, _ = await _run_online(tmp_path, row)
    _check_online(resp, row)
    assert [c.code for c in channel.sent] == [Q.GET_CONSUMER_STATUS_FROM_CLIENT]
    assert json.loads(resp.body) == {"consumerTable": {"cid-1": {"q": 1}}, "messageQueueTable": {}}


# -- QUERY_CONSUME_QUEUE / CONSUME_MESSAGE_DIRECTLY (broker/handlers/admin_queue.py) ---------------------------------


def _cq(**overrides: object) -> RemotingCommand:
    fields: dict[str, object] = {"topic": "TopicA", "queueId": 0, "index": 0, "count": 10}
    fields.update(overrides)
    return simple_cmd(Q.QUERY_CONSUME_QUEUE, **{k: v for k, v in fields.items() if v is not None})


def _direct(**overrides: object) -> RemotingCommand:
    fields: dict[str, object] = {"consumerGroup": "G", "clientId": "cid-1", "brokerName": "x"}
    fields.update(overrides)
    return simple_cmd(Q.CONSUME_MESSAGE_DIRECTLY, **{k: v for k, v in fields.items() if v is not None})


QUEUE_ROWS = [
    Row("cq-missing-topic", lambda: _cq(topic=None), R.SYSTEM_ERROR, "the custom field <topic> is null"),
    Row("cq-missing-count", lambda: _cq(count=None), R.SYSTEM_ERROR, "the custom field <count> is null"),
    Row(
        "cq-index-not-a-number",
        lambda: _cq(index="first"),
        R.SYSTEM_ERROR,
        "the custom field <index> is not a valid number: 'first'",
    ),
    Row("cq-no-such-queue", lambda: _cq(topic="Nowhere", queueId=3), R.SYSTEM_ERROR, "3@Nowhere is not exist!"),
    Row(
        "direct-missing-group",
        lambda: _direct(consumerGroup=None, msgId="00"),
        R.SYSTEM_ERROR,
        "the custom field <consumerGroup> is null",
    ),
    Row("direct-missing-msg-id", lambda: _direct(), R.SYSTEM_ERROR, "the custom field <msgId> is null"),
    Row(
        "direct-not-an-offset-msg-id",
        lambda: _direct(msgId="not-hex"),
        R.SYSTEM_ERROR,
        "can not find message by the msgId not-hex",
    ),
    Row("system-topics", lambda: simple_cmd(Q.GET_SYSTEM_TOPIC_LIST_FROM_BROKER), R.SUCCESS, None),
]


@pytest.mark.parametrize("row", QUEUE_ROWS, ids=lambda r: r.id)
async def test_queue_admin_checks(tmp_path: Path, row: Row) -> None:
    check_row(await run_row(tmp_path, row), row)


STORED = create_offset_msg_id("127.0.0.1", 10911, 0)  # the message ``_run_online`` stores, at commit-log offset 0
ELSEWHERE = create_offset_msg_id("127.0.0.1", 10911, 1 << 20)  # past the end of the commit log


ONLINE_QUEUE_ROWS = [
    OnlineRow(
        "cq-index-beyond-max",
        lambda: _cq(index=5),
        R.SUCCESS,
        "Index 5 of 0@TopicA is not exist!",
    ),
    OnlineRow("cq-with-group-online", lambda: _cq(consumerGroup="G"), R.SUCCESS, None),
    OnlineRow(
        "direct-nothing-at-offset",
        lambda: _direct(msgId=ELSEWHERE),
        R.SYSTEM_ERROR,
        f"can not find message by the msgId {ELSEWHERE}",
    ),
    OnlineRow(
        "direct-client-not-online",
        lambda: _direct(clientId="cid-2", msgId=STORED),
        R.CONSUMER_NOT_ONLINE,
        "The Consumer <G> <cid-2> not online",
    ),
    OnlineRow(
        "direct-client-timeout",
        lambda: _direct(msgId=STORED),
        R.CONSUME_MSG_TIMEOUT,
        "consumer <G> <cid-1> Timeout: ",
        channel=SlowChannel,
    ),
]


@pytest.mark.parametrize("row", ONLINE_QUEUE_ROWS, ids=lambda r: r.id)
async def test_queue_admin_checks_with_a_consumer_online(tmp_path: Path, row: OnlineRow) -> None:
    resp, _, _ = await _run_online(tmp_path, row)
    _check_online(resp, row)


async def test_consume_directly_relays_the_clients_reply(tmp_path: Path) -> None:
    def answering() -> FakeChannel:
        ch = FakeChannel()
        ch.reply = RemotingCommand(code=R.SUCCESS, remark="consumed", body=b'{"consumeResult":"CR_SUCCESS"}')
        return ch

    row = OnlineRow("direct", lambda: _direct(msgId=STORED), R.SUCCESS, "consumed", channel=answering)
    resp, channel, _ = await _run_online(tmp_path, row)
    _check_online(resp, row)
    assert resp.body == b'{"consumeResult":"CR_SUCCESS"}'
    assert [c.code for c in channel.sent] == [Q.CONSUME_MESSAGE_DIRECTLY]
    assert b"payload" in channel.sent[0].body and channel.sent[0].ext_fields["brokerName"] != "x"


# -- QUERY_CONSUME_TIME_SPAN / CLONE_GROUP_OFFSET / QUERY_TOPIC_CONSUME_BY_WHO (broker/handlers/admin_offsets.py) ----

OFFSETS_ROWS = [
    Row(
        "time-span-missing-group",
        lambda: simple_cmd(Q.QUERY_CONSUME_TIME_SPAN, topic="TopicA"),
        R.SYSTEM_ERROR,
        "the custom field <group> is null",
    ),
    Row(
        "time-span-unknown-topic",
        lambda: simple_cmd(Q.QUERY_CONSUME_TIME_SPAN, topic="Nowhere", group="G"),
        R.TOPIC_NOT_EXIST,
        "topic[Nowhere] not exist",
    ),
    Row(
        "time-span",
        lambda: simple_cmd(Q.QUERY_CONSUME_TIME_SPAN, topic="TopicA", group="G"),
        R.SUCCESS,
        None,
        setup=[put_topic("TopicA")],
    ),
    Row(
        "clone-missing-dest-group",
        lambda: simple_cmd(Q.CLONE_GROUP_OFFSET, srcGroup="G"),
        R.SYSTEM_ERROR,
        "the custom field <destGroup> is null",
    ),
    Row(
        "clone-nothing-to-copy",
        lambda: simple_cmd(Q.CLONE_GROUP_OFFSET, srcGroup="G", destGroup="H", topic="TopicA"),
        R.SUCCESS,
        None,
    ),
    Row(
        "consume-by-who-missing-topic",
        lambda: simple_cmd(Q.QUERY_TOPIC_CONSUME_BY_WHO),
        R.SYSTEM_ERROR,
        "the custom field <topic> is null",
    ),
    Row(
        "consume-by-who-unknown-topic",
        lambda: simple_cmd(Q.QUERY_TOPIC_CONSUME_BY_WHO, topic="Nowhere"),
        R.SUCCESS,
        None,
    ),
    Row(
        "broker-consume-stats-missing-is-order",
        lambda: simple_cmd(Q.GET_BROKER_CONSUME_STATS),
        R.SYSTEM_ERROR,
        "the custom field <isOrder> is null",
    ),
    Row(
        "broker-consume-stats-is-order-not-a-boolean",
        lambda: simple_cmd(Q.GET_BROKER_CONSUME_STATS, isOrder="sometimes"),
        R.SYSTEM_ERROR,
        "the custom field <isOrder> is not a valid boolean: 'sometimes'",
    ),
    Row(
        "broker-consume-stats",
        lambda: simple_cmd(Q.GET_BROKER_CONSUME_STATS, isOrder="false"),
        R.SUCCESS,
        None,
        setup=[put_topic("TopicA"), _commit("G", "TopicA", 0, 0)],
    ),
    Row("all-consumer-offsets", lambda: simple_cmd(Q.GET_ALL_CONSUMER_OFFSET), R.SUCCESS, None),
    Row("all-delay-offsets", lambda: simple_cmd(Q.GET_ALL_DELAY_OFFSET), R.SUCCESS, None),
]


@pytest.mark.parametrize("row", OFFSETS_ROWS, ids=lambda r: r.id)
async def test_offsets_admin_checks(tmp_path: Path, row: Row) -> None:
    resp = await run_row(tmp_path, row)
    check_row(resp, row)
    if row.id == "consume-by-who-unknown-topic":
        assert json.loads(resp.body) == {"groupList": []}


async def test_clone_group_offset_copies_the_offsets(tmp_path: Path) -> None:
    async with wired_broker(tmp_path) as broker:
        put_topic("TopicA")(broker)
        broker.offsets.commit("G", "TopicA", 2, 7)
        clone = simple_cmd(Q.CLONE_GROUP_OFFSET, srcGroup="G", destGroup="H", topic="TopicA", offline="true")
        resp = await dispatch(broker, clone)
        assert (resp.code, resp.remark) == (R.SUCCESS, None)
        assert broker.offsets.query("H", "TopicA", 2) == 7
