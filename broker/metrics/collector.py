"""BrokerCollector: every broker series of docs/reference/metrics.md §3 that applies here, computed at scrape time from
state the broker keeps anyway. Names are the 5.1.4+ sample names (unit suffix on samples, ``_total`` on counters);
every series carries the constant labels ``cluster``, ``node_type="broker"``, ``node_id`` (+ ``metricsLabel``).

=========================================== ========= =============================================================
family                                      type      source
=========================================== ========= =============================================================
rocketmq_messages_in_total                  counter   BrokerStats.topic_in (retry and DLQ topics excluded, as J)
rocketmq_throughput_in_total                counter   same, stored bytes
rocketmq_message_size                       histogram same, one observation per put (bytes / messages)
rocketmq_messages_out_total                 counter   BrokerStats.group_out (pull FOUND)
rocketmq_throughput_out_total               counter   same, bytes transferred
rocketmq_send_to_dlq_messages_total         counter   BrokerStats.dlq (CONSUMER_SEND_MSG_BACK into %DLQ%)
rocketmq_commit_messages_total              counter   transactions committed per real topic (5.2+)
rocketmq_rollback_messages_total            counter   transactions rolled back per real topic (5.2+)
rocketmq_consumer_lag_messages              gauge     Σ queues (max offset − committed offset), offset table rows
rocketmq_consumer_lag_latency_milliseconds  gauge     now − store time of the first unconsumed message (0 if none)
rocketmq_consumer_inflight_messages         gauge     Σ (pull offset − committed offset)
rocketmq_consumer_ready_messages            gauge     Σ (max offset − pull offset)
rocketmq_consumer_queueing_latency_ms…      gauge     now − store time of the first message not yet pulled
rocketmq_topic_number / consumer_group_…    gauge     topic and subscription-group tables
rocketmq_topic_create_execution_time_ms…    histogram UPDATE_AND_CREATE_TOPIC duration by invocation_status, is_system
rocketmq_consumer_group_create_exec…_ms…    histogram UPDATE_AND_CREATE_SUBSCRIPTIONGROUP duration by invocation_status
rocketmq_broker_permission                  gauge     brokerPermission
rocketmq_producer_connections               gauge     live producer channels by language and version
rocketmq_consumer_connections               gauge     live consumer channels by group, language, version, mode
rocketmq_storage_size_bytes                 gauge     used bytes of the store's filesystem
rocketmq_storage_flush_behind_bytes         gauge     commit log written but not flushed
rocketmq_storage_dispatch_behind_bytes      gauge     commit log not yet dispatched to consume queues
rocketmq_storage_message_reserve_time_ms…   gauge     now − store time of the oldest message in the commit log
rocketmq_processor_watermark                gauge     requests inside the send / pull handlers (held pulls excluded)
rocketq_long_polling_held_requests          gauge     pulls parked right now (our own series, as the rest below)
rocketq_long_polling_holds_total            counter   pulls parked since start
rocketq_store_group_commit_size             histogram puts released per SYNC_FLUSH fsync (store.stats)
rocketq_store_fsync_latency_milliseconds    histogram commit-log fsync duration, both flush modes (store.stats)
rocketq_store_forced_clean_messages_total   counter   messages a forced clean deleted, by topic and consumed=true|false
=========================================== ========= =============================================================

The RPC latency histogram comes from ``runtime.exporter.RpcLatencyCollector``. Replication lag per slave
(HA) will hang off ``extra`` (a list of more collectors the HA service can add). Rows of deleted topics and groups
are skipped here and pruned from BrokerStats, so cardinality follows the live tables.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from broker import topics as T
from broker.services.broker_stats import (
    CREATE_BUCKETS_MS,
    IN_BUCKETS,
    IN_BYTES,
    IN_MSGS,
    IN_SUM,
    MESSAGE_SIZE_BUCKETS,
    BrokerStats,
)

if TYPE_CHECKING:
    from broker.services.client_registry import ClientRegistry
    from broker.services.consumer_offsets import ConsumerOffsetTable
    from broker.services.long_polling import LongPollingService
    from broker.services.subscription_groups import SubscriptionGroupTable
    from broker.services.topic_config import TopicConfigTable
    from broker.store.message_store import MessageStore

_F = TypeVar("_F", CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily)
_CONSUME_MODE = {"CONSUME_PASSIVELY": "push", "CONSUME_ACTIVELY": "pull", "CONSUME_POP": "pop"}


def mq_version_name(version: int) -> str:
    """J ``MQVersion`` ordinal → its lowercase name (``407`` → ``v4_9_7``); the number when outside 4.x/5.x."""
    if 212 <= version < 612:
        major, rest = (4, version - 212) if version < 412 else (5, version - 412)
        release, snapshot = divmod(rest, 2)
        name = f"v{major}_{release // 10}_{release % 10}"
        return name + ("_snapshot" if snapshot == 0 else "")
    return str(version)


def is_system_topic(topic: str) -> bool:
    return topic in T.SYSTEM_TOPIC_SET or topic.startswith(T.SYSTEM_TOPIC_PREFIX)


def is_system_group(group: str) -> bool:
    return group.startswith("CID_RMQ_SYS_")


def _protocol_type(channel: object) -> str:
    """``grpc`` for a 5.x client's channel (``broker.proxy.channel``), ``remoting`` for a connection."""
    return str(getattr(channel, "protocol_type", "remoting"))


