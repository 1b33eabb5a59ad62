"""RouteTable is pure: every scenario here runs without sockets, with a fake millisecond clock."""

from __future__ import annotations

import pytest

from namesrv.route_table import PERM_READ, PERM_WRITE, DataVersion, RouteTable, TopicConfig

A_MASTER, A_SLAVE, B_MASTER = "10.0.0.1:10911", "10.0.0.2:10911", "10.0.1.1:10911"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def topics(*specs: tuple[str, int]) -> dict[str, TopicConfig]:
    return {
        name: TopicConfig(topic_name=name, read_queue_nums=queues, write_queue_nums=queues) for name, queues in specs
    }


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def table(clock: FakeClock) -> RouteTable:
    """broker-a (cluster c1: master + slave) serves T1 and Shared; broker-b (cluster c2, master) serves T2, Shared."""
    t = RouteTable(clock)
    dv = DataVersion(timestamp=1, counter=1)
    t.register("c1", A_MASTER, "broker-a", 0, "10.0.0.1:10912", dv, topics(("T1", 4), ("Shared", 8)), channel_id=1)
    t.register("c1", A_SLAVE, "broker-a", 1, "10.0.0.2:10912", dv, topics(("T1", 4), ("Shared", 8)), channel_id=2)
    t.register("c2", B_MASTER, "broker-b", 0, "10.0.1.1:10912", dv, topics(("T2", 2), ("Shared", 2)), channel_id=3)
    return t


def test_route_contains_only_brokers_serving_the_topic(table: RouteTable) -> None:
    route = table.route("T1")
    assert route is not None
    assert [(q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm) for q in route.queue_datas] == [
        ("broker-a", 4, 4, PERM_READ | PERM_WRITE)
    ]
    assert [(b.cluster, b.broker_name, b.broker_addrs) for b in route.broker_datas] == [
        ("c1", "broker-a", {0: A_MASTER, 1: A_SLAVE})
    ]
    shared = table.route("Shared")
    assert shared is not None
    assert [b.broker_name for b in shared.broker_datas] == ["broker-a", "broker-b"]
    assert table.route("nope") is None


def test_slave_gets_master_and_ha_address(clock: FakeClock) -> None:
    t = RouteTable(clock)
    early = t.register("c1", A_SLAVE, "broker-a", 1, "ha-slave", None, {})
    assert (early.master_addr, early.ha_server_addr) == (None, None)  # no master yet
    master = t.register(
        "c1", A_MASTER, "broker-a", 0, "10.0.0.1:10912", DataVersion(timestamp=1, counter=1), topics(("T1", 4))
    )
    assert (master.master_addr, master.ha_server_addr) == (None, None)
    slave = t.register("c1", A_SLAVE, "broker-a", 1, "ha-slave", None, {})
    assert (slave.master_addr, slave.ha_server_addr) == (A_MASTER, "10.0.0.1:10912")


def test_slave_registration_does_not_write_queue_data(clock: FakeClock) -> None:
    t = RouteTable(clock)
    t.register("c1", A_SLAVE, "broker-a", 1, "", DataVersion(timestamp=1, counter=1), topics(("T1", 4)))
    assert t.route("T1") is None
    assert t.all_topics() == []


def test_unchanged_data_version_does_not_rewrite_queue_data(table: RouteTable) -> None:
    assert table.wipe_write_perm("broker-a") == 2
    # Same version: the periodic re-registration must not undo an admin change (J behaviour).
    again = table.register(
        "c1", A_MASTER, "broker-a", 0, "", DataVersion(timestamp=1, counter=1), topics(("T1", 16)), channel_id=1
    )
    assert not again.topics_updated
    route = table.route("T1")
    assert route is not None and route.queue_datas[0].perm == PERM_READ
    assert route.queue_datas[0].write_queue_nums == 4
    # A new version rewrites the topics it carries and adds new ones.
    newer = table.register(
        "c1",
        A_MASTER,
        "broker-a",
        0,
        "",
        DataVersion(timestamp=2, counter=2),
        topics(("T1", 16), ("T3", 1)),
        channel_id=1,
    )
    assert newer.topics_updated
    route = table.route("T1")
    assert route is not None and route.queue_datas[0].write_queue_nums == 16
    assert route.queue_datas[0].perm == PERM_READ | PERM_WRITE
    assert "T3" in table.all_topics()


