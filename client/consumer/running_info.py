"""A push consumer's GET_CONSUMER_RUNNING_INFO answer in J's ``ConsumerRunningInfo`` shape (``protocol.bodies``):
its properties, subscriptions, per-queue process-queue info and per-topic status table. The statusTable rates are
averages since the consumer started (J's are over the last minute); RTs are per pull that found messages and per
listener call, in ms."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence

from client._dump import thread_dump
from client.config import PushConsumerConfig
from client.consumer.process_queue import ProcessQueue
from client.message import MessageQueue
from protocol.bodies import ConsumerData, encode_consumer_running_info

# consume_from_where → J's ConsumeFromWhere name
CONSUME_FROM_WHERE = {
    "LAST_OFFSET": "CONSUME_FROM_LAST_OFFSET",
    "FIRST_OFFSET": "CONSUME_FROM_FIRST_OFFSET",
    "TIMESTAMP": "CONSUME_FROM_TIMESTAMP",
}


def encode_running_info(
    config: PushConsumerConfig,
    *,
    namesrv_addrs: Sequence[str],
    started_at: int,
    uptime_secs: float,
    subscriptions: ConsumerData,
    topics: Iterable[str],
    consumed: Mapping[str, Sequence[float]],
    pull_stats: Mapping[str, Sequence[float]],
    queues: Mapping[MessageQueue, ProcessQueue],
    jstack: bool,
) -> bytes:
    """The body; ``consumed``: per topic (ok, failed, listener ms, listener calls); ``pull_stats``: per topic
    (messages pulled, ms of pulls that found messages, such pulls)."""
    props = {
        "PROP_CONSUME_TYPE": "CONSUME_PASSIVELY",
        "PROP_CONSUMEORDERLY": str(config.orderly).lower(),
        "PROP_CLIENT_VERSION": "rocketq",
        "PROP_NAMESERVER_ADDR": ";".join(namesrv_addrs),
        "PROP_THREADPOOL_CORE_SIZE": str(config.consume_thread_max),
        "PROP_CONSUMER_START_TIMESTAMP": str(started_at),
        "messageModel": config.message_model,
        "consumeFromWhere": CONSUME_FROM_WHERE[config.consume_from_where],
    }
    wall_ms, mono = int(time.time() * 1000), time.monotonic()
    secs = uptime_secs
    status: dict[str, dict[str, float]] = {}
    for topic in topics:
        ok, failed, rt, calls = consumed.get(topic, (0, 0, 0.0, 0))
        pulled, pull_ms, pulls = pull_stats.get(topic, (0, 0.0, 0))
        status[topic] = {
            "pullRT": pull_ms / pulls if pulls else 0.0,
            "pullTPS": pulled / secs,
            "consumeRT": rt / calls if calls else 0.0,
            "consumeOKTPS": ok / secs,
            "consumeFailedTPS": failed / secs,
            "consumeFailedMsgs": int(failed),
        }
    return encode_consumer_running_info(
        props,
        subscriptions.to_json()["subscriptionDataSet"],
        {mq: pq.info(wall_ms, mono) for mq, pq in queues.items()},
        status,
        thread_dump() if jstack else None,
    )
