"""Transactions with the real producer (commit delivered, rollback never, unknown checked back and resolved, state
kept across a restart) and INVOKE_BROKER_TO_RESET_OFFSET / INVOKE_BROKER_TO_GET_CONSUMER_STATUS over raw frames
with consumer connections that answer broker → client requests.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from broker.store.request import GetRequest
from client import LocalTransactionState, Message, Producer
from client.admin.admin_client import parse_mq_table
from protocol.bodies import decode_reset_offset_body
from protocol.codes import LanguageCode, RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import HandlerRegistry, RemotingClient
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.broker_wire import (
    PULL_SUBSCRIPTION,
    PULL_SUSPEND,
    heartbeat_cmd,
    messages,
    pull,
    send,
    simple_cmd,
)

SUSPEND_SUB = PULL_SUSPEND | PULL_SUBSCRIPTION


async def test_transactions_commit_rollback_checkback(tmp_path: Path, client: RemotingClient) -> None:
    checked: list[str] = []

    def check(msg) -> LocalTransactionState:  # type: ignore[no-untyped-def]
        checked.append(msg.body.decode())
        return LocalTransactionState.COMMIT_MESSAGE

    tx_cfg = dict(transactionCheckInterval=100, transactionTimeOut=200)
    async with run_namesrv(tmp_path) as ns:
        async with run_broker(ns, tmp_path, **tx_cfg) as broker:
            async with Producer("PID_tx", namesrv_addr=ns.addr, check_listener=check) as p:
                for body, state in (
                    ("commit", LocalTransactionState.COMMIT_MESSAGE),
                    ("rollback", LocalTransactionState.ROLLBACK_MESSAGE),
                    ("unknown", LocalTransactionState.UNKNOW),
                ):
                    await p.send_message_in_transaction(Message("TxTopic", body.encode()), lambda m, a, s=state: s)
                await eventually(lambda: checked == ["unknown"] and broker.wiring.transactions.check_offset >= 4)
            total = sum(broker.store.get_max_offset_in_queue("TxTopic", q) for q in range(4))
            assert total == 2
            bodies = []
            for q in range(4):
                r = await pull(client, broker.addr, "CID_tx", "TxTopic", q, 0, suspend_ms=0)
                bodies += [(m.body, m.properties) for m in messages(r)]
            assert sorted(b for b, _ in bodies) == [b"commit", b"unknown"]
            # as Apache RocketMQ's endMessageTransaction: the half's properties stay (TRAN_MSG, __transactionId__ =
            # UNIQ_KEY), only REAL_TOPIC / REAL_QID go (tests/reference compares it with Apache RocketMQ 5.5.0)
            assert all(p["TRAN_MSG"] == "true" and "REAL_TOPIC" not in p and "REAL_QID" not in p for _, p in bodies)
            assert all(p["__transactionId__"] == p["UNIQ_KEY"] for _, p in bodies)
            assert all("TRAN_PREPARED_QUEUE_OFFSET" not in p for _, p in bodies)
        # restart: op markers and the check offset survive; nothing is checked or delivered again
        async with run_broker(ns, tmp_path, **tx_cfg) as broker:
            svc = broker.wiring.transactions
            assert await svc.check_once() == 0
            assert sum(broker.store.get_max_offset_in_queue("TxTopic", q) for q in range(4)) == 2


async def test_end_transaction_wire_errors(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path) as broker:
        r = await send(client, broker.addr, "TxW", b"half", props={"TRAN_MSG": "true", "PGROUP": "PG"}, sys_flag=4)
        assert r.code == ResponseCode.SUCCESS
        assert broker.store.get_max_offset_in_queue("TxW", 0) == 0
        assert broker.store.get_max_offset_in_queue("RMQ_SYS_TRANS_HALF_TOPIC", 0) == 1
        phys, qoff = int(r.ext_fields["msgId"][16:], 16), int(r.ext_fields["queueOffset"])
        end = lambda **kw: simple_cmd(RequestCode.END_TRANSACTION, msgId="m", **kw)  # noqa: E731
        base = dict(tranStateTableOffset=qoff, commitLogOffset=phys, commitOrRollback=8)
        r = await client.invoke(broker.addr, end(producerGroup="OTHER", **base), 3.0)
        assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "The producer group wrong")
        r = await client.invoke(broker.addr, end(producerGroup="PG", **{**base, "commitLogOffset": 10**8}), 3.0)
        assert r.remark == "Find prepared transaction message failed"
        r = await client.invoke(broker.addr, end(producerGroup="PG", **base), 3.0)
        assert r.code == ResponseCode.SUCCESS
        r = await client.invoke(broker.addr, end(producerGroup="PG", **base), 3.0)  # duplicate: no second copy
        assert r.code == ResponseCode.SUCCESS and broker.store.get_max_offset_in_queue("TxW", 0) == 1
        r = await pull(client, broker.addr, "G", "TxW", 0, 0, suspend_ms=0)
        [m] = messages(r)
        assert m.sys_flag & 0xC == 8 and m.prepared_transaction_offset == phys


async def _consumer_conn(
    broker_addr: str, cid: str, group: str, topic: str, lang: LanguageCode
) -> tuple[RemotingClient, list[RemotingCommand]]:
    got: list[RemotingCommand] = []
    reg = HandlerRegistry()

    async def on_reset(ctx, cmd):  # type: ignore[no-untyped-def]
        got.append(cmd)
        return None

    async def on_status(ctx, cmd):  # type: ignore[no-untyped-def]
        mq = json.dumps({"brokerName": "broker-a", "queueId": 0, "topic": topic}, separators=(",", ":"))
        body = '{"messageQueueTable":{' + mq + ":7}}"
        return cmd.make_response(body=body.encode())

    reg.register(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, on_reset)
    reg.register(RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT, on_status)
    c = RemotingClient(reg)
    hb = heartbeat_cmd(cid, group, topic)
    hb.language = lang
    r = await c.invoke(broker_addr, hb, 3.0)
    assert r.code == ResponseCode.SUCCESS
    return c, got


async def test_reset_offset_by_time(tmp_path: Path, client: RemotingClient) -> None:
    async with run_broker(None, tmp_path) as broker:
        for i in range(3):
            await send(client, broker.addr, "RT", f"old{i}".encode(), queue_nums=1)
        r = await pull(client, broker.addr, "G", "RT", 0, 2, suspend_ms=0)
        t = messages(r)[0].store_timestamp + 1  # 1 ms after the last old message, before the new ones
        # store times are whole ms: let the clock pass t, so the new ones are stored at t + 1 or later
        await eventually(lambda: time.time() * 1000 >= t + 1, what="the clock past t", step=0.001)
        for i in range(2):
            await send(client, broker.addr, "RT", f"new{i}".encode(), queue_nums=1)
        await client.invoke(
            broker.addr,
            simple_cmd(RequestCode.UPDATE_CONSUMER_OFFSET, consumerGroup="G", topic="RT", queueId=0, commitOffset=5),
            3.0,
        )
        reset = simple_cmd(
            RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, topic="RT", group="G", timestamp=t, isForce="false"
        )
        # nobody online: the stored offsets are reset, forced or not (J 5.5 useServerSideResetOffset)
        r = await client.invoke(broker.addr, reset, 3.0)
        assert r.code == ResponseCode.SUCCESS, r.remark
        # J 5.5's search (BoundaryType.LOWER): the first message stored at or after t, new0 (offset 3)
        assert {mq.queue_id: v for mq, v in parse_mq_table(r.body).items()} == {0: 3}
        assert broker.offsets.query("G", "RT", 0) == 3
        unknown = simple_cmd(
            RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, topic="RT", group="Nobody", timestamp=t, isForce="false"
        )
        r = await client.invoke(broker.addr, unknown, 3.0)
        assert (r.code, r.remark) == (ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, "Group Nobody does not exist")
        assert broker.offsets.query("Nobody", "RT", 0) == -1
        await client.invoke(
            broker.addr,
            simple_cmd(RequestCode.UPDATE_CONSUMER_OFFSET, consumerGroup="G", topic="RT", queueId=0, commitOffset=5),
            3.0,
        )
        java, got_j = await _consumer_conn(broker.addr, "cid-j", "G", "RT", LanguageCode.JAVA)
        cpp, got_c = await _consumer_conn(broker.addr, "cid-c", "G", "RT", LanguageCode.CPP)
        try:
            reset = simple_cmd(
                RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, topic="RT", group="G", timestamp=t, isForce="false"
            )
            r = await client.invoke(broker.addr, reset, 3.0)
            assert r.code == ResponseCode.SUCCESS, r.remark
            assert {mq.queue_id: v for mq, v in parse_mq_table(r.body).items()} == {0: 3}
            assert broker.offsets.query("G", "RT", 0) == 3
            await eventually(lambda: got_j and got_c)
            assert got_j[0].ext_fields["isForce"] == "false" and got_c[0].ext_fields["isForce"] == "0"
            assert got_c[0].body.startswith(b'{"offsetTable":[')
            assert decode_reset_offset_body(got_j[0].body) == {("RT", "broker-a", 0): 3}
            assert decode_reset_offset_body(got_c[0].body) == {("RT", "broker-a", 0): 3}
            # the consumer re-reads from J's answer on
            r = await pull(client, broker.addr, "G", "RT", 0, 3, suspend_ms=0)
            assert [m.body for m in messages(r)] == [b"new0", b"new1"]
            # not forced: moving forward (timestamp -1 = max) leaves the committed offset alone
            reset = simple_cmd(
                RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, topic="RT", group="G", timestamp=-1, isForce="false"
            )
            r = await client.invoke(broker.addr, reset, 3.0)
            assert {mq.queue_id: v for mq, v in parse_mq_table(r.body).items()} == {0: 3}
            reset = simple_cmd(
                RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, topic="RT", group="G", timestamp=-1, isForce="true"
            )
            r = await client.invoke(broker.addr, reset, 3.0)
            assert {mq.queue_id: v for mq, v in parse_mq_table(r.body).items()} == {0: 5}
            st = simple_cmd(RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, topic="RT", group="G")
            r = await client.invoke(broker.addr, st, 8.0)
            assert r.code == ResponseCode.SUCCESS
            text = r.body.decode()
            assert '"cid-j":{{"brokerName":"broker-a","queueId":0,"topic":"RT"}:7}' in text and '"cid-c"' in text
        finally:
            await java.close()
            await cpp.close()


async def test_reset_answers_the_groups_held_pulls_at_once(tmp_path: Path, client: RemotingClient) -> None:
    """librocketmq 1.2 restarts a reset queue only after its last pull comes back, holding its consumer table (and so
    its shutdown) until then: the reset answers that group's held pulls instead of leaving them to the 20 s hold."""
    async with run_broker(None, tmp_path) as broker:
        await send(client, broker.addr, "RH", b"m0", queue_nums=1)
        for group in ("G", "H"):
            await client.invoke(
                broker.addr,
                simple_cmd(
                    RequestCode.UPDATE_CONSUMER_OFFSET, consumerGroup=group, topic="RH", queueId=0, commitOffset=1
                ),
                3.0,
            )
        cpp, _got = await _consumer_conn(broker.addr, "cid-g", "G", "RH", LanguageCode.CPP)
        try:
            held_g = asyncio.create_task(
                pull(client, broker.addr, "G", "RH", 0, 1, suspend_ms=20_000, sys_flag=SUSPEND_SUB, timeout=30)
            )
            held_h = asyncio.create_task(
                pull(client, broker.addr, "H", "RH", 0, 1, suspend_ms=20_000, sys_flag=SUSPEND_SUB, timeout=30)
            )
            await eventually(lambda: broker.polling.held_count == 2)
            reset = simple_cmd(
                RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, topic="RH", group="G", timestamp=0, isForce="true"
            )
            r = await client.invoke(broker.addr, reset, 3.0)
            assert r.code == ResponseCode.SUCCESS, r.remark
            done, _ = await asyncio.wait([held_g, held_h], timeout=10, return_when=asyncio.FIRST_COMPLETED)
            assert done == {held_g}, "the reset group's held pull was not answered"
            assert held_g.result().code == ResponseCode.PULL_NOT_FOUND
            assert broker.polling.held_count == 1  # the other group's pull is still held
            held_h.cancel()
        finally:
            await cpp.close()