def test_missing_data_version_always_counts_as_changed(table: RouteTable) -> None:
    assert table.register("c1", A_MASTER, "broker-a", 0, "", None, topics(("T1", 3))).topics_updated
    assert table.register("c1", A_MASTER, "broker-a", 0, "", None, topics(("T1", 5))).topics_updated


def test_cluster_info_and_topic_lists(table: RouteTable) -> None:
    info = table.cluster_info()
    assert info.cluster_addr_table == {"c1": ["broker-a"], "c2": ["broker-b"]}
    assert info.broker_addr_table["broker-a"].broker_addrs == {0: A_MASTER, 1: A_SLAVE}
    assert info.broker_addr_table["broker-b"].cluster == "c2"
    assert table.all_topics() == ["Shared", "T1", "T2"]
    assert table.topics_by_cluster("c1") == ["Shared", "T1"]
    assert table.topics_by_cluster("c2") == ["Shared", "T2"]
    assert table.topics_by_cluster("unknown") == []


def test_system_topics_and_unit_lists(table: RouteTable, clock: FakeClock) -> None:
    system = table.system_topics()
    assert (system.topics, system.broker_addr) == (["broker-a", "broker-b", "c1", "c2"], A_MASTER)
    assert table.unit_topics() == table.unit_sub_topics() == table.unit_sub_non_unit_topics() == []
    empty = RouteTable(clock).system_topics()
    assert (empty.topics, empty.broker_addr) == ([], None)

    def flagged(name: str, flag: int) -> TopicConfig:
        return TopicConfig(topic_name=name, read_queue_nums=1, write_queue_nums=1, topic_sys_flag=flag)

    a = {t.topic_name: t for t in (flagged("U", 1), flagged("S", 2), flagged("US", 3), flagged("Mixed", 0))}
    b = {t.topic_name: t for t in (flagged("Mixed", 1), flagged("BS", 2))}
    table.register("c1", A_MASTER, "broker-a", 0, "ha", DataVersion(timestamp=2, counter=2), a)
    table.register("c2", B_MASTER, "broker-b", 0, "ha", DataVersion(timestamp=2, counter=2), b)
    # one QueueData decides per topic: the first broker name's (broker-a says Mixed is not a unit topic)
    assert table.unit_topics() == ["U", "US"]
    assert table.unit_sub_topics() == ["BS", "S", "US"]
    assert table.unit_sub_non_unit_topics() == ["BS", "S"]


def test_unregister_slave_then_master_removes_everything_of_the_name(table: RouteTable) -> None:
    assert table.unregister("c1", A_SLAVE, "broker-a", 1)
    route = table.route("T1")
    assert route is not None and route.broker_datas[0].broker_addrs == {0: A_MASTER}
    assert table.unregister("c1", A_MASTER, "broker-a", 0)
    assert table.route("T1") is None
    assert "T1" not in table.all_topics()
    shared = table.route("Shared")
    assert shared is not None
    assert [q.broker_name for q in shared.queue_datas] == ["broker-b"]
    assert [b.broker_name for b in shared.broker_datas] == ["broker-b"]
    assert table.cluster_info().cluster_addr_table == {"c2": ["broker-b"]}
    assert A_MASTER not in table.live_addrs()


def test_stale_unregister_does_not_remove_the_new_holder_of_the_id(table: RouteTable) -> None:
    new_master = "10.0.0.9:10911"
    table.register(
        "c1", new_master, "broker-a", 0, "", DataVersion(timestamp=5, counter=5), topics(("T1", 4)), channel_id=9
    )
    table.unregister("c1", A_MASTER, "broker-a", 0)  # the old master says goodbye late
    route = table.route("T1")
    assert route is not None and route.broker_datas[0].broker_addrs[0] == new_master


