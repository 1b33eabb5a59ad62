"""The name server's system and unit topic lists over real sockets: GET_SYSTEM_TOPIC_LIST_FROM_NS (304),
GET_UNIT_TOPIC_LIST (311), GET_HAS_UNIT_SUB_TOPIC_LIST (312) and GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST (313), with
brokers registering topics through real REGISTER_BROKER frames whose topicSysFlag carries the UNIT (0x1) and
UNIT_SUB (0x2) bits."""

from __future__ import annotations

import json
from pathlib import Path

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.harness import run_namesrv
from tests.integration.test_namesrv import register_cmd as namesrv_register_cmd

A_MASTER, A_SLAVE, B_MASTER = "127.0.0.1:10911", "127.0.0.1:10921", "127.0.0.1:20911"
UNIT, UNIT_SUB = 0x1, 0x2


def register_cmd(
    cluster: str, name: str, addr: str, broker_id: int, flags: dict[str, int], counter: int = 1
) -> RemotingCommand:
    """REGISTER_BROKER with a plain RegisterBrokerBody, four queues a topic; ``flags`` is topic → topicSysFlag."""
    topics = dict.fromkeys(flags, 4)
    return namesrv_register_cmd(
        cluster, name, addr, broker_id, topics, version=(1700000000000, counter), sys_flags=flags
    )


async def topic_list(client: RemotingClient, ns: str, code: RequestCode) -> bytes:
    r = await client.invoke(ns, RemotingCommand.request(code, {}))
    assert r.code == ResponseCode.SUCCESS, r.remark
    return r.body


async def register(client: RemotingClient, ns: str, cmd: RemotingCommand) -> None:
    r = await client.invoke(ns, cmd)
    assert r.code == ResponseCode.SUCCESS, r.remark


async def test_empty_name_server_answers_empty_lists(tmp_path: Path, client: RemotingClient) -> None:
    async with run_namesrv(tmp_path) as ns:
        for code in (
            RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS,
            RequestCode.GET_UNIT_TOPIC_LIST,
            RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST,
            RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST,
        ):
            assert await topic_list(client, ns.addr, code) == b'{"topicList":[]}', code.name  # no brokerAddr


async def test_system_and_unit_topic_lists(tmp_path: Path, client: RemotingClient) -> None:
    a_topics = {"Plain": 0, "Unit": UNIT, "UnitSub": UNIT_SUB, "UnitBoth": UNIT | UNIT_SUB, "Other": 4}
    b_topics = {"Plain": 0, "BUnitSub": UNIT_SUB}
    async with run_namesrv(tmp_path) as ns:
        # the slave first: until the master registers, its address is the only one of broker-a
        await register(client, ns.addr, register_cmd("c1", "broker-a", A_SLAVE, 1, a_topics))
        assert json.loads(await topic_list(client, ns.addr, RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS)) == {
            "brokerAddr": A_SLAVE,
            "topicList": ["broker-a", "c1"],
        }
        assert json.loads(await topic_list(client, ns.addr, RequestCode.GET_UNIT_TOPIC_LIST)) == {"topicList": []}

        await register(client, ns.addr, register_cmd("c1", "broker-a", A_MASTER, 0, a_topics))
        await register(client, ns.addr, register_cmd("c2", "broker-b", B_MASTER, 0, b_topics))
        # byte for byte as fastjson writes TopicList: keys in alphabetical order
        assert await topic_list(client, ns.addr, RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS) == (
            b'{"brokerAddr":"127.0.0.1:10911","topicList":["broker-a","broker-b","c1","c2"]}'
        )
        assert await topic_list(client, ns.addr, RequestCode.GET_UNIT_TOPIC_LIST) == (
            b'{"topicList":["Unit","UnitBoth"]}'
        )
        assert await topic_list(client, ns.addr, RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST) == (
            b'{"topicList":["BUnitSub","UnitBoth","UnitSub"]}'
        )
        assert await topic_list(client, ns.addr, RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST) == (
            b'{"topicList":["BUnitSub","UnitSub"]}'
        )

        # a new topic-config version rewrites the flags: Plain becomes a unit topic, UnitSub loses its flag
        changed = {**a_topics, "Plain": UNIT, "UnitSub": 0}
        await register(client, ns.addr, register_cmd("c1", "broker-a", A_MASTER, 0, changed, counter=2))
        units = json.loads(await topic_list(client, ns.addr, RequestCode.GET_UNIT_TOPIC_LIST))
        assert units["topicList"] == ["Plain", "Unit", "UnitBoth"]
        subs = json.loads(await topic_list(client, ns.addr, RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST))
        assert subs["topicList"] == ["BUnitSub"]

        unreg = RemotingCommand.request(
            RequestCode.UNREGISTER_BROKER,
            {"brokerName": "broker-b", "brokerAddr": B_MASTER, "clusterName": "c2", "brokerId": "0"},
        )
        assert (await client.invoke(ns.addr, unreg)).code == ResponseCode.SUCCESS
        assert json.loads(await topic_list(client, ns.addr, RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS)) == {
            "brokerAddr": A_MASTER,
            "topicList": ["broker-a", "c1"],
        }
        subs = json.loads(await topic_list(client, ns.addr, RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST))
        assert subs["topicList"] == ["UnitBoth"]
        subs = json.loads(await topic_list(client, ns.addr, RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST))
        assert subs["topicList"] == []
