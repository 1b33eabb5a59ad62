"""Topic attributes (5.x ``+message.type=FIFO`` …) and the 5.x admin codes, as the 5.5.0 mqadmin and the
Dashboard use them: UPDATE_AND_CREATE_TOPIC with ``attributes``, UPDATE_AND_CREATE_TOPIC_LIST (18), GET_TOPIC_CONFIG
(351), UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225), RESUME_CHECK_HALF_MESSAGE (323); attributes stored (across a
restart), returned by GET_ALL_TOPIC_CONFIG and registered with the name server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from protocol.bodies import RegisterBrokerBody
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import CreateTopicRequestHeader
from protocol.remoting import RemotingClient
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import send


def create(topic: str, attributes: str | None, *, read: int = 4) -> RemotingCommand:
    h = CreateTopicRequestHeader(topic, "TBW102", read, read, 6, "SINGLE_TAG", 0, False, attributes)
    return RemotingCommand.request(RequestCode.UPDATE_AND_CREATE_TOPIC, h.to_ext_fields())


async def topic_config(client: RemotingClient, addr: str, topic: str) -> tuple[int, Any]:
    cmd = RemotingCommand.request(RequestCode.GET_TOPIC_CONFIG, {"topic": topic, "lo": "true"})
    resp = await client.invoke(addr, cmd)
    return resp.code, (json.loads(resp.body) if resp.body else resp.remark)


async def test_attributes_are_validated_stored_returned_and_survive_a_restart(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns:
        async with run_broker(ns, tmp_path) as broker:
            client = RemotingClient()
            try:
                ok = await client.invoke(broker.addr, create("Fifo", "+message.type=FIFO"))
                assert ok.code == ResponseCode.SUCCESS, ok.remark
                code, doc = await topic_config(client, broker.addr, "Fifo")
                assert code == ResponseCode.SUCCESS
                assert doc["topicName"] == "Fifo" and doc["readQueueNums"] == 4
                assert doc["attributes"] == {"message.type": "FIFO"} and "mappingDetail" not in doc
                # an update without attributes keeps them; +/- alter and delete them
                assert (await client.invoke(broker.addr, create("Fifo", None, read=8))).code == ResponseCode.SUCCESS
                assert (await topic_config(client, broker.addr, "Fifo"))[1]["attributes"] == {"message.type": "FIFO"}
                ok = await client.invoke(broker.addr, create("Fifo", "+message.type=DELAY,+reserve.time=5"))
                assert ok.code == ResponseCode.SUCCESS, ok.remark
                attrs = (await topic_config(client, broker.addr, "Fifo"))[1]["attributes"]
                assert attrs == {"message.type": "DELAY", "reserve.time": "5"}
                assert (await client.invoke(broker.addr, create("Fifo", "-reserve.time"))).code == 0
                # refusals, with J's texts
                refused = {
                    "+message.type=NOPE": "value is not in set",
                    "+colour=red": "unsupported key: colour",
                    "-message.type": None,  # creating: only + is allowed
                    "message.type=FIFO": "add/alter attribute format is wrong: message.type",
                }
                for i, (mod, text) in enumerate(refused.items()):
                    resp = await client.invoke(broker.addr, create(f"New{i}", mod))
                    assert resp.code == ResponseCode.SYSTEM_ERROR, mod
                    assert text is None or text in (resp.remark or ""), (mod, resp.remark)
                resp = await client.invoke(broker.addr, create("Fifo", "+queue.type=BatchCQ"))
                assert resp.remark == "attempt to update an unchangeable attribute. key: queue.type"
                mixed = await client.invoke(broker.addr, create("Mixed", "+message.type=MIXED"))
                assert (mixed.code, mixed.remark) == (
                    ResponseCode.INVALID_PARAMETER,
                    "MIXED message type is not supported.",
                )
                assert await topic_config(client, broker.addr, "Nope") == (
                    ResponseCode.TOPIC_NOT_EXIST,
                    "No topic in this broker. topic: Nope",
                )
                # GET_ALL_TOPIC_CONFIG (the Dashboard's topic list) carries them
                table = json.loads((await client.invoke(broker.addr, RemotingCommand.request(21))).body)
                assert table["topicConfigTable"]["Fifo"]["attributes"] == {"message.type": "DELAY"}
                assert "New0" not in table["topicConfigTable"]
                # the registration the name server receives carries them too
                assert broker.registrar is not None
                wrapper = RegisterBrokerBody.decode(broker.registrar._body()).topic_config_table
                assert wrapper["Fifo"].attributes == {"message.type": "DELAY"}
            finally:
                await client.close()
        async with run_broker(ns, tmp_path) as broker:
            assert broker.topics.get("Fifo") is not None
            assert broker.topics.get("Fifo").attributes == {"message.type": "DELAY"}  # type: ignore[union-attr]


async def test_topic_list_creates_every_topic_or_none(tmp_path: Path) -> None:
    def body(*topics: dict[str, Any]) -> bytes:
        return json.dumps({"topicConfigList": list(topics)}).encode()

    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        client = RemotingClient()
        try:
            good: list[dict[str, Any]] = [
                {
                    "topicName": "L1",
                    "readQueueNums": 2,
                    "writeQueueNums": 2,
                    "perm": 6,
                    "attributes": {"+message.type": "NORMAL"},
                },
                {"topicName": "L2", "readQueueNums": 3, "writeQueueNums": 3, "perm": 6},
            ]
            resp = await client.invoke(broker.addr, RemotingCommand.request(18, body=body(*good)))
            assert resp.code == ResponseCode.SUCCESS, resp.remark
            assert (await topic_config(client, broker.addr, "L1"))[1]["attributes"] == {"message.type": "NORMAL"}
            assert (await topic_config(client, broker.addr, "L2"))[1]["readQueueNums"] == 3
            bad: list[dict[str, Any]] = [
                {"topicName": "L3", "readQueueNums": 1, "writeQueueNums": 1},
                {"topicName": "bad topic!"},
            ]
            resp = await client.invoke(broker.addr, RemotingCommand.request(18, body=body(*bad)))
            assert resp.code == ResponseCode.SYSTEM_ERROR
            assert (await topic_config(client, broker.addr, "L3"))[0] == ResponseCode.TOPIC_NOT_EXIST
        finally:
            await client.close()


async def test_subscription_group_list_creates_every_group_or_none(tmp_path: Path) -> None:
    def body(*groups: dict[str, Any]) -> bytes:
        return json.dumps({"groupConfigList": list(groups)}).encode()

    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        client = RemotingClient()
        try:
            good = body({"groupName": "G1", "retryMaxTimes": 3}, {"groupName": "G2"})
            resp = await client.invoke(broker.addr, RemotingCommand.request(225, body=good))
            assert resp.code == ResponseCode.SUCCESS, resp.remark
            groups = broker.groups.get("G1"), broker.groups.get("G2")
            assert groups[0] is not None and groups[0].retry_max_times == 3 and groups[1] is not None
            bad = body({"groupName": "G3"}, {"retryMaxTimes": 1})
            resp = await client.invoke(broker.addr, RemotingCommand.request(225, body=bad))
            assert resp.code == ResponseCode.SYSTEM_ERROR and broker.groups.get("G3") is None
        finally:
            await client.close()


async def test_resume_check_half_message_puts_it_back_for_checking(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, transactionCheckInterval=3_600_000) as broker:
        client = RemotingClient()
        try:
            half = await send(client, broker.addr, "TxT", b"half", sys_flag=4, props={"PGROUP": "PG_tx"})
            assert half.code == ResponseCode.SUCCESS, half.remark
            assert broker.store is not None
            before = broker.store.get_max_offset_in_queue("RMQ_SYS_TRANS_HALF_TOPIC", 0)
            cmd = RemotingCommand.request(323, {"msgId": half.ext_fields["msgId"], "topic": "TxT"})
            resp = await client.invoke(broker.addr, cmd)
            assert resp.code == ResponseCode.SUCCESS, resp.remark
            assert broker.store.get_max_offset_in_queue("RMQ_SYS_TRANS_HALF_TOPIC", 0) == before + 1
            bad = await client.invoke(broker.addr, RemotingCommand.request(323, {"msgId": "nonsense"}))
            assert (bad.code, bad.remark) == (
                ResponseCode.SYSTEM_ERROR,
                "Put message back to RMQ_SYS_TRANS_HALF_TOPIC failed.",
            )
        finally:
            await client.close()
