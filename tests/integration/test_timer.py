"""Timer messages (RocketMQ 5's TIMER_DELIVER_MS / TIMER_DELAY_MS / TIMER_DELAY_SEC) through a real broker: held
in ``rmq_sys_wheel_timer`` until their time, then stored to their topic with J's TIMER_* properties and never
before their delivery time; refused as J refuses them; kept across a clean restart and a SIGKILL (the pending
timers are recovered from disk). Brokers run with ``timerPrecisionMs=100`` so the waits are short; nothing is timed,
only "not delivered before its time" (the stored delivery's store timestamp against TIMER_OUT_MS) is asserted."""

from __future__ import annotations

import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from broker.metrics.timer import TimerCollector
from broker.services.timer import TIMER_TOPIC, TimerService
from client import Message, MessageQueue, Producer, PullConsumer
from client.errors import BrokerError, MQClientError
from protocol.codes import ResponseCode
from protocol.errors import RemotingError
from protocol.message_ext import MessageExt
from tests.eventually import eventually
from tests.harness import run_broker, run_namesrv
from tests.integration.client_support import Cluster
from tests.servers import launch

TOPIC = "TopicTimer"
PREC = 100


@pytest.fixture
async def timer_cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, timerPrecisionMs=PREC) as broker:
        yield Cluster(ns, broker, tmp_path)


def now_ms() -> int:
    return int(time.time() * 1000)


async def _pull_all(ns_addr: str, broker_name: str, want: int, timeout: float = 30) -> list[MessageExt]:
    got: list[MessageExt] = []
    async with PullConsumer("CG_timer", namesrv_addr=ns_addr) as c:
        mq = MessageQueue(TOPIC, broker_name, 0)

        async def more() -> bool:
            try:
                res = await c.pull(mq, len(got), 32)
            except (MQClientError, RemotingError):  # a restarted broker still registering
                return False
            got.extend(res.msg_found_list)
            return len(got) >= want

        await eventually(more, timeout=timeout, what=f"{want} timer messages delivered")
    return got


def _check_delivered(m: MessageExt) -> None:
    """J's properties on a delivered timer message, and not stored to its topic before its time."""
    p = m.properties
    assert m.topic == TOPIC
    # kept on the delivered copy, as Apache RocketMQ 5.5.0 keeps them (tests/reference/test_java_timers_replies.py)
    assert p["REAL_TOPIC"] == TOPIC and p["REAL_QID"] == str(m.queue_id)
    for k in ("TIMER_OUT_MS", "TIMER_ENQUEUE_MS", "TIMER_DEQUEUE_MS"):
        assert p.get(k, "").isdigit(), (k, p)
    out = int(p["TIMER_OUT_MS"])
    assert out % PREC == 0
    assert m.store_timestamp >= out + PREC  # delivered when its slot (out, out + precision] has passed
    if "TIMER_DELIVER_MS" in p:
        assert m.store_timestamp >= int(p["TIMER_DELIVER_MS"])
        assert int(p["TIMER_DELIVER_MS"]) - PREC <= out < int(p["TIMER_DELIVER_MS"])


async def test_timer_messages_wait_in_the_wheel_then_reach_their_topic(timer_cluster: Cluster) -> None:
    c = timer_cluster
    await c.create_topic(TOPIC, 1)
    store = c.broker.store
    assert store is not None
    async with Producer("PG_timer", namesrv_addr=c.ns_addr) as p:
        t0 = now_ms()
        await p.send(Message(TOPIC, b"deliver", deliver_time_ms=t0 + 1500))
        await p.send(Message(TOPIC, b"delay-ms", delay_ms=700))
        await p.send(Message(TOPIC, b"delay-sec", properties={"TIMER_DELAY_SEC": "1"}))
        await p.send(Message(TOPIC, b"past", deliver_time_ms=t0 - 10_000))  # already due: stored as it is
        await p.send(Message(TOPIC, b"level", delay_level=1))  # the delay levels are unchanged
        await p.send(Message(TOPIC, b"level-wins", delay_level=1, deliver_time_ms=t0 + 3_600_000))
    assert store.get_max_offset_in_queue(TIMER_TOPIC, 0) == 3
    got = await _pull_all(c.ns_addr, c.broker.config.identity.broker_name, 6)
    bodies = [m.body for m in got]
    assert bodies[0] == b"past"
    assert sorted(bodies) == sorted([b"deliver", b"delay-ms", b"delay-sec", b"past", b"level", b"level-wins"])
    for m in got:
        if m.body in (b"deliver", b"delay-ms", b"delay-sec"):
            _check_delivered(m)
    level_wins = next(m for m in got if m.body == b"level-wins")
    assert "TIMER_DELIVER_MS" not in level_wins.properties  # J drops the timer when a delay level is set
    timer = c.broker.schedule.timer if c.broker.schedule is not None else None
    assert timer is not None and timer.dequeue_total == {TOPIC: 3} and timer.timing.get(TOPIC, 0) == 0
    samples = {
        (s.name, s.labels.get("topic", "")): s.value
        for fam in TimerCollector({"cluster": "c"}, timer).collect()
        for s in fam.samples
    }
    assert samples[("rocketmq_timer_enqueue_total", TOPIC)] == 3
    assert samples[("rocketmq_timer_dequeue_total", TOPIC)] == 3
    assert samples[("rocketmq_timer_enqueue_lag", "")] == 0


