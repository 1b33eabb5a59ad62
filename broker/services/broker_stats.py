"""BrokerStats: the broker's traffic counters and J's TPS windows (``BrokerStatsManager``), as plain integers.

Both front ends count here, once per request or batch (never per message, never through a metrics library), so
remoting (4.x) and gRPC (5.x) traffic land in the same counters: ``on_put`` after a successful send (remoting
``SendHandlers``, gRPC ``SendMessage``), ``on_get`` after a pull or POP receive that found messages, ``on_miss`` after
one that did not, ``on_ack`` when POP receipts are acked (J's GROUP_ACK_NUMS), ``on_dlq`` when a send-back or a POP
dead-letter lands in ``%DLQ%``. Two readers use them:

* the admin views (``consumerProgress``'s Consume TPS, ``brokerStatus``'s putTps/getFoundTps…, ``clusterList``'s
  #InTPS/#OutTPS, VIEW_BROKER_STATS_DATA for ``statsAll``): rates over J's windows, computed from samples the
  ``sample`` tick takes once a second (``StatsSeries``: per-second samples for the last 10 s / minute / 10 min,
  per-minute samples for the hour, per-hour samples for the day). A rate is (newest − oldest sample in the window) /
  their time apart, so it means "over the last minute" once an item is a minute old, and "since it appeared" before;
* ``broker.metrics``, which reads the counters at scrape time.

Cardinality is bounded: ``prune`` drops every row whose topic or group no longer exists (the sampler calls it with
the live tables), so a deleted topic or group leaves both the windows and the exported metrics.
"""

from __future__ import annotations

import asyncio
import time
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final

from broker import topics as T
from protocol.command import RemotingCommand
from protocol.remoting.handler import DeferredReply, Handler, RequestContext, awaited
from runtime.tasks import stop_tasks

if TYPE_CHECKING:
    from broker.store.message_store import MessageStore

MESSAGE_SIZE_BUCKETS: Final = (1024, 4096, 524288, 1048576, 2097152, 4194304)  # J 5.x rocketmq_message_size
# row layout of an in-traffic row: [messages, bytes, size-bucket counts (+Inf last)..., size sum]
IN_MSGS, IN_BYTES, IN_BUCKETS = 0, 1, 2
IN_SUM = IN_BUCKETS + len(MESSAGE_SIZE_BUCKETS) + 1
CREATE_BUCKETS_MS: Final = (10.0, 100.0, 1000.0, 3000.0, 5000.0)  # J 5.3 topic / group create execution time
SAMPLE_EVERY_S: Final = 1.0
PRUNE_EVERY_S: Final = 30.0

TOPIC_PUT_NUMS: Final = "TOPIC_PUT_NUMS"
TOPIC_PUT_SIZE: Final = "TOPIC_PUT_SIZE"
GROUP_GET_NUMS: Final = "GROUP_GET_NUMS"
GROUP_GET_SIZE: Final = "GROUP_GET_SIZE"
GROUP_ACK_NUMS: Final = "GROUP_ACK_NUMS"
BROKER_PUT_NUMS: Final = "BROKER_PUT_NUMS"
BROKER_GET_NUMS: Final = "BROKER_GET_NUMS"
BROKER_GET_MISS: Final = "BROKER_GET_MISS"
BROKER_GET_TOTAL: Final = "BROKER_GET_TOTAL"


def message_type(properties: str) -> str:
    """J 5.x ``TopicMessageType`` label from a properties string: transaction, fifo, delay or normal."""
    if not properties:
        return "normal"
    if "TRAN_MSG\x01true" in properties:
        return "transaction"
    if "__SHARDINGKEY\x01" in properties:
        return "fifo"
    if (
        "DELAY\x01" in properties
        or "TIMER_DELIVER_MS\x01" in properties
        or "TIMER_DELAY_SEC\x01" in properties
        or "TIMER_DELAY_MS\x01" in properties
        or "__STARTDELIVERTIME\x01" in properties
    ):
        return "delay"
    return "normal"


def earliest_store_time(store: MessageStore) -> int:
    """Store time of the oldest message still in the commit log (ms), 0 when it is empty."""
    if store.commitlog.max_offset <= store.commitlog.min_offset:
        return 0
    msg = store.look_message_by_offset(store.commitlog.min_offset)
    return msg.store_timestamp if msg is not None and msg.store_timestamp > 0 else 0


