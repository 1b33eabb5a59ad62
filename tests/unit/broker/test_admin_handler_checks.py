"""The check → code → remark tables of the topic and subscription-group admin handlers (broker/handlers/admin_topic.py,
broker/handlers/admin_group.py), one row per case, dispatched through the wired registry on a fake channel. Bad
input: missing or unparsable header fields and bodies, bad or reserved names; the success rows check that a
request passing every check is served and has its effect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from broker import topics as T
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from tests.integration.broker_wire import simple_cmd
from tests.unit.broker.handler_support import CheckRow, check_row, dispatch, put_group, put_topic, run_row, wired_broker

R = ResponseCode
Row = CheckRow


def _create(**overrides: object) -> RemotingCommand:
    fields: dict[str, object] = {
        "topic": "TopicA",
        "defaultTopic": T.AUTO_CREATE_TOPIC,
        "readQueueNums": 4,
        "writeQueueNums": 4,
        "perm": T.PERM_RW,
        "topicFilterType": "SINGLE_TAG",
    }
    fields.update(overrides)
    return simple_cmd(RequestCode.UPDATE_AND_CREATE_TOPIC, **{k: v for k, v in fields.items() if v is not None})


# -- UPDATE_AND_CREATE_TOPIC / DELETE_TOPIC_IN_BROKER / GET_ALL_TOPIC_CONFIG (broker/handlers/admin_topic.py) ---------

TOPIC_ROWS = [
    Row("create-missing-topic", lambda: _create(topic=None), R.SYSTEM_ERROR, "the custom field <topic> is null"),
    Row(
        "create-missing-read-queue-nums",
        lambda: _create(readQueueNums=None),
        R.SYSTEM_ERROR,
        "the custom field <readQueueNums> is null",
    ),
    Row(
        "create-queue-nums-not-a-number",
        lambda: _create(writeQueueNums="four"),
        R.SYSTEM_ERROR,
        "the custom field <writeQueueNums> is not a valid number: 'four'",
    ),
    Row("create-missing-perm", lambda: _create(perm=None), R.SYSTEM_ERROR, "the custom field <perm> is null"),
    Row("create-blank-topic", lambda: _create(topic=" "), R.SYSTEM_ERROR, "The specified topic is blank."),
    Row(
        "create-illegal-characters",
        lambda: _create(topic="bad topic!"),
        R.SYSTEM_ERROR,
        "The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$",
    ),
    Row(
        "create-too-long",
        lambda: _create(topic="t" * 128),
        R.SYSTEM_ERROR,
        "The specified topic is longer than topic max length 127.",
    ),
    Row(
        "create-system-topic",
        lambda: _create(topic=T.SCHEDULE_TOPIC),
        R.SYSTEM_ERROR,
        f"The topic[{T.SCHEDULE_TOPIC}] is conflict with system topic.",
    ),
    Row(
        "create-system-prefix",
        lambda: _create(topic="rmq_sys_mine"),
        R.SYSTEM_ERROR,
        "The topic[rmq_sys_mine] is conflict with system topic.",
    ),
    Row(
        "create-cluster-name",
        lambda: _create(topic="DefaultCluster"),
        R.SYSTEM_ERROR,
        "the topic[DefaultCluster] is conflict with system reserved words.",
    ),
    Row(
        "create-zero-read-queues",
        lambda: _create(readQueueNums=0),
        R.SYSTEM_ERROR,
        "readQueueNums=0 is out of range [1, 1024]",
    ),
    Row(
        "create-too-many-write-queues",
        lambda: _create(writeQueueNums=1025),
        R.SYSTEM_ERROR,
        "writeQueueNums=1025 is out of range [1, 1024]",
    ),
    Row("create", lambda: _create(), R.SUCCESS, None),
    Row(
        "delete-missing-topic",
        lambda: simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER),
        R.SYSTEM_ERROR,
        "the custom field <topic> is null",
    ),
    Row(
        "delete-blank-topic",
        lambda: simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic="  "),
        R.SYSTEM_ERROR,
        "The specified topic is blank.",
    ),
    Row(
        "delete-system-topic",
        lambda: simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic=T.TRANS_HALF_TOPIC),
        R.SYSTEM_ERROR,
        f"The topic[{T.TRANS_HALF_TOPIC}] is conflict with system topic.",
    ),
    Row(
        "delete-unknown-topic", lambda: simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic="Nowhere"), R.SUCCESS, None
    ),
    Row(
        "delete",
        lambda: simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic="TopicA"),
        R.SUCCESS,
        None,
        setup=[put_topic("TopicA")],
    ),
    Row("list", lambda: simple_cmd(RequestCode.GET_ALL_TOPIC_CONFIG), R.SUCCESS, None, setup=[put_topic("TopicA")]),
]


@pytest.mark.parametrize("row", TOPIC_ROWS, ids=lambda r: r.id)
async def test_topic_admin_checks(tmp_path: Path, row: Row) -> None:
    check_row(await run_row(tmp_path, row), row)


async def test_topic_create_delete_and_list_take_effect(tmp_path: Path) -> None:
    async with wired_broker(tmp_path) as broker:
        created = await dispatch(broker, _create(readQueueNums=2, writeQueueNums=3, perm=T.PERM_READ))
        assert created.code == R.SUCCESS, created.remark
        tc = broker.topics.get("TopicA")
        assert tc is not None and (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (2, 3, T.PERM_READ)
        listed = await dispatch(broker, simple_cmd(RequestCode.GET_ALL_TOPIC_CONFIG))
        assert "TopicA" in json.loads(listed.body)["topicConfigTable"]
        broker.offsets.commit("G", "TopicA", 0, 5)
        deleted = await dispatch(broker, simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic="TopicA"))
        assert deleted.code == R.SUCCESS, deleted.remark
        assert broker.topics.get("TopicA") is None
        assert broker.offsets.query("G", "TopicA", 0) < 0


# -- UPDATE_AND_CREATE_SUBSCRIPTIONGROUP / DELETE_SUBSCRIPTIONGROUP / GET_ALL_SUBSCRIPTIONGROUP_CONFIG
#    (broker/handlers/admin_group.py) --------------------------------------------------------------------------------


def _create_group(body: bytes) -> RemotingCommand:
    return RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, body)


def _group_json(**fields: object) -> bytes:
    return json.dumps({"groupName": "G", **fields}).encode()


GROUP_ROWS = [
    Row(
        "create-unparsable-body",
        lambda: _create_group(b"{nope"),
        R.SYSTEM_ERROR,
        "bad SubscriptionGroupConfig body: ",
    ),
    Row(
        "create-body-not-an-object",
        lambda: _create_group(b"[1, 2]"),
        R.SYSTEM_ERROR,
        "bad SubscriptionGroupConfig body: not a JSON object",
    ),
    Row(
        "create-missing-group-name",
        lambda: _create_group(b'{"consumeEnable": true}'),
        R.SYSTEM_ERROR,
        "SubscriptionGroupConfig.groupName is missing",
    ),
    Row(
        "create-group-name-not-a-string",
        lambda: _create_group(b'{"groupName": 7}'),
        R.SYSTEM_ERROR,
        "SubscriptionGroupConfig.groupName is missing",
    ),
    Row(
        "create-blank-group-name",
        lambda: _create_group(_group_json(groupName=" ")),
        R.SYSTEM_ERROR,
        "the specified group is blank",
    ),
    Row(
        "create-illegal-group-name",
        lambda: _create_group(_group_json(groupName="g/1")),
        R.SYSTEM_ERROR,
        "the specified group contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$",
    ),
    Row(
        "create-group-name-too-long",
        lambda: _create_group(_group_json(groupName="g" * 256)),
        R.SYSTEM_ERROR,
        "the specified group is longer than group max length 255.",
    ),
    Row(
        "create-retry-queue-nums-not-a-number",
        lambda: _create_group(_group_json(retryQueueNums="one")),
        R.SYSTEM_ERROR,
        "bad SubscriptionGroupConfig: ",
    ),
    Row(
        "create-negative-retry-queue-nums",
        lambda: _create_group(_group_json(retryQueueNums=-1)),
        R.SYSTEM_ERROR,
        "retryQueueNums and retryMaxTimes must not be negative",
    ),
    Row(
        "create-negative-retry-max-times",
        lambda: _create_group(_group_json(retryMaxTimes=-3)),
        R.SYSTEM_ERROR,
        "retryQueueNums and retryMaxTimes must not be negative",
    ),
    Row("create", lambda: _create_group(_group_json(retryQueueNums=2)), R.SUCCESS, None),
    Row(
        "delete-missing-group-name",
        lambda: simple_cmd(RequestCode.DELETE_SUBSCRIPTIONGROUP),
        R.SYSTEM_ERROR,
        "the custom field <groupName> is null",
    ),
    Row(
        "delete-remove-offset-not-a-boolean",
        lambda: simple_cmd(RequestCode.DELETE_SUBSCRIPTIONGROUP, groupName="G", removeOffset="maybe"),
        R.SYSTEM_ERROR,
        "the custom field <removeOffset> is not a valid boolean: 'maybe'",
    ),
    Row(
        "delete-unknown-group",
        lambda: simple_cmd(RequestCode.DELETE_SUBSCRIPTIONGROUP, groupName="None"),
        R.SUCCESS,
        None,
    ),
    Row(
        "delete",
        lambda: simple_cmd(RequestCode.DELETE_SUBSCRIPTIONGROUP, groupName="G"),
        R.SUCCESS,
        None,
        setup=[put_group("G")],
    ),
    Row(
        "list",
        lambda: simple_cmd(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG),
        R.SUCCESS,
        None,
        setup=[put_group("G")],
    ),
]


@pytest.mark.parametrize("row", GROUP_ROWS, ids=lambda r: r.id)
async def test_group_admin_checks(tmp_path: Path, row: Row) -> None:
    check_row(await run_row(tmp_path, row), row)


@pytest.mark.parametrize("remove_offset", [False, True])
async def test_group_create_delete_and_list_take_effect(tmp_path: Path, remove_offset: bool) -> None:
    async with wired_broker(tmp_path) as broker:
        created = await dispatch(broker, _create_group(_group_json(retryQueueNums=2, consumeEnable=False)))
        assert created.code == R.SUCCESS, created.remark
        cfg = broker.groups.get("G")
        assert cfg is not None and (cfg.retry_queue_nums, cfg.consume_enable) == (2, False)
        listed = await dispatch(broker, simple_cmd(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG))
        assert "G" in json.loads(listed.body)["subscriptionGroupTable"]
        broker.offsets.commit("G", "TopicA", 0, 5)
        deleted = await dispatch(
            broker,
            simple_cmd(RequestCode.DELETE_SUBSCRIPTIONGROUP, groupName="G", removeOffset=str(remove_offset).lower()),
        )
        assert deleted.code == R.SUCCESS, deleted.remark
        assert broker.groups.get("G") is None
        assert broker.offsets.query("G", "TopicA", 0) == (-1 if remove_offset else 5)
