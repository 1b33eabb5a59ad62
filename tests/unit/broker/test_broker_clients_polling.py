"""ClientRegistry (membership, notifications, expiry) and LongPollingService (wake on arrival, timeout, release)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from broker.services.client_registry import ClientChannel, ClientRegistry, CompiledSubscription
from broker.services.long_polling import LongPollingService, Wake
from broker.store.dispatcher import Arrival
from broker.store.request import GetRequest, MessageFilter
from protocol.codes import LanguageCode, RequestCode
from protocol.command import RemotingCommand
from tests.eventually import eventually
from tests.unit.broker.polling_support import hold


class FakeChannel:
    def __init__(self, peer: str) -> None:
        self.peer = peer
        self.conn_id = id(self)
        self.language = LanguageCode.CPP
        self.is_closed = False
        self.sent: list[RemotingCommand] = []
        self._cbs: list[Callable[[Any], None]] = []

    async def invoke(self, cmd: RemotingCommand, timeout: float) -> RemotingCommand:
        raise NotImplementedError

    def invoke_oneway(self, cmd: RemotingCommand) -> None:
        self.sent.append(cmd)

    def add_close_callback(self, cb: Callable[[Any], None]) -> None:
        self._cbs.append(cb)

    def close(self) -> None:
        if not self.is_closed:
            self.is_closed = True
            for cb in self._cbs:
                cb(self)


SUBS = [CompiledSubscription("T", "*")]


def _register(reg: ClientRegistry, ch: FakeChannel, cid: str, subs: list[CompiledSubscription] = SUBS) -> bool:
    info = ClientChannel(ch, cid, LanguageCode.CPP, 63)  # type: ignore[arg-type]
    return reg.register_consumer(
        "G", info, "CONSUME_PASSIVELY", "CLUSTERING", "CONSUME_FROM_LAST_OFFSET", subs, notify=True
    )


def test_membership_notifies_every_consumer() -> None:
    reg = ClientRegistry(120_000)
    a, b = FakeChannel("a:1"), FakeChannel("b:1")
    assert _register(reg, a, "1-127.0.0.1@A")
    assert [c.code for c in a.sent] == [RequestCode.NOTIFY_CONSUMER_IDS_CHANGED]
    assert a.sent[0].ext_fields == {"consumerGroup": "G"} and a.sent[0].is_oneway
    assert not _register(reg, a, "1-127.0.0.1@A")  # a repeated heartbeat changes nothing
    assert _register(reg, b, "2-127.0.0.1@B")
    assert len(a.sent) == 2 and len(b.sent) == 1
    assert reg.client_ids("G") == ["1-127.0.0.1@A", "2-127.0.0.1@B"]
    b.close()
    assert len(a.sent) == 3 and reg.client_ids("G") == ["1-127.0.0.1@A"]
    reg.unregister_consumer("G", a, notify=True)  # type: ignore[arg-type]
    assert reg.consumer_group("G") is None


def test_subscription_change_notifies() -> None:
    reg = ClientRegistry(120_000)
    a = FakeChannel("a:1")
    _register(reg, a, "A")
    assert _register(reg, a, "A", [*SUBS, CompiledSubscription("U", "x", frozenset({"x"}))])
    grp = reg.consumer_group("G")
    assert grp is not None and set(grp.subscriptions) == {"T", "U"}


def test_expiry_closes_silent_channels() -> None:
    reg = ClientRegistry(1000)
    a, b = FakeChannel("a:1"), FakeChannel("b:1")
    _register(reg, a, "A")
    _register(reg, b, "B")
    grp = reg.consumer_group("G")
    assert grp is not None
    grp.channels[b].last_update -= 5  # type: ignore[index]
    assert reg.scan_expired() == 1
    assert b.is_closed and reg.client_ids("G") == ["A"]


def _get(topic: str, queue_id: int, offset: int = 0, group: str = "") -> GetRequest:
    """A held pull's read: ``group``'s, of (topic, queue_id) from ``offset``."""
    return GetRequest(group, topic, queue_id, offset, 1)


async def test_hold_wakes_on_matching_arrival() -> None:
    svc = LongPollingService()
    task = asyncio.create_task(hold(svc, GetRequest("", "T", 0, 5, 1, filter=MessageFilter(lambda c: c == 42)), 10.0))
    await asyncio.sleep(0)
    assert svc.held_count == 1
    svc.notify_arrival(Arrival("T", 0, 6, 7))  # does not match the filter
    svc.notify_arrival(Arrival("T", 1, 6, 42))  # other queue
    svc.notify_arrival(Arrival("T", 0, 5, 42))  # below the pull offset
    await asyncio.sleep(0)
    assert not task.done()
    svc.notify_arrival(Arrival("T", 0, 6, 42))
    assert await task is Wake.ARRIVED
    assert svc.held_count == 0


async def test_hold_timeout_and_release() -> None:
    svc = LongPollingService()
    assert await hold(svc, _get("T", 0), 0.01) is Wake.TIMEOUT
    task = asyncio.create_task(hold(svc, _get("T", 0), 10.0))
    await asyncio.sleep(0)
    assert svc.release_all() == 1
    assert await task is Wake.SHUTDOWN
    assert await hold(svc, _get("T", 0), 10.0) is Wake.SHUTDOWN


async def test_release_group_wakes_only_that_groups_holds_on_the_topic() -> None:
    svc = LongPollingService()
    mine = [asyncio.create_task(hold(svc, _get("T", q, group="G"), 10.0)) for q in (0, 1)]
    other_group = asyncio.create_task(hold(svc, _get("T", 0, group="H"), 10.0))
    other_topic = asyncio.create_task(hold(svc, _get("U", 0, group="G"), 10.0))
    await asyncio.sleep(0)
    assert svc.release_group("G", "T") == 2
    assert [await t for t in mine] == [Wake.RESET, Wake.RESET]
    await asyncio.sleep(0)
    assert not other_group.done() and not other_topic.done()
    assert svc.held_count == 2
    assert svc.release_group("G", "T") == 0
    svc.release_all()
    assert await other_group is Wake.SHUTDOWN and await other_topic is Wake.SHUTDOWN


async def test_hold_race_with_dispatch() -> None:
    svc = LongPollingService()
    assert (
        await hold(svc, _get("T", 0, 3), 10.0, lambda topic, qid: 4 if (topic, qid) == ("T", 0) else 0) is Wake.ARRIVED
    )


async def test_holds_of_different_timeouts_each_expire_and_the_rest_stay_held() -> None:
    svc = LongPollingService()
    order: list[str] = []

    def note(name: str) -> Callable[[Wake], None]:
        return lambda why: order.append(f"{name}:{why.value}")

    svc.park(_get("T", 0), 0.2, note("slow"))
    svc.park(_get("T", 1), 0.02, note("fast"))
    svc.park(_get("T", 2), 10.0, note("long"))
    svc.park(_get("T", 3), 0.02, note("fast2"))
    await eventually(lambda: len(order) >= 3, timeout=5)
    assert order == ["fast:timeout", "fast2:timeout", "slow:timeout"]
    assert svc.held_count == 1 and svc.held_on("T", 2) == 1
    svc.release_all()
    assert order[-1] == "long:shutdown" and svc.held_count == 0


async def test_pull_parked_from_a_timeout_wake_is_timed_too() -> None:
    svc = LongPollingService()
    order: list[str] = []

    def first(why: Wake) -> None:
        order.append(f"first:{why.value}")
        svc.park(_get("T", 0), 0.01, lambda w: order.append(f"again:{w.value}"))

    svc.park(_get("T", 0), 0.01, first)
    svc.park(_get("T", 1), 30.0, lambda w: order.append(f"other:{w.value}"))  # a later deadline stays armed too
    await eventually(lambda: len(order) >= 2, timeout=5)
    assert order == ["first:timeout", "again:timeout"]
    svc.release_all()


async def test_woken_holds_are_not_kept_for_their_deadline() -> None:
    svc = LongPollingService()
    woken: list[Wake] = []
    for offset in range(5000):  # workload B: each message wakes the pull held at the queue's end, the next one parks
        svc.park(_get("T", 0, offset), 15.0, woken.append)
        svc.notify_arrival(Arrival("T", 0, offset + 1))
    assert woken == [Wake.ARRIVED] * 5000 and svc.held_count == 0
    assert svc.tracked <= 200  # not 5000 entries waiting 15 s for the sweep
    live = [svc.park(_get("T", q), 15.0, woken.append) for q in range(300)]
    assert svc.held_count == 300 and svc.tracked <= 3 * 300 + 64
    svc.release_all()
    assert all(e is not None for e in live) and woken.count(Wake.SHUTDOWN) == 300 and svc.tracked == 0
