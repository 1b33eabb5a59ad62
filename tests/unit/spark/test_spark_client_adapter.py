"""The connector's synchronous sessions over the asyncio client, driven with fake client classes (no broker)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

import client
from spark_connector import _client
from spark_connector.offsets import QueueKey


@dataclass
class FakeMessage:
    topic: str
    body: bytes
    tags: str | None = None
    keys: list[str] | None = None
    properties: dict[str, str] | None = None


class BrokerRefused(Exception):
    def __init__(self, remark: str) -> None:
        super().__init__(f"CODE: 13 DESC: {remark}")
        self.remark = remark


@dataclass
class FakeProducer:
    group: str
    namesrv_addr: str = ""
    instance_name: str = ""
    send_timeout_ms: int = 0
    access_key: str | None = None
    secret_key: str | None = None
    use_tls: bool = False
    tls_trust_cert_path: str | None = None
    tls_cert_path: str | None = None
    tls_key_path: str | None = None
    sent: list[FakeMessage] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    loop_threads: set[int] = field(default_factory=set)

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def send(self, msg: FakeMessage) -> Any:
        self.loop_threads.add(threading.get_ident())
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await asyncio.sleep(0)
        self.in_flight -= 1
        if msg.body == b"too big":
            raise BrokerRefused("the message body size over max value, MAX: 262144")
        self.sent.append(msg)
        return type("SendResult", (), {"send_status": type("S", (), {"name": "SEND_OK"})()})()


@pytest.fixture
def producer(monkeypatch: pytest.MonkeyPatch) -> FakeProducer:
    made: list[FakeProducer] = []

    def make(group: str, **kw: Any) -> FakeProducer:
        made.append(FakeProducer(group, **kw))
        return made[-1]

    monkeypatch.setattr(client, "Producer", make, raising=False)
    monkeypatch.setattr(client, "Message", FakeMessage, raising=False)
    session = _client.ProducerSession(["127.0.0.1:9876"], "g", 3000)
    p = made[0]
    p.session = session  # type: ignore[attr-defined]
    return p


def test_send_all_waits_for_every_ack_with_a_bounded_window(producer: FakeProducer) -> None:
    session: _client.ProducerSession = producer.session  # type: ignore[attr-defined]
    msgs = (_client.OutgoingMessage("t", b"m%d" % i, "A", "k1 k2", {"p": "v"}) for i in range(1000))
    assert session.send_all(msgs) == 1000
    assert len(producer.sent) == 1000
    assert producer.max_in_flight <= _client.SEND_WINDOW
    assert producer.sent[0].keys == ["k1", "k2"] and producer.sent[0].tags == "A"
    assert threading.get_ident() not in producer.loop_threads  # sends run on the private loop thread


def test_a_refused_send_raises_with_the_brokers_remark(producer: FakeProducer) -> None:
    session: _client.ProducerSession = producer.session  # type: ignore[attr-defined]
    msgs = [_client.OutgoingMessage("t", b"ok", None, None, None)] * 5 + [
        _client.OutgoingMessage("t", b"too big", None, None, None)
    ]
    with pytest.raises(_client.SendError, match="sending to topic 't' failed: the message body size over max"):
        session.send_all(msgs)


def test_security_options_reach_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    from spark_connector.options import parse_sink_options

    made: list[FakeProducer] = []

    def make(group: str, **kw: Any) -> FakeProducer:
        made.append(FakeProducer(group, **kw))
        return made[-1]

    monkeypatch.setattr(client, "Producer", make, raising=False)
    opts = parse_sink_options(
        {"namesrvAddr": "h:1", "topic": "t", "accessKey": "ak", "secretKey": "sk", "useTLS": "true"}
        | {"tlsTrustCertPath": "/ca.pem", "tlsCertPath": "/c.pem", "tlsKeyPath": "/c.key"}
    )
    _client.ProducerSession(["h:1"], "g", 3000, opts.security)
    p = made[-1]
    assert (p.access_key, p.secret_key, p.use_tls) == ("ak", "sk", True)
    assert (p.tls_trust_cert_path, p.tls_cert_path, p.tls_key_path) == ("/ca.pem", "/c.pem", "/c.key")
    with pytest.raises(ValueError, match="tlsCertPath and tlsKeyPath go together"):
        parse_sink_options({"namesrvAddr": "h:1", "topic": "t", "useTLS": "true", "tlsCertPath": "/c.pem"})


@dataclass
class FakePullConsumer:
    group: str
    pulls: list[tuple[int, int]] = field(default_factory=list)
    threads: set[int] = field(default_factory=set)

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass


@pytest.fixture
def pull_session(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[_client.PullSession, FakePullConsumer]]:
    """A PullSession (pollTimeoutMs 50) over a fake consumer whose pulls take 10 ms of the loop's time and then a few
    passes of the loop each."""
    from client import bulk

    made: list[FakePullConsumer] = []

    def make(group: str, **kw: Any) -> FakePullConsumer:
        made.append(FakePullConsumer(group))
        return made[-1]

    async def pull_raw(consumer: FakePullConsumer, mq: Any, offset: int, max_nums: int, expression: str = "*") -> Any:
        consumer.pulls.append((offset, max_nums))
        consumer.threads.add(threading.get_ident())
        await asyncio.sleep(0.01)
        for _ in range(5):  # a 1 MiB reply is read in several passes of the loop
            await asyncio.sleep(0)
        return bulk.RawPullResult(client.PullStatus.FOUND, offset + max_nums, 0, 1000, b"")

    monkeypatch.setattr(client, "PullConsumer", make, raising=False)
    monkeypatch.setattr(bulk, "pull_raw", pull_raw)
    session = _client.PullSession(["127.0.0.1:9876"], 50)
    yield session, made[0]
    session.close()


def test_pull_windows_run_in_the_thread_that_waits(pull_session: tuple[_client.PullSession, FakePullConsumer]) -> None:
    session, consumer = pull_session
    queue = QueueKey("t", "b", 0)
    windows = [session.window(queue, start, start + 10, 4, "*", []) for start in (0, 10, 20)]
    assert consumer.pulls == [(0, 4), (10, 4), (20, 4)]  # each window's first request leaves when it is started
    replies = [w.result() for w in windows]
    assert [[r.next_begin_offset for r in rs] for rs in replies] == [[4, 8, 10], [14, 18, 20], [24, 28, 30]]
    assert consumer.threads == {threading.get_ident()}  # no loop thread: the waiting thread reads the replies


def test_pull_timeouts_count_only_the_time_spent_waiting(
    pull_session: tuple[_client.PullSession, FakePullConsumer],
) -> None:
    """A task away longer than pollTimeoutMs (building a batch, held by Spark's back-pressure) finds its replies
    waiting, not timed out: no retries are allowed here, so a timeout would raise FetchError."""
    import time

    session, _ = pull_session
    pending = session.window(QueueKey("t", "b", 0), 0, 4, 4, "*", [])
    time.sleep(0.2)  # the task is elsewhere for 4 timeouts (not a synchronisation: the loop does not run meanwhile)
    assert [r.next_begin_offset for r in pending.result()] == [4]
