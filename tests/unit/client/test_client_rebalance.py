"""Rebalancer against a fake instance (no sockets): revoke before assign, keep the assignment while the broker does
not list us yet, revoke unsubscribed topics, and retry an undecided round soon instead of after the interval."""

from __future__ import annotations

from typing import Any

from client.consumer.allocate import allocate_averagely
from client.consumer.rebalance import Rebalancer
from client.message import MessageQueue
from client.route import BrokerData, QueueData, TopicRoute
from tests.eventually import eventually


def route(topic: str, queues: int) -> TopicRoute:
    return TopicRoute(
        topic,
        {"broker-a": BrokerData(cluster="C", broker_name="broker-a", broker_addrs={0: "10.0.0.1:10911"})},
        [QueueData(broker_name="broker-a", read_queue_nums=queues, write_queue_nums=queues, perm=6)],
    )


class FakeAPI:
    def __init__(self, cids: list[str]) -> None:
        self.cids = cids

    async def get_consumer_ids(self, addr: str, group: str, timeout: float = 3.0) -> list[str]:
        return list(self.cids)


class FakeInstance:
    client_id = "10.0.0.9@me"
    request_timeout = 1.0

    def __init__(self, cids: list[str]) -> None:
        self.api = FakeAPI(cids)
        self.routes: dict[str, TopicRoute] = {}
        self.heartbeats = 0

    async def get_route(self, topic: str, *, refresh: bool = False) -> TopicRoute | None:
        return self.routes.get(topic)

    async def send_heartbeat_to_all(self) -> None:
        self.heartbeats += 1


class Target:
    def __init__(self, refuse: set[MessageQueue] | None = None) -> None:
        self.events: list[tuple[str, list[MessageQueue]]] = []
        self.refuse = refuse or set()

    async def on_revoked(self, mqs: list[MessageQueue]) -> None:
        self.events.append(("revoked", mqs))

    async def on_assigned(self, mqs: list[MessageQueue]) -> list[MessageQueue]:
        self.events.append(("assigned", mqs))
        return [mq for mq in mqs if mq not in self.refuse]


def make(inst: FakeInstance, target: Target, topics: list[str], **kw: Any) -> Rebalancer:
    return Rebalancer(
        inst,  # type: ignore[arg-type]
        "G",
        broadcasting=kw.get("broadcasting", False),
        strategy=allocate_averagely,
        interval=kw.get("interval", 3600.0),
        topics=lambda: topics,
        target=target,
    )


async def test_revoke_before_assign_when_members_change() -> None:
    inst = FakeInstance(["10.0.0.9@me"])
    inst.routes["T"] = route("T", 4)
    target = Target()
    rb = make(inst, target, ["T"])
    await rb.run_once()
    assert rb.assignment() == [MessageQueue("T", "broker-a", i) for i in range(4)]
    inst.api.cids = ["10.0.0.9@me", "10.0.0.1@other"]  # sorted: other first → it gets queues 0, 1
    target.events.clear()
    await rb.run_once()
    assert target.events == [("revoked", [MessageQueue("T", "broker-a", 0), MessageQueue("T", "broker-a", 1)])]
    assert rb.assignment() == [MessageQueue("T", "broker-a", 2), MessageQueue("T", "broker-a", 3)]


async def test_not_listed_yet_keeps_the_assignment_and_heartbeats() -> None:
    inst = FakeInstance(["10.0.0.9@me"])
    inst.routes["T"] = route("T", 2)
    target = Target()
    rb = make(inst, target, ["T"])
    await rb.run_once()
    inst.api.cids = ["10.0.0.1@other"]  # our heartbeat has not reached the broker (e.g. it restarted)
    target.events.clear()
    await rb.run_once()
    assert target.events == [] and len(rb.assignment()) == 2 and inst.heartbeats == 1


async def test_unsubscribed_topics_are_revoked_and_broadcasting_takes_all() -> None:
    inst = FakeInstance([])
    inst.routes["A"] = route("A", 2)
    inst.routes["B"] = route("B", 1)
    topics = ["A", "B"]
    target = Target()
    rb = make(inst, target, topics, broadcasting=True)
    await rb.run_once()
    assert len(rb.assignment()) == 3
    topics.remove("A")
    await rb.run_once()
    assert rb.assignment() == [MessageQueue("B", "broker-a", 0)]
    assert ("revoked", [MessageQueue("A", "broker-a", 0), MessageQueue("A", "broker-a", 1)]) in target.events
    await rb.revoke_all()
    assert rb.assignment() == []


async def test_an_undecided_round_is_retried_soon(monkeypatch: Any) -> None:
    from client.consumer import rebalance

    monkeypatch.setattr(rebalance, "QUICK_RETRY_DELAY", 0.01)
    inst = FakeInstance(["10.0.0.9@me"])
    target = Target(refuse={MessageQueue("T", "broker-a", 0)})  # e.g. an orderly queue still locked elsewhere
    inst.routes["T"] = route("T", 2)
    rb = make(inst, target, ["T"])  # interval of an hour: only the quick retry can run the second round
    rb.start()
    try:
        rb.trigger()
        await eventually(lambda: rb.rounds >= 2, timeout=5, what="a second round", step=0.005)
        target.refuse.clear()
        await eventually(lambda: len(rb.assignment()) >= 2, timeout=5, what="both queues assigned", step=0.005)
    finally:
        await rb.stop()