async def test_reset_moves_live_push_consumer_back(tmp_path: Path, client: RemotingClient) -> None:
    from client import ConsumeResult, PushConsumer

    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(ns, tmp_path) as broker,
        Producer("PID_reset", namesrv_addr=ns.addr) as p,
    ):
        for i in range(3):
            await p.send(Message("LiveReset", f"old{i}".encode()))
        seen: list[bytes] = []
        consumer = PushConsumer(
            "CID_live",
            namesrv_addr=ns.addr,
            consume_from_where="FIRST_OFFSET",
            persist_consumer_offset_interval_ms=200,
        )

        stored: dict[int, list[tuple[int, int, bytes]]] = {}  # queue id -> (queue offset, store time, body)

        def listener(msgs: list) -> ConsumeResult:  # type: ignore[type-arg]
            seen.extend(m.body for m in msgs)
            for m in msgs:
                stored.setdefault(m.queue_id, []).append((m.queue_offset, m.store_timestamp, m.body))
            return ConsumeResult.SUCCESS

        consumer.subscribe("LiveReset", "*", listener)
        async with consumer:
            await eventually(lambda: len(seen) == 3)
            last_ts = max(
                broker.store.get_message_store_timestamp(
                    "LiveReset", q, broker.store.get_max_offset_in_queue("LiveReset", q) - 1
                )
                for q in range(4)
                if broker.store.get_max_offset_in_queue("LiveReset", q) > 0
            )
            t = last_ts + 1
            await eventually(lambda: time.time() * 1000 > t, what="the clock past t", step=0.001)
            for i in range(2):
                await p.send(Message("LiveReset", f"new{i}".encode()))
            await eventually(lambda: len(seen) == 5)
            await eventually(
                lambda: sum(max(broker.offsets.query("CID_live", "LiveReset", q), 0) for q in range(4)) == 5
            )
            seen.clear()
            reset = simple_cmd(
                RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
                topic="LiveReset",
                group="CID_live",
                timestamp=t,
                isForce="true",
            )
            r = await client.invoke(broker.addr, reset, 3.0)
            assert r.code == ResponseCode.SUCCESS, r.remark
            # J 5.5's answer per queue (BoundaryType.LOWER): the first message stored at or after t, else the max
            # offset: the new messages come again, the old ones do not
            expected = [b for units in stored.values() for _off, ts, b in sorted(set(units)) if ts >= t]
            assert set(expected) >= {b"new0", b"new1"}
            await eventually(lambda: len(seen) >= len(expected))
            await asyncio.sleep(0.3)  # a bounded look for extra re-deliveries (not synchronisation)
            assert sorted(seen) == sorted(expected)


