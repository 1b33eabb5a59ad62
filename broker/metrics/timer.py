"""TimerCollector: RocketMQ 5's timer series (J ``DefaultStoreMetricsManager``, only when ``timerWheelEnable``), read
at scrape time from ``TimerService``'s counters and cursors; nothing is recorded on the timer's paths for them.

===================================================== ======= ======= ============================================
name                                                  type    labels  value
===================================================== ======= ======= ============================================
rocketmq_timer_enqueue_lag                            gauge           timer-queue messages not yet in the wheel
rocketmq_timer_dequeue_lag                            gauge           messages of passed slots not yet delivered
rocketmq_timer_enqueue_latency_milliseconds           gauge           age of the oldest message not yet enqueued
rocketmq_timer_dequeue_latency_milliseconds           gauge           how far delivery is behind the clock
rocketmq_timing_messages                              gauge   topic   messages waiting in the wheel (kept in the
                                                                      timer checkpoint, so about right after a crash)
rocketmq_timer_enqueue_total                          counter topic   messages read into the wheel since start
rocketmq_timer_dequeue_total                          counter topic   messages delivered to their topic since start
===================================================== ======= ======= ============================================

Every series carries the broker's constant labels and J's storage labels ``storage_type="local"``,
``storage_medium="disk"``. Not here: ``rocketmq_timer_message_snapshot`` (5.2's distribution over the next 24 h).
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from broker.services.timer import TimerService

_DOC = "default view for gauge."
_STORAGE = {"storage_type": "local", "storage_medium": "disk"}


class TimerCollector(Collector):
    def __init__(self, const_labels: dict[str, str], timer: TimerService) -> None:
        self._labels = {**const_labels, **_STORAGE}
        self._timer = timer

    def collect(self) -> Iterable[Metric]:
        t = self._timer
        if not t.settings.enable:
            return
        names = list(self._labels)
        values = list(self._labels.values())
        for name, value in (
            ("rocketmq_timer_enqueue_lag", t.enqueue_lag()),
            ("rocketmq_timer_dequeue_lag", t.dequeue_lag()),
            ("rocketmq_timer_enqueue_latency_milliseconds", t.enqueue_latency_ms()),
            ("rocketmq_timer_dequeue_latency_milliseconds", t.dequeue_latency_ms()),
        ):
            g = GaugeMetricFamily(name, _DOC, labels=names)
            g.add_metric(values, value)
            yield g
        timing = GaugeMetricFamily("rocketmq_timing_messages", _DOC, labels=[*names, "topic"])
        for topic, n in sorted(t.timing.items()):
            timing.add_metric([*values, topic], n)
        yield timing
        for name, table in (
            ("rocketmq_timer_enqueue", t.enqueue_total),
            ("rocketmq_timer_dequeue", t.dequeue_total),
        ):
            c = CounterMetricFamily(name, "default view for counter.", labels=[*names, "topic"])
            for topic, n in sorted(table.items()):
                c.add_metric([*values, topic], n)
            yield c
