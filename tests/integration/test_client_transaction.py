"""Transactional producer against a real broker: commit, rollback, and an unknown outcome settled by the broker's
check-back (CHECK_TRANSACTION_STATE answered with END_TRANSACTION on the same connection)."""

from __future__ import annotations

from client import LocalTransactionState, Message, MessageQueue, Producer, PullConsumer, PullStatus
from protocol.message_ext import MessageExt
from tests.integration.client_support import Cluster, until


async def topic_bodies(ns: str, topic: str) -> list[bytes]:
    async with PullConsumer("CG_tx_reader", namesrv_addr=ns) as c:
        out: list[bytes] = []
        for mq in await c.fetch_subscribe_queues(topic):
            res = await c.pull(mq, 0, 32)
            if res.status is PullStatus.FOUND:
                out.extend(m.body for m in res.msg_found_list)
        return out


async def test_commit_rollback_and_check_back(cluster: Cluster) -> None:
    await cluster.create_topic("TopicTx", 1)
    checked: list[MessageExt] = []

    def check(msg: MessageExt) -> LocalTransactionState:
        checked.append(msg)
        return LocalTransactionState.COMMIT_MESSAGE

    async with Producer("PG_tx", namesrv_addr=cluster.ns_addr, check_listener=check) as p:
        ran: list[object] = []

        async def commit(msg: Message, arg: object) -> LocalTransactionState:
            ran.append(arg)
            return LocalTransactionState.COMMIT_MESSAGE

        r1, s1 = await p.send_message_in_transaction(Message("TopicTx", b"committed", keys=["c"]), commit, "arg1")
        assert s1 is LocalTransactionState.COMMIT_MESSAGE and ran == ["arg1"]
        _r2, s2 = await p.send_message_in_transaction(
            Message("TopicTx", b"rolled back"), lambda m, a: LocalTransactionState.ROLLBACK_MESSAGE
        )
        assert s2 is LocalTransactionState.ROLLBACK_MESSAGE

        def boom(msg: Message, arg: object) -> LocalTransactionState:
            raise RuntimeError("local transaction crashed")

        r3, s3 = await p.send_message_in_transaction(Message("TopicTx", b"checked back", keys=["u"]), boom)
        assert s3 is LocalTransactionState.UNKNOW
        # the broker asks this producer about the half message and commits it on our answer
        await until(lambda: checked, timeout=20, what="a CHECK_TRANSACTION_STATE")
        await until(
            lambda: _has(cluster.ns_addr, "TopicTx", b"checked back"), timeout=20, what="the checked-back message"
        )
    assert checked[0].body == b"checked back" and checked[0].keys == ["u"]
    assert checked[0].properties["UNIQ_KEY"] == r3.msg_id
    bodies = await topic_bodies(cluster.ns_addr, "TopicTx")
    assert sorted(bodies) == [b"checked back", b"committed"]  # the rolled back one never reaches the topic
    assert r1.message_queue == MessageQueue("TopicTx", "broker-a", 0)


async def _has(ns: str, topic: str, body: bytes) -> bool:
    return body in await topic_bodies(ns, topic)
