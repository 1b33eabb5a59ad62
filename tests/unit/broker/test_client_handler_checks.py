"""The check → code → remark tables of the offset and client-membership handlers (broker/handlers/consumer_manage.py,
broker/handlers/client_manage.py), one row per case, dispatched through the wired registry on a fake channel: a
missing or non-numeric header field → SYSTEM_ERROR "the custom field <x> …"; the documented refusals; and a success
row per request code so that a check refusing everything fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from broker.handlers.consumer_manage import QUERY_NOT_FOUND_REMARK
from broker.services.subscription_groups import SubscriptionGroupConfig
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


# -- QUERY/UPDATE_CONSUMER_OFFSET, GET_MIN/MAX_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME
#    (broker/handlers/consumer_manage.py) ------------------------------------------------------------------------------

OFFSET_ROWS = [
    Row(
        "query-missing-group",
        lambda: simple_cmd(Q.QUERY_CONSUMER_OFFSET, topic="TopicA", queueId=0),
        R.SYSTEM_ERROR,
        "the custom field <consumerGroup> is null",
    ),
    Row(
        "query-queue-id-not-a-number",
        lambda: simple_cmd(Q.QUERY_CONSUMER_OFFSET, consumerGroup="G", topic="TopicA", queueId="x"),
        R.SYSTEM_ERROR,
        "the custom field <queueId> is not a valid number: 'x'",
    ),
    Row(
        "query-nothing-committed-queue-from-zero",
        lambda: simple_cmd(Q.QUERY_CONSUMER_OFFSET, consumerGroup="G", topic="TopicA", queueId=0),
        R.SUCCESS,
        None,
    ),
    Row(
        "update-missing-commit-offset",
        lambda: simple_cmd(Q.UPDATE_CONSUMER_OFFSET, consumerGroup="G", topic="TopicA", queueId=0),
        R.SYSTEM_ERROR,
        "the custom field <commitOffset> is null",
    ),
    Row(
        "update-commit-offset-not-a-number",
        lambda: simple_cmd(Q.UPDATE_CONSUMER_OFFSET, consumerGroup="G", topic="TopicA", queueId=0, commitOffset="1.5"),
        R.SYSTEM_ERROR,
        "the custom field <commitOffset> is not a valid number: '1.5'",
    ),
    Row(
        "update",
        lambda: simple_cmd(Q.UPDATE_CONSUMER_OFFSET, consumerGroup="G", topic="TopicA", queueId=0, commitOffset=3),
        R.SUCCESS,
        None,
    ),
    Row("min-missing-topic", lambda: simple_cmd(Q.GET_MIN_OFFSET, queueId=0), R.SYSTEM_ERROR, "<topic> is null"),
    Row("min", lambda: simple_cmd(Q.GET_MIN_OFFSET, topic="TopicA", queueId=0), R.SUCCESS, None),
    Row("max-missing-queue-id", lambda: simple_cmd(Q.GET_MAX_OFFSET, topic="T"), R.SYSTEM_ERROR, "<queueId> is null"),
    Row("max", lambda: simple_cmd(Q.GET_MAX_OFFSET, topic="TopicA", queueId=0), R.SUCCESS, None),
    Row(
        "search-missing-timestamp",
        lambda: simple_cmd(Q.SEARCH_OFFSET_BY_TIMESTAMP, topic="TopicA", queueId=0),
        R.SYSTEM_ERROR,
        "the custom field <timestamp> is null",
    ),
    Row(
        "search",
        lambda: simple_cmd(Q.SEARCH_OFFSET_BY_TIMESTAMP, topic="TopicA", queueId=0, timestamp=0),
        R.SUCCESS,
        None,
    ),
    Row(
        "earliest-missing-topic",
        lambda: simple_cmd(Q.GET_EARLIEST_MSG_STORETIME, queueId=0),
        R.SYSTEM_ERROR,
        "the custom field <topic> is null",
    ),
    Row(
        "earliest-empty-queue",
        lambda: simple_cmd(Q.GET_EARLIEST_MSG_STORETIME, topic="TopicA", queueId=0),
        R.SYSTEM_ERROR,
        "Not found the earliest message store time",
        setup=[put_topic("TopicA")],
    ),
]


@pytest.mark.parametrize("row", OFFSET_ROWS, ids=lambda r: r.id)
async def test_offset_checks(tmp_path: Path, row: Row) -> None:
    resp = await run_row(tmp_path, row)
    check_row(resp, row)
    if row.code == R.SUCCESS and "offset" in resp.ext_fields:
        assert resp.ext_fields["offset"] == "0"


async def test_offsets_after_a_send_and_a_commit(tmp_path: Path) -> None:
    """The success side: a committed offset is answered back; a stored message moves max offset and has a store
    time."""
    async with wired_broker(tmp_path) as broker:
        put_topic("TopicA")(broker)
        assert (await dispatch(broker, send_cmd("TopicA", b"x"))).code == R.SUCCESS
        commit = simple_cmd(Q.UPDATE_CONSUMER_OFFSET, consumerGroup="G", topic="TopicA", queueId=0, commitOffset=1)
        assert (await dispatch(broker, commit)).code == R.SUCCESS
        query = simple_cmd(Q.QUERY_CONSUMER_OFFSET, consumerGroup="G", topic="TopicA", queueId=0)
        assert (await dispatch(broker, query)).ext_fields["offset"] == "1"
        max_offset = await dispatch(broker, simple_cmd(Q.GET_MAX_OFFSET, topic="TopicA", queueId=0))
        assert max_offset.ext_fields["offset"] == "1"
        earliest = await dispatch(broker, simple_cmd(Q.GET_EARLIEST_MSG_STORETIME, topic="TopicA", queueId=0))
        assert earliest.code == R.SUCCESS and int(earliest.ext_fields["timestamp"]) > 0


async def test_query_offset_of_a_queue_whose_start_was_deleted(tmp_path: Path) -> None:
    """Nothing committed and the queue's min offset above 0 → QUERY_NOT_FOUND with J's remark."""
    async with wired_broker(tmp_path) as broker:
        broker.store.get_min_offset_in_queue = lambda topic, queue_id: 5  # type: ignore[method-assign]
        resp = await dispatch(broker, simple_cmd(Q.QUERY_CONSUMER_OFFSET, consumerGroup="G", topic="TopicA", queueId=0))
        assert (resp.code, resp.remark) == (R.QUERY_NOT_FOUND, QUERY_NOT_FOUND_REMARK)


# -- HEART_BEAT / UNREGISTER_CLIENT / GET_CONSUMER_LIST_BY_GROUP / CHECK_CLIENT_CONFIG (broker/handlers/client_manage.py)


def _heartbeat_body(body: bytes) -> RemotingCommand:
    return RemotingCommand.request(Q.HEART_BEAT, {}, body)


CLIENT_ROWS = [
    Row("heartbeat-unparsable-body", lambda: _heartbeat_body(b"{nope"), R.SYSTEM_ERROR, "bad HeartbeatData body: "),
    Row("heartbeat", lambda: heartbeat_cmd("cid-1", "G", "TopicA"), R.SUCCESS, None),
    Row(
        "heartbeat-producer-only",
        lambda: _heartbeat_body(json.dumps({"clientID": "p1", "producerDataSet": [{"groupName": "P"}]}).encode()),
        R.SUCCESS,
        None,
    ),
    Row(
        "consumer-list-missing-group",
        lambda: simple_cmd(Q.GET_CONSUMER_LIST_BY_GROUP),
        R.SYSTEM_ERROR,
        "the custom field <consumerGroup> is null",
    ),
    Row(
        "consumer-list-no-consumer",
        lambda: simple_cmd(Q.GET_CONSUMER_LIST_BY_GROUP, consumerGroup="G"),
        R.SYSTEM_ERROR,
        "no consumer for this group, G",
    ),
    Row("unregister-nobody", lambda: simple_cmd(Q.UNREGISTER_CLIENT, clientID="cid-1"), R.SUCCESS, None),
    Row("check-client-config", lambda: simple_cmd(Q.CHECK_CLIENT_CONFIG), R.SUCCESS, None),
]


@pytest.mark.parametrize("row", CLIENT_ROWS, ids=lambda r: r.id)
async def test_client_checks(tmp_path: Path, row: Row) -> None:
    check_row(await run_row(tmp_path, row), row)


async def test_heartbeat_registers_and_unregister_forgets(tmp_path: Path) -> None:
    """A consumer heartbeat auto-creates its group and retry topic and lists the client; UNREGISTER_CLIENT on the
    same channel removes it, after which the list is refused again."""
    async with wired_broker(tmp_path) as broker:
        channel = FakeChannel()
        hb = await dispatch(broker, heartbeat_cmd("cid-1", "G", "TopicA"), channel=channel)
        assert (hb.code, hb.remark) == (R.SUCCESS, None)
        assert isinstance(broker.groups.get("G"), SubscriptionGroupConfig)
        assert broker.topics.get("%RETRY%G") is not None
        listed = await dispatch(broker, simple_cmd(Q.GET_CONSUMER_LIST_BY_GROUP, consumerGroup="G"))
        assert listed.code == R.SUCCESS and json.loads(listed.body)["consumerIdList"] == ["cid-1"]
        unregister = simple_cmd(Q.UNREGISTER_CLIENT, clientID="cid-1", consumerGroup="G")
        assert (await dispatch(broker, unregister, channel=channel)).code == R.SUCCESS
        again = await dispatch(broker, simple_cmd(Q.GET_CONSUMER_LIST_BY_GROUP, consumerGroup="G"))
        assert (again.code, again.remark) == (R.SYSTEM_ERROR, "no consumer for this group, G")


async def test_heartbeat_without_auto_create_registers_no_group(tmp_path: Path) -> None:
    async with wired_broker(tmp_path, autoCreateSubscriptionGroup=False) as broker:
        hb = await dispatch(broker, heartbeat_cmd("cid-1", "G", "TopicA"))
        assert (hb.code, hb.remark) == (R.SUCCESS, None)
        assert broker.groups.get("G") is None and broker.topics.get("%RETRY%G") is None