async def test_half_in_its_immunity_window_is_put_back_and_the_pass_goes_on(tmp_path: Path) -> None:
    """As Apache RocketMQ's check: a half whose producer set CHECK_IMMUNITY_TIME_IN_SECONDS is re-put at the end of
    the half queue while in its window and the pass goes on, so a half behind it is checked back; a half without
    the property stops the pass while younger than transactionTimeOut."""
    checked: list[str] = []

    def check(msg) -> LocalTransactionState:  # type: ignore[no-untyped-def]
        checked.append(msg.body.decode())
        return LocalTransactionState.COMMIT_MESSAGE

    async with (
        run_namesrv(tmp_path) as ns,
        run_broker(ns, tmp_path, transactionCheckInterval=100, transactionTimeOut=200) as broker,
        Producer("PID_imm", namesrv_addr=ns.addr, check_listener=check) as p,
    ):
        immune = Message("TxImm", b"immune", properties={"CHECK_IMMUNITY_TIME_IN_SECONDS": "60"})
        for m in (immune, Message("TxImm", b"plain")):
            await p.send_message_in_transaction(m, lambda m, a: LocalTransactionState.UNKNOW)
        await eventually(lambda: checked == ["plain"])
        half = "RMQ_SYS_TRANS_HALF_TOPIC"
        await eventually(lambda: broker.store.get_max_offset_in_queue(half, 0) >= 5)  # put back, again
        assert checked == ["plain"]
        r = await broker.store.get_message(GetRequest("G", half, 0, 2, 32, 1 << 20))
        copies = [m for m in r.messages() if m.body == b"immune"]
        assert copies and all(m.properties["TRAN_PREPARED_QUEUE_OFFSET"] == "0" for m in copies)
        assert all("TRANSACTION_CHECK_TIMES" not in m.properties for m in copies)