def test_expiry_with_fake_clock(table: RouteTable, clock: FakeClock) -> None:
    clock.now += 60_000
    table.register(
        "c2", B_MASTER, "broker-b", 0, "", DataVersion(timestamp=1, counter=1), topics(("T2", 2)), channel_id=3
    )
    clock.now += 60_001  # broker-a silent for 120.001 s, broker-b for 60.001 s
    assert sorted(table.expire(clock.now, 120_000)) == [A_MASTER, A_SLAVE]
    assert table.route("T1") is None
    assert table.live_addrs() == [B_MASTER]
    assert table.cluster_info().cluster_addr_table == {"c2": ["broker-b"]}
    assert table.expire(clock.now, 120_000) == []


def test_touch_keeps_a_broker_alive(table: RouteTable, clock: FakeClock) -> None:
    clock.now += 100_000
    assert table.touch(B_MASTER)
    clock.now += 30_000
    assert B_MASTER not in table.expire(clock.now, 120_000)
    assert not table.touch("1.2.3.4:1")


def test_channel_drop_removes_only_that_channels_brokers(table: RouteTable) -> None:
    assert table.remove_by_channel(1) == [A_MASTER]
    route = table.route("T1")
    assert route is not None  # the slave still serves reads
    assert route.broker_datas[0].broker_addrs == {1: A_SLAVE}
    assert table.remove_by_channel(2) == [A_SLAVE]
    assert table.route("T1") is None
    assert table.remove_by_channel(42) == []


def test_reconnected_broker_survives_close_of_its_old_channel(table: RouteTable) -> None:
    table.register(
        "c2", B_MASTER, "broker-b", 0, "", DataVersion(timestamp=1, counter=1), topics(("T2", 2)), channel_id=30
    )
    assert table.remove_by_channel(3) == []
    assert table.route("T2") is not None
    assert table.has_channel(30) and not table.has_channel(3)


def test_slave_promoted_to_master_keeps_one_entry_per_address(table: RouteTable) -> None:
    table.unregister("c1", A_MASTER, "broker-a", 0)
    table.register(
        "c1", A_SLAVE, "broker-a", 0, "", DataVersion(timestamp=3, counter=3), topics(("T1", 4)), channel_id=2
    )
    route = table.route("T1")
    assert route is not None and route.broker_datas[0].broker_addrs == {0: A_SLAVE}


def test_wipe_and_add_write_perm(table: RouteTable) -> None:
    assert table.wipe_write_perm("broker-b") == 2
    shared = table.route("Shared")
    assert shared is not None
    assert {q.broker_name: q.perm for q in shared.queue_datas} == {"broker-a": 6, "broker-b": PERM_READ}
    assert table.add_write_perm("broker-b") == 2
    shared = table.route("Shared")
    assert shared is not None and {q.perm for q in shared.queue_datas} == {6}
    assert table.wipe_write_perm("no-such-broker") == 0


def test_delete_topic_everywhere_or_per_cluster(table: RouteTable) -> None:
    assert table.delete_topic("Shared", "c2")
    shared = table.route("Shared")
    assert shared is not None and [q.broker_name for q in shared.queue_datas] == ["broker-a"]
    assert table.delete_topic("Shared", "c1")
    assert table.route("Shared") is None and "Shared" not in table.all_topics()
    assert table.delete_topic("T1")
    assert table.route("T1") is None
    assert not table.delete_topic("T1")
    assert not table.delete_topic("T2", "c1")  # T2 is not on c1's brokers
    assert table.route("T2") is not None


def test_filter_servers_in_route(clock: FakeClock) -> None:
    t = RouteTable(clock)
    t.register("c1", A_MASTER, "broker-a", 0, "", DataVersion(timestamp=1, counter=1), topics(("T1", 1)), ["fs:1"])
    route = t.route("T1")
    assert route is not None and route.filter_server_table == {A_MASTER: ["fs:1"]}
    t.register("c1", A_MASTER, "broker-a", 0, "", DataVersion(timestamp=1, counter=1), topics(("T1", 1)), [])
    route = t.route("T1")
    assert route is not None and route.filter_server_table == {}


def test_route_snapshots_are_copies(table: RouteTable) -> None:
    route = table.route("T1")
    assert route is not None
    route.broker_datas[0].broker_addrs[7] = "evil:1"
    again = table.route("T1")
    assert again is not None and 7 not in again.broker_datas[0].broker_addrs