def _prune(table: dict[Any, Any], dead: Callable[[Any], bool]) -> int:
    keys = [k for k in table if dead(k)]
    for k in keys:
        del table[k]
    return len(keys)


class StatsSeries:
    """Samples of one monotonically growing counter: per second (``seconds`` kept), per minute (61) and per hour
    (25). ``rate(window)`` per second and ``increase(window)`` over the last ``window`` seconds."""

    __slots__ = ("_hours", "_minutes", "_secs")

    def __init__(self, now: float, value: int, seconds: int = 61) -> None:
        self._secs: deque[tuple[float, int]] = deque([(now, value)], maxlen=seconds)
        self._minutes: deque[tuple[float, int]] = deque([(now, value)], maxlen=61)
        self._hours: deque[tuple[float, int]] = deque([(now, value)], maxlen=25)

    def add(self, now: float, value: int) -> None:
        self._secs.append((now, value))
        if now - self._minutes[-1][0] >= 60:
            self._minutes.append((now, value))
        if now - self._hours[-1][0] >= 3600:
            self._hours.append((now, value))

    def _span(self, window: float) -> tuple[float, int]:
        """(seconds, increase) from the oldest sample at most ``window`` s older than the newest one, to it."""
        t1, v1 = self._secs[-1]
        cutoff = t1 - window - 0.5  # sampling jitter: a sample a hair older than the window still counts
        if window <= (self._secs.maxlen or 0) - 1:
            coarse: deque[tuple[float, int]] = self._secs
        else:
            coarse = self._minutes if window <= 3600 else self._hours
        for samples in (coarse, self._secs):
            for t0, v0 in samples:
                if t0 >= cutoff:
                    return t1 - t0, v1 - v0
        return 0.0, 0  # pragma: no cover - the newest sample is always inside

    def rate(self, window: float) -> float:
        dt, inc = self._span(window)
        return inc / dt if dt > 0 else 0.0

    def increase(self, window: float) -> int:
        return self._span(window)[1]