async def test_refusals_as_apache_rocketmq(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path, timerMaxDelaySec=60) as broker:
        await Cluster(ns, broker, tmp_path).create_topic(TOPIC, 1)
        async with Producer("PG_timer_bad", namesrv_addr=ns.addr, retry_times_when_send_failed=0) as p:
            with pytest.raises(BrokerError) as info:
                await p.send(Message(TOPIC, b"x", deliver_time_ms=now_ms() + 120_000))
            assert info.value.code == ResponseCode.MESSAGE_ILLEGAL
            assert "the delay time should not be bigger than the max delay 60000ms" in str(info.value)
            with pytest.raises(BrokerError) as bad:
                await p.send(Message(TOPIC, b"x", properties={"TIMER_DELAY_SEC": "soon"}))
            assert bad.value.code == ResponseCode.MESSAGE_ILLEGAL
    async with run_namesrv(tmp_path / "off") as ns, run_broker(ns, tmp_path / "off", timerWheelEnable=False) as b:
        await Cluster(ns, b, tmp_path / "off").create_topic(TOPIC, 1)
        async with Producer("PG_timer_off", namesrv_addr=ns.addr, retry_times_when_send_failed=0) as p:
            with pytest.raises(BrokerError) as off:
                await p.send(Message(TOPIC, b"x", delay_ms=5000))
            assert off.value.code == ResponseCode.SYSTEM_ERROR
            assert "accurate timer message is not enabled, timerWheelEnable is false" in str(off.value)


async def test_pending_timers_survive_a_clean_restart(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns:
        async with run_broker(ns, tmp_path, timerPrecisionMs=PREC) as broker:
            await Cluster(ns, broker, tmp_path).create_topic(TOPIC, 1)
            async with Producer("PG_timer_restart", namesrv_addr=ns.addr) as p:
                for i in range(5):
                    await p.send(Message(TOPIC, f"r{i}".encode(), delay_ms=2500 + 100 * i))
            assert broker.store is not None and broker.store.get_max_offset_in_queue(TOPIC, 0) == 0
            assert broker.schedule is not None and broker.schedule.timer is not None
            timer: TimerService = broker.schedule.timer
            await eventually(lambda: timer.timing.get(TOPIC) == 5, timeout=10, what="five timers in the wheel")
            timing = [
                s.value
                for fam in TimerCollector({}, timer).collect()
                for s in fam.samples
                if s.name == "rocketmq_timing_messages" and s.labels["topic"] == TOPIC
            ]
            assert timing == [5]
        async with run_broker(ns, tmp_path, timerPrecisionMs=PREC) as broker:
            assert broker.schedule is not None and broker.schedule.timer is not None
            assert broker.schedule.timer.timing.get(TOPIC) in (5, 0)  # from the checkpoint (or delivered)
            got = await _pull_all(ns.addr, broker.config.identity.broker_name, 5)
    assert sorted(m.body for m in got) == [f"r{i}".encode() for i in range(5)]
    for m in got:
        _check_delivered(m)


async def test_pending_timers_survive_sigkill(tmp_path: Path) -> None:
    s = launch(tmp_path, broker_extra=f"timerPrecisionMs={PREC}\nautoCreateTopicEnable=true\n")
    try:
        sent: list[bytes] = []
        async with Producer("PG_timer_kill", namesrv_addr=s.ns_addr, send_timeout_ms=3000) as p:
            # the first send creates the topic; its route may lag
            await eventually(
                lambda: p.send(Message(TOPIC, b"first")), what="a first send", step=0.1, ignoring=(MQClientError,)
            )
            for i in range(200):
                body = f"k{i}".encode()
                await p.send(Message(TOPIC, body, delay_ms=3000 + 10 * i))
                sent.append(body)
        broker = s.procs.pop()
        broker.p.send_signal(signal.SIGKILL)
        assert broker.stop() == -signal.SIGKILL
        s.start_broker()
        got: dict[bytes, MessageExt] = {}
        async with PullConsumer("CG_timer_kill", namesrv_addr=s.ns_addr) as pc:

            async def all_delivered() -> bool:
                try:
                    queues = await pc.fetch_subscribe_queues(TOPIC)
                except (MQClientError, RemotingError):  # the restarted broker is still registering
                    return False
                for mq in queues:
                    try:
                        res = await pc.pull(mq, 0, 32)
                        off = 0
                        while res.msg_found_list:
                            for m in res.msg_found_list:
                                got.setdefault(m.body, m)
                            off = res.next_begin_offset
                            res = await pc.pull(mq, off, 32)
                    except (MQClientError, RemotingError):
                        return False
                return set(sent) <= set(got)

            await eventually(all_delivered, timeout=60, what="every pending timer delivered after the SIGKILL")
        for body in sent:
            _check_delivered(got[body])
    finally:
        for proc in reversed(s.procs):
            proc.stop()
