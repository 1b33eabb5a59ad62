"""The check → code → remark tables of the broker-level admin requests (broker/handlers/admin_broker.py: the
UPDATE_BROKER_CONFIG allow-list; broker/handlers/admin_stats.py: the read-only views and the consumer relay;
broker/handlers/admin_maintenance.py: the maintenance passes and their count remarks), one row per case,
dispatched through the wired registry on a fake channel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from tests.integration.broker_wire import heartbeat_cmd, send_cmd, simple_cmd
from tests.unit.broker.handler_support import (
    CheckRow,
    FakeChannel,
    check_row,
    dispatch,
    put_topic,
    run_row,
    wired_broker,
)

R = ResponseCode
Row = CheckRow
Q = RequestCode


def _update(body: bytes) -> RemotingCommand:
    return RemotingCommand.request(Q.UPDATE_BROKER_CONFIG, {}, body)


# -- UPDATE_BROKER_CONFIG / GET_BROKER_CONFIG (broker/handlers/admin_broker.py) --------------------------------------

CONFIG_ROWS = [
    Row("update-not-utf8", lambda: _update(b"deleteWhen=\xff\xfe"), R.SYSTEM_ERROR, "bad config body: "),
    Row(
        "update-unknown-key",
        lambda: _update(b"noSuchKey=1"),
        R.NO_PERMISSION,
        "unknown config key(s): noSuchKey; applied at once: autoCreateSubscriptionGroup, autoCreateTopicEnable, ",
    ),
    Row(
        "update-store-path",
        lambda: _update(b"storePathRootDir=/tmp/elsewhere"),
        R.NO_PERMISSION,
        "config key(s) not allowed to change at runtime: storePathRootDir",
    ),
    Row(
        "update-listen-port",
        lambda: _update(b"listenPort=1"),
        R.NO_PERMISSION,
        "config key(s) not allowed to change at runtime: listenPort",
    ),
    Row(
        "update-namesrv-addr",
        lambda: _update(b"namesrvAddr=10.0.0.1:9876"),
        R.NO_PERMISSION,
        "config key(s) not allowed to change at runtime: namesrvAddr",
    ),
    Row(
        "update-invalid-value",
        lambda: _update(b"fileReservedTime=forever"),
        R.SYSTEM_ERROR,
        "fileReservedTime",
    ),
    Row("update-empty-body", lambda: _update(b""), R.SUCCESS, None),
    Row("update-allowed-key", lambda: _update(b"fileReservedTime=24"), R.SUCCESS, None),
    Row("get", lambda: simple_cmd(Q.GET_BROKER_CONFIG), R.SUCCESS, None),
]


@pytest.mark.parametrize("row", CONFIG_ROWS, ids=lambda r: r.id)
async def test_broker_config_checks(tmp_path: Path, row: Row) -> None:
    check_row(await run_row(tmp_path, row), row)


async def test_a_refused_key_changes_nothing(tmp_path: Path) -> None:
    """All-or-nothing: an allowed key beside a refused one is not applied; alone it is, and the version moves."""
    async with wired_broker(tmp_path) as broker:
        before = await dispatch(broker, simple_cmd(Q.GET_BROKER_CONFIG))
        mixed = await dispatch(broker, _update(b"autoCreateTopicEnable=false\nrocketmqHome=/tmp/x"))
        assert mixed.code == R.NO_PERMISSION and "rocketmqHome" in (mixed.remark or ""), mixed.remark
        assert broker.wiring.runtime_config.config.features.auto_create_topic_enable is True
        alone = await dispatch(broker, _update(b"autoCreateTopicEnable=false"))
        assert (alone.code, alone.remark) == (R.SUCCESS, None)
        assert broker.wiring.runtime_config.config.features.auto_create_topic_enable is False
        after = await dispatch(broker, simple_cmd(Q.GET_BROKER_CONFIG))
        assert after.ext_fields["version"] != before.ext_fields["version"]
        assert b"autoCreateTopicEnable=false" in after.body


# -- the admin views and the consumer relay (broker/handlers/admin_stats.py) -----------------------------------------

STATS_ROWS = [
    Row(
        "topic-stats-missing-topic",
        lambda: simple_cmd(Q.GET_TOPIC_STATS_INFO),
        R.SYSTEM_ERROR,
        "the custom field <topic> is null",
    ),
    Row(
        "topic-stats-unknown-topic",
        lambda: simple_cmd(Q.GET_TOPIC_STATS_INFO, topic="Nowhere"),
        R.TOPIC_NOT_EXIST,
        "topic[Nowhere] not exist",
    ),
    Row(
        "topic-stats",
        lambda: simple_cmd(Q.GET_TOPIC_STATS_INFO, topic="TopicA"),
        R.SUCCESS,
        None,
        setup=[put_topic("TopicA")],
    ),
    Row(
        "consume-stats-missing-group",
        lambda: simple_cmd(Q.GET_CONSUME_STATS, topic="TopicA"),
        R.SYSTEM_ERROR,
        "the custom field <consumerGroup> is null",
    ),
    Row(
        "consumer-connections-missing-group",
        lambda: simple_cmd(Q.GET_CONSUMER_CONNECTION_LIST),
        R.SYSTEM_ERROR,
        "the custom field <consumerGroup> is null",
    ),
    Row(
        "consumer-connections-not-online",
        lambda: simple_cmd(Q.GET_CONSUMER_CONNECTION_LIST, consumerGroup="G"),
        R.CONSUMER_NOT_ONLINE,
        "the consumer group[G] not online",
    ),
    Row(
        "producer-connections-missing-group",
        lambda: simple_cmd(Q.GET_PRODUCER_CONNECTION_LIST),
        R.SYSTEM_ERROR,
        "the custom field <producerGroup> is null",
    ),
    Row(
        "producer-connections-none",
        lambda: simple_cmd(Q.GET_PRODUCER_CONNECTION_LIST, producerGroup="P"),
        R.SYSTEM_ERROR,
        "the producer group[P] not exist",
    ),
    Row(
        "view-stats-unknown",
        lambda: simple_cmd(Q.VIEW_BROKER_STATS_DATA, statsName="TOPIC_PUT_NUMS", statsKey="Nowhere"),
        R.SYSTEM_ERROR,
        "The stats <TOPIC_PUT_NUMS> <Nowhere> not exist",
    ),
    Row(
        "view-stats-no-name",
        lambda: simple_cmd(Q.VIEW_BROKER_STATS_DATA),
        R.SYSTEM_ERROR,
        "The stats <> <> not exist",
    ),
    Row(
        "running-info-missing-client-id",
        lambda: simple_cmd(Q.GET_CONSUMER_RUNNING_INFO, consumerGroup="G"),
        R.SYSTEM_ERROR,
        "the custom field <clientId> is null",
    ),
    Row(
        "running-info-client-not-online",
        lambda: simple_cmd(Q.GET_CONSUMER_RUNNING_INFO, consumerGroup="G", clientId="cid-1"),
        R.CONSUMER_NOT_ONLINE,
        "The Consumer <G> <cid-1> not online",
    ),
    Row("runtime-info", lambda: simple_cmd(Q.GET_BROKER_RUNTIME_INFO), R.SUCCESS, None),
]


@pytest.mark.parametrize("row", STATS_ROWS, ids=lambda r: r.id)
async def test_admin_stats_checks(tmp_path: Path, row: Row) -> None:
    resp = await run_row(tmp_path, row)
    check_row(resp, row)
    if row.id == "runtime-info":
        assert json.loads(resp.body)["table"]["topicCount"].isdigit()


async def test_admin_views_with_clients_online(tmp_path: Path) -> None:
    """The success side of the refusals above: with consumer cid-1 of G and producer p-1 of P heartbeated, the
    connection lists answer, GET_CONSUME_STATS covers the subscribed topic, and GET_CONSUMER_RUNNING_INFO relays the
    client's reply (code, remark, body) unchanged."""
    async with wired_broker(tmp_path) as broker:
        put_topic("TopicA")(broker)
        consumer = FakeChannel()
        consumer.reply = RemotingCommand(code=R.SYSTEM_ERROR, remark="busy", body=b"{running}")
        assert (await dispatch(broker, heartbeat_cmd("cid-1", "G", "TopicA"), channel=consumer)).code == R.SUCCESS
        producer_hb = json.dumps({"clientID": "p-1", "producerDataSet": [{"groupName": "P"}]}).encode()
        hb = await dispatch(broker, RemotingCommand.request(Q.HEART_BEAT, {}, producer_hb))
        assert hb.code == R.SUCCESS
        consumer.sent.clear()

        conns = await dispatch(broker, simple_cmd(Q.GET_CONSUMER_CONNECTION_LIST, consumerGroup="G"))
        assert (conns.code, conns.remark) == (R.SUCCESS, None)
        body = json.loads(conns.body)
        assert [c["clientId"] for c in body["connectionSet"]] == ["cid-1"] and "TopicA" in body["subscriptionTable"]
        producers = await dispatch(broker, simple_cmd(Q.GET_PRODUCER_CONNECTION_LIST, producerGroup="P"))
        assert (producers.code, producers.remark) == (R.SUCCESS, None)
        assert [c["clientId"] for c in json.loads(producers.body)["connectionSet"]] == ["p-1"]
        stats = await dispatch(broker, simple_cmd(Q.GET_CONSUME_STATS, consumerGroup="G", topic="TopicA"))
        assert (stats.code, stats.remark) == (R.SUCCESS, None)
        assert b"TopicA" in stats.body

        running = await dispatch(broker, simple_cmd(Q.GET_CONSUMER_RUNNING_INFO, consumerGroup="G", clientId="cid-1"))
        assert (running.code, running.remark, running.body) == (R.SYSTEM_ERROR, "busy", b"{running}")
        assert [c.code for c in consumer.sent] == [Q.GET_CONSUMER_RUNNING_INFO]