def _b(flag: bool) -> str:
    return "true" if flag else "false"


class BrokerSources(NamedTuple):
    """The broker state the series are read from at scrape time (``store``: the store once it is open, else None)."""

    stats: BrokerStats
    topics: TopicConfigTable
    groups: SubscriptionGroupTable
    offsets: ConsumerOffsetTable
    clients: ClientRegistry
    polling: LongPollingService
    store: Callable[[], MessageStore | None]


class BrokerCollector(Collector):
    def __init__(
        self,
        const_labels: dict[str, str],
        sources: BrokerSources,
        broker_permission: Callable[[], int],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._const = const_labels
        self._stats, self._topics, self._groups, self._offsets, self._clients, self._polling, self._store = sources
        self._perm = broker_permission
        self._clock = clock
        self.extra: list[Collector] = []  # e.g. replication lag per slave, once HA exists

    def _fam(self, kind: type[_F], name: str, doc: str, labels: Iterable[str] = ()) -> _F:
        return kind(name, doc, labels=[*self._const, *labels])

    def collect(self) -> Iterable[Metric]:
        c = list(self._const.values())
        yield from self._traffic(c)
        yield from self._lag(c)
        yield from self._state(c)
        store = self._store()
        if store is not None:
            yield from self._storage(c, store)
        for extra in self.extra:
            yield from extra.collect()

    # -- traffic -----------------------------------------------------------------------------------------------

    def _traffic(self, c: list[str]) -> Iterable[Metric]:
        st, alive = self._stats, self._topics.__contains__
        lab = ["topic", "message_type", "is_system"]
        msgs_in = self._fam(CounterMetricFamily, "rocketmq_messages_in", "default view for counter.", lab)
        bytes_in = self._fam(CounterMetricFamily, "rocketmq_throughput_in", "default view for counter.", lab)
        size = self._fam(HistogramMetricFamily, "rocketmq_message_size", "message size (stored bytes per message)", lab)
        bounds = [repr(float(b)) for b in MESSAGE_SIZE_BUCKETS] + ["+Inf"]
        for (topic, mtype), row in sorted(st.topic_in.items()):
            if topic.startswith((T.RETRY_PREFIX, T.DLQ_PREFIX)) or not alive(topic):
                continue
            values = [*c, topic, mtype, _b(is_system_topic(topic))]
            msgs_in.add_metric(values, row[IN_MSGS])
            bytes_in.add_metric(values, row[IN_BYTES])
            acc, buckets = 0, []
            for bound, n in zip(bounds, row[IN_BUCKETS:IN_SUM], strict=True):
                acc += n
                buckets.append((bound, float(acc)))
            size.add_metric(values, buckets, float(row[IN_SUM]))
        yield from (msgs_in, bytes_in, size)
        lab = ["topic", "consumer_group", "is_system"]
        msgs_out = self._fam(CounterMetricFamily, "rocketmq_messages_out", "default view for counter.", lab)
        bytes_out = self._fam(CounterMetricFamily, "rocketmq_throughput_out", "default view for counter.", lab)
        for (topic, group), (n, nbytes) in sorted(st.group_out.items()):
            if topic.startswith((T.RETRY_PREFIX, T.DLQ_PREFIX)) or not alive(topic):
                continue
            values = [*c, topic, group, _b(is_system_topic(topic) or is_system_group(group))]
            msgs_out.add_metric(values, n)
            bytes_out.add_metric(values, nbytes)
        yield from (msgs_out, bytes_out)
        dlq = self._fam(
            CounterMetricFamily,
            "rocketmq_send_to_dlq_messages",
            "default view for counter.",
            ["consumer_group", "topic", "is_system"],
        )
        for (group, topic), n in sorted(st.dlq.items()):
            dlq.add_metric([*c, group, topic, _b(is_system_group(group))], n)
        yield dlq
        for name, table in (
            ("rocketmq_commit_messages", st.tx_commits),
            ("rocketmq_rollback_messages", st.tx_rollbacks),
        ):
            tx = self._fam(CounterMetricFamily, name, "default view for counter.", ["topic"])
            for topic, n in sorted(table.items()):
                if alive(topic):
                    tx.add_metric([*c, topic], n)
            yield tx

    # -- consumer lag ------------------------------------------------------------------------------------------

    def _lag(self, c: list[str]) -> Iterable[Metric]:
        store = self._store()
        lab = ["consumer_group", "topic", "is_retry", "is_system"]
        doc = "default view for gauge."
        lag = self._fam(GaugeMetricFamily, "rocketmq_consumer_lag_messages", doc, lab)
        lag_ms = self._fam(GaugeMetricFamily, "rocketmq_consumer_lag_latency_milliseconds", doc, lab)
        inflight = self._fam(GaugeMetricFamily, "rocketmq_consumer_inflight_messages", doc, lab)
        ready = self._fam(GaugeMetricFamily, "rocketmq_consumer_ready_messages", doc, lab)
        queueing = self._fam(GaugeMetricFamily, "rocketmq_consumer_queueing_latency_milliseconds", doc, lab)
        if store is not None:
            now_ms = int(self._clock() * 1000)
            pulled = self._stats.pull_offsets
            for group, topic, committed in sorted(self._offsets.entries()):
                tc = self._topics.get(topic)
                if tc is None:
                    continue
                n_lag = n_inflight = n_ready = 0
                oldest_unconsumed = oldest_unpulled = 0
                for qid in range(tc.read_queue_nums):
                    max_off = max(store.get_max_offset_in_queue(topic, qid), 0)
                    done = max(committed.get(qid, 0), 0)
                    pull = max(pulled.get((group, topic, qid), done), done)
                    n_lag += max(max_off - done, 0)
                    n_inflight += max(pull - done, 0)
                    n_ready += max(max_off - pull, 0)
                    if max_off > done:
                        ts = store.get_message_store_timestamp(topic, qid, done)
                        if ts > 0 and (oldest_unconsumed == 0 or ts < oldest_unconsumed):
                            oldest_unconsumed = ts
                    if max_off > pull:
                        ts = store.get_message_store_timestamp(topic, qid, pull)
                        if ts > 0 and (oldest_unpulled == 0 or ts < oldest_unpulled):
                            oldest_unpulled = ts
                values = [*c, group, topic, _b(topic.startswith(T.RETRY_PREFIX)), _b(is_system_group(group))]
                lag.add_metric(values, n_lag)
                lag_ms.add_metric(values, max(now_ms - oldest_unconsumed, 0) if oldest_unconsumed else 0)
                inflight.add_metric(values, n_inflight)
                ready.add_metric(values, n_ready)
                queueing.add_metric(values, max(now_ms - oldest_unpulled, 0) if oldest_unpulled else 0)
        yield from (lag, lag_ms, inflight, ready, queueing)

    # -- broker state and connections -------------------------------------------------------------------------

    def _state(self, c: list[str]) -> Iterable[Metric]:
        doc = "default view for gauge."
        bounds = [*(repr(b) for b in CREATE_BUCKETS_MS), "+Inf"]
        for kind, name, labels in (
            ("topic", "rocketmq_topic_create_execution_time_milliseconds", ["invocation_status", "is_system"]),
            ("group", "rocketmq_consumer_group_create_execution_time_milliseconds", ["invocation_status"]),
        ):
            h = self._fam(HistogramMetricFamily, name, "create execution time", labels)
            for (which, status, system), row in sorted(self._stats.creates.items()):
                if which != kind:
                    continue
                acc, buckets = 0.0, []
                for bound, n in zip(bounds, row[:-1], strict=True):
                    acc += n
                    buckets.append((bound, acc))
                values = [*c, status, _b(system)] if kind == "topic" else [*c, status]
                h.add_metric(values, buckets, row[-1])
            yield h
        g = self._fam(GaugeMetricFamily, "rocketmq_topic_number", doc)
        g.add_metric(c, len(self._topics.all()))
        yield g
        g = self._fam(GaugeMetricFamily, "rocketmq_consumer_group_number", doc)
        g.add_metric(c, len(self._groups.all()))
        yield g
        g = self._fam(GaugeMetricFamily, "rocketmq_broker_permission", doc)
        g.add_metric(c, self._perm())
        yield g
        producers: dict[tuple[str, str, str], int] = {}
        for chans in self._clients.producer_groups().values():
            for ch in chans:
                if not ch.channel.is_closed:
                    key = (ch.language.name.lower(), mq_version_name(ch.version), _protocol_type(ch.channel))
                    producers[key] = producers.get(key, 0) + 1
        g = self._fam(GaugeMetricFamily, "rocketmq_producer_connections", doc, ["language", "version", "protocol_type"])
        for (lang, ver, proto), n in sorted(producers.items()):
            g.add_metric([*c, lang, ver, proto], n)
        yield g
        consumers: dict[tuple[str, str, str, str, str], int] = {}
        for name, grp in self._clients.consumer_groups().items():
            mode = _CONSUME_MODE.get(grp.consume_type, grp.consume_type.lower())
            for ch in grp.channels.values():
                if not ch.channel.is_closed:
                    ckey = (
                        name,
                        ch.language.name.lower(),
                        mq_version_name(ch.version),
                        mode,
                        _protocol_type(ch.channel),
                    )
                    consumers[ckey] = consumers.get(ckey, 0) + 1
        g = self._fam(
            GaugeMetricFamily,
            "rocketmq_consumer_connections",
            doc,
            ["consumer_group", "language", "version", "consume_mode", "protocol_type", "is_system"],
        )
        for (name, lang, ver, mode, proto), n in sorted(consumers.items()):
            g.add_metric([*c, name, lang, ver, mode, proto, _b(is_system_group(name))], n)
        yield g
        st = self._stats
        g = self._fam(GaugeMetricFamily, "rocketmq_processor_watermark", doc, ["processor"])
        g.add_metric([*c, "send"], st.send_inflight)
        g.add_metric([*c, "pull"], st.pull_inflight)
        yield g
        g = self._fam(GaugeMetricFamily, "rocketq_long_polling_held_requests", "pull requests parked right now")
        g.add_metric(c, self._polling.held_count)
        yield g
        k = self._fam(CounterMetricFamily, "rocketq_long_polling_holds", "pull requests parked since start")
        k.add_metric(c, st.pull_holds)
        yield k

    # -- storage ------------------------------------------------------------------------------------------------

    def _storage(self, c: list[str], store: MessageStore) -> Iterable[Metric]:
        doc = "default view for gauge."
        lab = ["storage_type", "storage_medium"]
        sv = [*c, "local", "disk"]
        info = store.runtime_info()
        try:
            usage = shutil.disk_usage(store.config.store_path_root_dir)
            used = usage.total - usage.free
        except OSError:
            used = 0
        for name, value in (
            ("rocketmq_storage_size_bytes", used),
            (
                "rocketmq_storage_flush_behind_bytes",
                max(info["commitLogMaxOffset"] - info["commitLogFlushedOffset"], 0),
            ),
            ("rocketmq_storage_dispatch_behind_bytes", info["dispatchBehindBytes"]),
        ):
            g = self._fam(GaugeMetricFamily, name, doc, lab)
            g.add_metric(sv, value)
            yield g
        reserve = 0
        earliest = store.look_message_by_offset(info["commitLogMinOffset"]) if info["commitLogMaxOffset"] else None
        if earliest is not None and earliest.store_timestamp > 0:
            reserve = max(int(self._clock() * 1000) - earliest.store_timestamp, 0)
        g = self._fam(GaugeMetricFamily, "rocketmq_storage_message_reserve_time_milliseconds", doc, lab)
        g.add_metric(sv, reserve)
        yield g
        fc = store.forced_clean
        c_fc = self._fam(
            CounterMetricFamily,
            "rocketq_store_forced_clean_messages",
            "messages deleted by forced cleans (disk over diskMaxUsedSpaceRatio), by whether every group had consumed",
            ["topic", "consumed"],
        )
        for topic, n in fc.removed.items():
            lost = fc.unconsumed.get(topic, 0)
            c_fc.add_metric([*c, topic, "false"], lost)
            c_fc.add_metric([*c, topic, "true"], n - lost)
        yield c_fc
        for name, doc_, hist in (
            ("rocketq_store_group_commit_size", "puts released by one SYNC_FLUSH fsync", store.stats.group_commit_size),
            ("rocketq_store_fsync_latency_milliseconds", "commit-log fsync duration", store.stats.fsync_latency_ms),
        ):
            counts, total = hist.snapshot()
            h = self._fam(HistogramMetricFamily, name, doc_, lab)
            acc, buckets = 0, []
            for bound, n in zip([*(repr(float(b)) for b in hist.bounds), "+Inf"], counts, strict=True):
                acc += n
                buckets.append((bound, float(acc)))
            h.add_metric(sv, buckets, total)
            yield h
