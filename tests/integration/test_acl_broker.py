"""ACL 1.0 on the broker, request by request, with raw frames: every row of the code → permission table and every
admin-only code, signed by an admin and by a normal account; whitelists; J's failure reply; hot reload."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker
from tests.integration.acl_support import (
    ACCOUNTS,
    ADMIN,
    NORMAL,
    SUB_ONLY,
    create_topic_cmd,
    refused,
    signed,
    write_acl,
)
from tests.integration.broker_wire import heartbeat_cmd, pull_cmd, send_cmd, simple_cmd

Build = Callable[[], RemotingCommand]


def _send_retry(group: str) -> RemotingCommand:
    cmd = send_cmd(f"%RETRY%{group}", b"x", v2=True, group=group)
    return cmd


# (row, request builder, normal account allowed?, denial reason for the normal account)
ROWS: list[tuple[str, Build, bool, str]] = [
    ("SEND_MESSAGE PUB ok", lambda: send_cmd("topicA", b"x"), True, ""),
    ("SEND_MESSAGE SUB-only topic", lambda: send_cmd("topicC", b"x"), False, "No default permission for topic:topicC"),
    ("SEND_MESSAGE_V2 PUB ok", lambda: send_cmd("topicB", b"x", v2=True), True, ""),
    ("SEND_MESSAGE_V2 DENY", lambda: send_cmd("topicD", b"x", v2=True), False, "topic:topicD"),
    ("SEND_MESSAGE_V2 default DENY", lambda: send_cmd("other", b"x", v2=True), False, "topic:other"),
    ("SEND_MESSAGE_V2 retry SUB ok", lambda: _send_retry("groupA"), True, ""),
    ("SEND_MESSAGE_V2 retry DENY", lambda: _send_retry("groupD"), False, "No default permission for group:groupD"),
    (
        "CONSUMER_SEND_MSG_BACK ok",
        lambda: simple_cmd(
            RequestCode.CONSUMER_SEND_MSG_BACK, group="groupA", offset=0, delayLevel=0, originTopic="topicA"
        ),
        True,
        "",
    ),
    (
        "CONSUMER_SEND_MSG_BACK DENY",
        lambda: simple_cmd(RequestCode.CONSUMER_SEND_MSG_BACK, group="groupD", offset=0, delayLevel=0),
        False,
        "group:groupD",
    ),
    ("PULL ok", lambda: pull_cmd("groupA", "topicA", 0, 0, suspend_ms=0), True, ""),
    ("PULL PUB-only topic", lambda: pull_cmd("groupA", "topicB", 0, 0, suspend_ms=0), False, "topic:topicB"),
    ("PULL DENY group", lambda: pull_cmd("groupD", "topicA", 0, 0, suspend_ms=0), False, "group:groupD"),
    (
        "QUERY_MESSAGE ok",
        lambda: simple_cmd(
            RequestCode.QUERY_MESSAGE, topic="topicC", key="k", maxNum=1, beginTimestamp=0, endTimestamp=1
        ),
        True,
        "",
    ),
    (
        "QUERY_MESSAGE DENY",
        lambda: simple_cmd(
            RequestCode.QUERY_MESSAGE, topic="topicD", key="k", maxNum=1, beginTimestamp=0, endTimestamp=1
        ),
        False,
        "topic:topicD",
    ),
    ("HEART_BEAT ok", lambda: heartbeat_cmd("c1", "groupA", "topicA"), True, ""),
    ("HEART_BEAT DENY topic", lambda: heartbeat_cmd("c1", "groupA", "topicD"), False, "topic:topicD"),
    ("HEART_BEAT DENY group", lambda: heartbeat_cmd("c1", "groupD", "topicA"), False, "group:groupD"),
    (
        "UNREGISTER_CLIENT ok",
        lambda: simple_cmd(RequestCode.UNREGISTER_CLIENT, clientID="c1", consumerGroup="groupA"),
        True,
        "",
    ),
    (
        "UNREGISTER_CLIENT DENY",
        lambda: simple_cmd(RequestCode.UNREGISTER_CLIENT, clientID="c1", consumerGroup="groupD"),
        False,
        "group:groupD",
    ),
    (
        "GET_CONSUMER_LIST ok",
        lambda: simple_cmd(RequestCode.GET_CONSUMER_LIST_BY_GROUP, consumerGroup="groupA"),
        True,
        "",
    ),
    (
        "GET_CONSUMER_LIST DENY",
        lambda: simple_cmd(RequestCode.GET_CONSUMER_LIST_BY_GROUP, consumerGroup="groupD"),
        False,
        "group:groupD",
    ),
    (
        "UPDATE_CONSUMER_OFFSET ok",
        lambda: simple_cmd(
            RequestCode.UPDATE_CONSUMER_OFFSET, consumerGroup="groupA", topic="topicA", queueId=0, commitOffset=0
        ),
        True,
        "",
    ),
    (
        "UPDATE_CONSUMER_OFFSET DENY topic",
        lambda: simple_cmd(
            RequestCode.UPDATE_CONSUMER_OFFSET, consumerGroup="groupA", topic="topicD", queueId=0, commitOffset=0
        ),
        False,
        "topic:topicD",
    ),
    (
        "GET_MAX_OFFSET: topic ANY",
        lambda: simple_cmd(RequestCode.GET_MAX_OFFSET, topic="topicD", queueId=0),
        False,
        "topic:topicD",
    ),
    (
        "GET_MAX_OFFSET: PUB-only topic",
        lambda: simple_cmd(RequestCode.GET_MAX_OFFSET, topic="topicB", queueId=0),
        True,
        "",
    ),
    (
        "SEND_BATCH: PUB on the header topic (J497 checked nothing)",
        lambda: RemotingCommand.request(RequestCode.SEND_BATCH_MESSAGE, {"a": "g", "b": "topicD"}),
        False,
        "topic:topicD",
    ),
]

ADMIN_ONLY: list[tuple[str, Build]] = [
    ("UPDATE_AND_CREATE_TOPIC", lambda: create_topic_cmd("adminT")),
    (
        "UPDATE_BROKER_CONFIG",
        lambda: RemotingCommand.request(RequestCode.UPDATE_BROKER_CONFIG, {}, b"autoCreateTopicEnable=true\n"),
    ),
    ("DELETE_TOPIC_IN_BROKER", lambda: simple_cmd(RequestCode.DELETE_TOPIC_IN_BROKER, topic="adminT")),
    (
        "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP",
        lambda: RemotingCommand.request(
            RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, json.dumps({"groupName": "gX"}).encode()
        ),
    ),
    ("DELETE_SUBSCRIPTIONGROUP", lambda: simple_cmd(RequestCode.DELETE_SUBSCRIPTIONGROUP, groupName="gX")),
]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    write_acl(tmp_path / "home")
    return tmp_path / "home"


async def test_code_permission_table(tmp_path: Path, home: Path) -> None:
    async with run_broker(None, tmp_path, aclEnable=True, rocketmqHome=home) as broker:
        client = RemotingClient()
        try:
            for name, build, normal_ok, reason in ROWS:
                r = await client.invoke(broker.addr, signed(build(), NORMAL), 5.0)
                if normal_ok:
                    assert not refused(r), (name, r.remark)
                else:
                    assert refused(r) and reason in (r.remark or ""), (name, r.remark)
                    assert r.ext_fields == {} or "AccessKey" not in r.ext_fields
                # the admin account has no perm entries: it skips every resource check
                r = await client.invoke(broker.addr, signed(build(), ADMIN), 5.0)
                assert not refused(r), (name, r.remark)
                # unsigned and wrongly signed requests are refused whatever the code
                r = await client.invoke(broker.addr, build(), 5.0)
                assert refused(r) and "No accessKey is configured" in (r.remark or ""), name
                bad = signed(build(), NORMAL)
                bad.ext_fields["Signature"] = "AAAA" + bad.ext_fields["Signature"][4:]
                r = await client.invoke(broker.addr, bad, 5.0)
                assert refused(r) and "Check signature failed for accessKey=RocketMQ" in (r.remark or ""), name
            for name, build in ADMIN_ONLY:
                r = await client.invoke(broker.addr, signed(build(), NORMAL), 5.0)
                assert refused(r), name
                assert f"Need admin permission for request code={build().code}, but accessKey=RocketMQ is not" in (
                    r.remark or ""
                )
                r = await client.invoke(broker.addr, signed(build(), ADMIN), 5.0)
                assert not refused(r) and r.code == ResponseCode.SUCCESS, (name, r.code, r.remark)
            r = await client.invoke(broker.addr, signed(send_cmd("topicA", b"x"), SUB_ONLY), 5.0)
            assert refused(r) and "topic:topicA" in (r.remark or "")
            for creds in (NORMAL, SUB_ONLY, None):
                r = await client.invoke(broker.addr, signed(send_cmd("neverStored", b"x"), creds), 5.0)
                assert refused(r)
            ghost = send_cmd("topicA", b"x")
            ghost.ext_fields["AccessKey"] = "nobodyKey"
            r = await client.invoke(broker.addr, ghost, 5.0)
            assert refused(r) and "No acl config for nobodyKey" in (r.remark or "")
        finally:
            await client.close()
        # nothing refused reached the store
        assert broker.topics.get("neverStored") is None


async def test_whitelists_skip_what_j_skips(tmp_path: Path) -> None:
    home = tmp_path / "home"
    accounts = [dict(a) for a in ACCOUNTS]
    accounts[1]["whiteRemoteAddress"] = "127.0.0.1"  # the normal account, from our address
    write_acl(home, accounts)
    async with run_broker(None, tmp_path, aclEnable=True, rocketmqHome=home) as broker:
        client = RemotingClient()
        try:
            # account whitelist: signature AND perms skipped
            cmd = signed(send_cmd("topicD", b"x", v2=True), NORMAL)
            cmd.ext_fields["Signature"] = "bogus"
            r = await client.invoke(broker.addr, cmd, 5.0)
            assert not refused(r), r.remark
            # but an account whitelist is no help without an AccessKey
            r = await client.invoke(broker.addr, send_cmd("topicD", b"x", v2=True), 5.0)
            assert refused(r)
            # a whitelist that does not match us changes nothing
            accounts[1]["whiteRemoteAddress"] = "10.0.0.*"
            write_acl(home, accounts, white=["192.168.*.*"])
            assert broker.acl is not None and broker.acl.check_now()
            r = await client.invoke(broker.addr, cmd, 5.0)
            assert refused(r) and "Check signature failed" in (r.remark or "")
            # global whitelist: no key, no signature, no perms
            write_acl(home, accounts, white=["127.0.0.{1,2}"])
            assert broker.acl.check_now()
            r = await client.invoke(broker.addr, send_cmd("topicD", b"x", v2=True), 5.0)
            assert not refused(r), r.remark
        finally:
            await client.close()


async def test_hot_reload_and_a_bad_file_keeps_the_rules(tmp_path: Path, home: Path) -> None:
    async with run_broker(None, tmp_path, aclEnable=True, rocketmqHome=home, aclReloadInterval=100) as broker:
        client = RemotingClient()
        try:
            r = await client.invoke(broker.addr, signed(send_cmd("topicZ", b"x"), NORMAL), 5.0)
            assert refused(r)
            accounts = [dict(a) for a in ACCOUNTS]
            accounts[1]["topicPerms"] = [*accounts[1]["topicPerms"], "topicZ=PUB"]
            write_acl(home, accounts)

            async def allowed() -> bool:
                r = await client.invoke(broker.addr, signed(send_cmd("topicZ", b"x"), NORMAL), 5.0)
                return not refused(r)

            await eventually(allowed)  # no restart: the watcher picked it up
            reloads = broker.acl.reloads if broker.acl else 0
            (home / "conf" / "plain_acl.yml").write_text("accounts: [{accessKey: short, secretKey: 1}]\n")
            (home / "conf" / "acl").mkdir()
            (home / "conf" / "acl" / "more.yml").write_text("accounts: [{accessKey: moreKeyX, secretKey: 12345678}]\n")
            await eventually(lambda: broker.acl is not None and broker.acl.failures > 0)
            assert broker.acl is not None and broker.acl.reloads == reloads
            assert await allowed()  # the previous rules still apply
        finally:
            await client.close()