# -- the maintenance passes (broker/handlers/admin_maintenance.py) ---------------------------------------------------

MAINTENANCE_ROWS = [
    Row(
        "clean-expired-consume-queues",
        lambda: simple_cmd(Q.CLEAN_EXPIRED_CONSUMEQUEUE),
        R.SUCCESS,
        "0 consume queue file(s) removed",
    ),
    Row(
        "delete-expired-commit-log",
        lambda: simple_cmd(Q.DELETE_EXPIRED_COMMITLOG),
        R.SUCCESS,
        "0 commit log file(s) removed",
    ),
    Row(
        "clean-unused-topics-none",
        lambda: simple_cmd(Q.CLEAN_UNUSED_TOPIC),
        R.SUCCESS,
        "0 queue(s) of 0 unused topic(s) removed",
    ),
    Row("producer-info", lambda: simple_cmd(Q.GET_ALL_PRODUCER_INFO), R.SUCCESS, None),
]


@pytest.mark.parametrize("row", MAINTENANCE_ROWS, ids=lambda r: r.id)
async def test_maintenance_checks(tmp_path: Path, row: Row) -> None:
    check_row(await run_row(tmp_path, row), row)


async def test_clean_unused_topic_counts_what_it_removed(tmp_path: Path) -> None:
    """A topic deleted from the table (not through DELETE_TOPIC_IN_BROKER) leaves its consume queue behind until
    CLEAN_UNUSED_TOPIC; the remark counts it."""
    async with wired_broker(tmp_path) as broker:
        put_topic("TopicA")(broker)

        assert (await dispatch(broker, send_cmd("TopicA", b"x"))).code == R.SUCCESS
        broker.topics.delete("TopicA")
        resp = await dispatch(broker, simple_cmd(Q.CLEAN_UNUSED_TOPIC))
        assert (resp.code, resp.remark) == (R.SUCCESS, "1 queue(s) of 1 unused topic(s) removed")
