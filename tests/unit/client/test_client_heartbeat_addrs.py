"""``ClientInstance.heartbeat_addrs`` is kept by the routes map as routes come, change and go (issue #21: walking
every route on each first send made sends to 10k new topics quadratic); it always equals the walk over all routes."""

from __future__ import annotations

from client.instance import ClientInstance
from client.route import BrokerData, QueueData, TopicRoute


def _route(topic: str, *groups: tuple[str, dict[int, str]]) -> TopicRoute:
    return TopicRoute(
        topic,
        {name: BrokerData(cluster="C", broker_name=name, broker_addrs=dict(addrs)) for name, addrs in groups},
        [QueueData(broker_name=name, read_queue_nums=4, write_queue_nums=4, perm=6) for name, _ in groups],
    )


def _walk(inst: ClientInstance) -> set[str]:
    out: set[str] = set()
    for route in inst.routes.values():
        for bd in route.brokers.values():
            if inst.consumers:
                out.update(bd.broker_addrs.values())
            elif bd.master_addr:
                out.add(bd.master_addr)
    return out


async def test_heartbeat_addrs_follow_route_changes() -> None:
    inst = ClientInstance("127.0.0.1:9876")
    a = ("broker-a", {0: "10.0.0.1:10911", 1: "10.0.0.2:10911"})
    b = ("broker-b", {0: "10.0.0.3:10911"})
    b_slave_only = ("broker-b", {1: "10.0.0.4:10911"})
    steps = [
        lambda: inst.routes.__setitem__("T1", _route("T1", a)),
        lambda: inst.routes.__setitem__("T2", _route("T2", a, b)),
        lambda: inst.routes.__setitem__("T2", _route("T2", a, b_slave_only)),  # broker-b's master went away
        lambda: inst.routes.update({"T3": _route("T3", b)}),
        lambda: inst.routes.pop("T1"),
        lambda: inst.routes.__delitem__("T3"),
        lambda: inst.routes.setdefault("T4", _route("T4", b)),
        lambda: inst.routes.clear(),
        lambda: inst.routes.__setitem__("T5", _route("T5", b)),
    ]
    seen = []
    for step in steps:
        step()
        assert inst.heartbeat_addrs() == _walk(inst)
        inst.consumers["g"] = object()  # type: ignore[assignment]
        assert inst.heartbeat_addrs() == _walk(inst)  # with consumers: replicas too
        del inst.consumers["g"]
        seen.append(inst.heartbeat_addrs())
    assert seen[1] == {"10.0.0.1:10911", "10.0.0.3:10911"}
    assert seen[2] == {"10.0.0.1:10911"}
    assert seen[7] == set()
    await inst.remoting.close()
