"""SYNC_MASTER waits (``broker.ha.master.GroupTransfer``) on a real store: no slave → SLAVE_NOT_AVAILABLE at once,
a slave too far behind → the same, one ack releases every waiter it covers, a missed deadline →
FLUSH_SLAVE_TIMEOUT; and through the store's put path, the flush and replica waits combine."""

from __future__ import annotations

import asyncio
from pathlib import Path

from broker.ha.master import GroupTransfer, HAConfig
from broker.ha.state import MasterHAState, SlaveLink
from broker.store import MessageStore, PutMessageStatus, StoreConfig
from broker.store.request import PutRequest


def _store(tmp_path: Path) -> MessageStore:
    return MessageStore.open(
        StoreConfig(
            store_path_root_dir=str(tmp_path / "s"),
            mapped_file_size_commit_log=1 << 20,
            mapped_file_size_consume_queue=1000 * 20,
            store_host=("127.0.0.1", 10911),
        )
    )


async def test_grouped_waits(tmp_path: Path) -> None:
    store = _store(tmp_path)
    await store.start()
    state = MasterHAState()
    woken: list[int] = []
    gt = GroupTransfer(store, state, HAConfig(slave_timeout_s=0.3, fallbehind_max=1 << 20), lambda: woken.append(1))
    gt.start()
    store.set_replica_wait(gt.request)
    try:

        async def send(i: int) -> PutMessageStatus:
            res = await store.put_message(PutRequest("T", 0, 0, 0, 0, ("127.0.0.1", 1), b"%d" % i, {}))
            return res.status

        assert await send(0) is PutMessageStatus.SLAVE_NOT_AVAILABLE  # no slave connected
        state.links[1] = SlaveLink("127.0.0.1:1", ack_offset=0)
        sends = [asyncio.ensure_future(send(i)) for i in range(50)]
        await asyncio.sleep(0)
        assert len(gt._waiters) == 50 and woken  # one deque entry per send, the pushers woken
        ack = store.commitlog.max_offset
        state.push2slave_max = ack
        gt.on_ack(ack)  # one ack covers all fifty
        assert set(await asyncio.gather(*sends)) == {PutMessageStatus.PUT_OK}
        late = asyncio.ensure_future(send(99))
        assert await late is PutMessageStatus.FLUSH_SLAVE_TIMEOUT  # nobody acks: stored, not confirmed
        assert gt.timeouts == 1 and gt._waiters._timer is None
        state.push2slave_max = store.commitlog.max_offset - (1 << 20)  # the best slave is too far behind
        assert await send(100) is PutMessageStatus.SLAVE_NOT_AVAILABLE
        res = await store.put_message(PutRequest("T", 0, 0, 0, 0, ("127.0.0.1", 1), b"nowait", {}), wait=False)
        assert res.status is PutMessageStatus.PUT_OK  # WAIT=false never waits for a slave
    finally:
        gt.stop()
        store.set_replica_wait(None)
        await store.close()