class BrokerStats:
    """Counters per topic / group (see the module docstring). All methods run on the event loop."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # (topic, message_type) -> [msgs, bytes, size buckets..., size sum]
        self.topic_in: dict[tuple[str, str], list[int]] = {}
        # (topic, group) -> [msgs, bytes]
        self.group_out: dict[tuple[str, str], list[int]] = {}
        # (topic, group) -> POP receipts acked (gRPC AckMessage)
        self.group_ack: dict[tuple[str, str], int] = {}
        # (group, original topic) -> messages sent to %DLQ%group
        self.dlq: dict[tuple[str, str], int] = {}
        # (group, topic, queue) -> next offset the group's last pull asked for (J's pull offset)
        self.pull_offsets: dict[tuple[str, str, int], int] = {}
        # topic -> transactions committed / rolled back (END_TRANSACTION or check-back)
        self.tx_commits: dict[str, int] = {}
        self.tx_rollbacks: dict[str, int] = {}
        # ("topic" | "group", invocation_status, is_system) -> [bucket counts (+Inf last)..., sum ms]
        self.creates: dict[tuple[str, str, bool], list[float]] = {}
        self.send_inflight = 0  # counted by SendHandlers.send while a send waits for its put (J send queue)
        self.pull_inflight = 0
        self.pull_held = 0
        self.pull_holds = 0
        self.put_msgs = 0
        self.get_found_msgs = 0
        self.get_miss = 0
        self.get_bytes = 0
        self._series: dict[tuple[str, str], StatsSeries] = {}
        # when a row first counted (its windows start from 0 there, not at the next sampling tick)
        self._born: dict[tuple[str, str], float] = {}
        self._task: asyncio.Task[None] | None = None
        self._alive: tuple[Callable[[str], bool], Callable[[str], bool]] | None = None

    # -- counting (per request / batch) ---------------------------------------------------------------------

    def on_put(self, topic: str, msg_type: str, count: int, stored_bytes: int) -> None:
        """A successful put of ``count`` messages (``stored_bytes`` as written in the commit log)."""
        key = (topic, msg_type)
        row = self.topic_in.get(key)
        if row is None:
            row = self.topic_in[key] = [0] * (IN_SUM + 1)
            self._born.setdefault((TOPIC_PUT_NUMS, topic), self._clock())
        row[IN_MSGS] += count
        row[IN_BYTES] += stored_bytes
        avg = stored_bytes // count if count else 0
        row[IN_BUCKETS + bisect_left(MESSAGE_SIZE_BUCKETS, avg)] += 1
        row[IN_SUM] += avg
        self.put_msgs += count

    def on_get(self, group: str, topic: str, queue_id: int, count: int, nbytes: int, next_offset: int | None) -> None:
        """A pull (or POP receive) that found ``count`` messages (``nbytes`` transferred); ``next_offset`` is the pull
        offset (None for a POP redelivery, which does not move it)."""
        key = (topic, group)
        row = self.group_out.get(key)
        if row is None:
            row = self.group_out[key] = [0, 0]
            self._born.setdefault((GROUP_GET_NUMS, f"{topic}@{group}"), self._clock())
        row[0] += count
        row[1] += nbytes
        self.get_found_msgs += count
        self.get_bytes += nbytes
        if next_offset is not None:
            self.pull_offsets[(group, topic, queue_id)] = next_offset

    def on_ack(self, group: str, topic: str, count: int) -> None:
        """``count`` POP receipts of ``group`` on ``topic`` acked."""
        key = (topic, group)
        if key not in self.group_ack:
            self._born.setdefault((GROUP_ACK_NUMS, f"{topic}@{group}"), self._clock())
        self.group_ack[key] = self.group_ack.get(key, 0) + count

    def count_pulls(self, inner: Handler) -> Handler:
        """Middleware: ``pull_inflight`` counts requests inside the pull handler; a held pull has left it (the handler
        returned its ``DeferredReply``) and counts in ``pull_held`` instead."""

        async def pull(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | DeferredReply | None:
            self.pull_inflight += 1
            try:  # ``awaited``, inlined: no coroutine of its own per pull
                got = inner(ctx, cmd)
                if got is None or isinstance(got, (RemotingCommand, DeferredReply)):
                    return got
                return await got
            finally:
                self.pull_inflight -= 1

        return pull

    def time_creates(self, kind: str) -> Callable[[Handler], Handler]:
        """Middleware for UPDATE_AND_CREATE_TOPIC (``kind="topic"``) / _SUBSCRIPTIONGROUP (``"group"``): J 5.3's
        create execution time, by invocation status (and is_system for topics)."""

        def middleware(inner: Handler) -> Handler:
            async def create(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | DeferredReply | None:
                t0 = time.perf_counter()
                ok = False
                try:
                    resp = await awaited(inner(ctx, cmd))
                    ok = not isinstance(resp, RemotingCommand) or resp.code == 0
                    return resp
                finally:
                    topic = cmd.ext_fields.get("topic", "") if kind == "topic" else ""
                    system = topic in T.SYSTEM_TOPIC_SET or topic.startswith(T.SYSTEM_TOPIC_PREFIX)
                    key = (kind, "success" if ok else "failure", system)
                    row = self.creates.get(key)
                    if row is None:
                        row = self.creates[key] = [0.0] * (len(CREATE_BUCKETS_MS) + 2)
                    ms = (time.perf_counter() - t0) * 1000
                    row[bisect_left(CREATE_BUCKETS_MS, ms)] += 1
                    row[-1] += ms

            return create

        return middleware

    def on_tx_end(self, topic: str, committed: bool) -> None:
        table = self.tx_commits if committed else self.tx_rollbacks
        table[topic] = table.get(topic, 0) + 1

    def on_miss(self) -> None:
        self.get_miss += 1

    def on_dlq(self, group: str, topic: str) -> None:
        key = (group, topic)
        self.dlq[key] = self.dlq.get(key, 0) + 1

    # -- windows ----------------------------------------------------------------------------------------------

    def _counters(self) -> Iterable[tuple[tuple[str, str], int]]:
        per_topic: dict[str, int] = {}
        per_topic_bytes: dict[str, int] = {}
        for (topic, _mt), row in self.topic_in.items():
            per_topic[topic] = per_topic.get(topic, 0) + row[IN_MSGS]
            per_topic_bytes[topic] = per_topic_bytes.get(topic, 0) + row[IN_BYTES]
        for topic, n in per_topic.items():
            yield (TOPIC_PUT_NUMS, topic), n
            yield (TOPIC_PUT_SIZE, topic), per_topic_bytes[topic]
        for (topic, group), (msgs, nbytes) in self.group_out.items():
            yield (GROUP_GET_NUMS, f"{topic}@{group}"), msgs
            yield (GROUP_GET_SIZE, f"{topic}@{group}"), nbytes
        for (topic, group), acked in self.group_ack.items():
            yield (GROUP_ACK_NUMS, f"{topic}@{group}"), acked
        yield (BROKER_PUT_NUMS, ""), self.put_msgs
        yield (BROKER_GET_NUMS, ""), self.get_found_msgs
        yield (BROKER_GET_MISS, ""), self.get_miss
        yield (BROKER_GET_TOTAL, ""), self.get_found_msgs + self.get_miss

    def sample(self) -> None:
        """Take one sample of every counter (the once-a-second tick). A new item starts from 0 at this tick."""
        now = self._clock()
        series = self._series
        seen = set()
        born = self._born
        for key, value in self._counters():
            seen.add(key)
            s = series.get(key)
            if s is None:
                start = born.get((key[0].replace("_SIZE", "_NUMS"), key[1]), now - SAMPLE_EVERY_S)
                s = series[key] = StatsSeries(min(start, now - 1e-3), 0, 601 if key[1] == "" else 61)
            s.add(now, value)
        for key in [k for k in series if k not in seen]:
            del series[key]
            born.pop(key, None)

    def series(self, stats_name: str, stats_key: str = "") -> StatsSeries | None:
        return self._series.get((stats_name, stats_key))

    def rate(self, stats_name: str, stats_key: str = "", window: float = 60.0) -> float:
        s = self._series.get((stats_name, stats_key))
        return s.rate(window) if s is not None else 0.0

    def tps_windows(self, stats_name: str, stats_key: str = "") -> str:
        """J's ``putTps``-style value: rates over the last 10 s, 60 s and 600 s, ``"%.2f %.2f %.2f"``."""
        return " ".join(f"{self.rate(stats_name, stats_key, w):.2f}" for w in (10, 60, 600))

    def group_get_tps(self, group: str, topic: str) -> float:
        """J ``tpsGroupGetNums``: the group's messages pulled per second from ``topic`` over the last minute."""
        return self.rate(GROUP_GET_NUMS, f"{topic}@{group}")

    # -- bounded cardinality ------------------------------------------------------------------------------------

    def prune(self, topic_alive: Callable[[str], bool], group_alive: Callable[[str], bool]) -> int:
        """Drop rows of deleted topics and groups; returns how many rows went."""
        n = _prune(self.topic_in, lambda k: not topic_alive(k[0]))
        n += _prune(self.group_out, lambda k: not topic_alive(k[0]) or not group_alive(k[1]))
        n += _prune(self.group_ack, lambda k: not topic_alive(k[0]) or not group_alive(k[1]))
        n += _prune(self.dlq, lambda k: not topic_alive(k[1]) or not group_alive(k[0]))
        n += _prune(self.pull_offsets, lambda k: not topic_alive(k[1]) or not group_alive(k[0]))
        n += _prune(self.tx_commits, lambda k: not topic_alive(k))
        n += _prune(self.tx_rollbacks, lambda k: not topic_alive(k))
        return n

    def start(self, topic_alive: Callable[[str], bool], group_alive: Callable[[str], bool]) -> None:
        self._alive = (topic_alive, group_alive)
        self._task = asyncio.get_running_loop().create_task(self._run(), name="broker-stats")

    async def _run(self) -> None:
        last_prune = self._clock()
        while True:
            await asyncio.sleep(SAMPLE_EVERY_S)
            if self._alive is not None and self._clock() - last_prune >= PRUNE_EVERY_S:
                last_prune = self._clock()
                self.prune(*self._alive)
            self.sample()

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_tasks(task)
