"""Apache RocketMQ 5.5.0's own mqadmin (``MQAdminStartup`` from rocketmq-tools 5.5.0) against both clusters: each
command's exit status and the shape of its output (the header row of a table, or the message of a one-line answer,
with addresses and numbers masked) must match."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.reference.compare import assert_same
from tests.reference.conftest import Target
from tests.reference.peers import Driver, mqadmin
from tests.reference.test_java4_client import create

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]

_ADDR = re.compile(r"\d+\.\d+\.\d+\.\d+:\d+|\d+\.\d+\.\d+\.\d+")
_NUM = re.compile(r"\d+")
# (name, arguments after the command; {broker} is the broker's address)
COMMANDS: list[tuple[str, tuple[str, ...]]] = [
    ("clusterList", ()),
    ("topicList", ()),
    ("updateTopic", ("-c", "RefCluster", "-t", "RefMq")),
    ("topicRoute", ("-t", "RefMq")),
    ("topicStatus", ("-t", "RefMq")),
    ("topicClusterList", ("-t", "RefMq")),
    ("updateSubGroup", ("-c", "RefCluster", "-g", "RefMqG")),
    ("brokerStatus", ("-b", "{broker}")),
    ("getNamesrvConfig", ()),
    ("updateBrokerConfig", ("-b", "{broker}", "-k", "maxMessageSize", "-v", "4194304")),
    ("resetOffsetByTime", ("-g", "RefMqG", "-t", "RefMq", "-s", "now")),
    ("allocateMQ", ("-t", "RefMq", "-i", "10.0.0.1,10.0.0.2")),
    ("deleteTopic", ("-c", "RefCluster", "-t", "RefMq")),
]


# Commands whose output is "key<sep>value" lines: each server has its own keys (docs/reference-differences.md), so
# what is compared is which of the keys another command reads are missing: clusterList reads these of brokerStatus's.
CLUSTER_LIST_KEYS = frozenset(
    [
        "brokerActive",
        "brokerVersionDesc",
        "commitLogDiskRatio",
        "earliestMessageTimeStamp",
        "getTransferredTps",
        "msgGetTotalTodayMorning",
        "msgGetTotalTodayNow",
        "msgGetTotalYesterdayMorning",
        "msgPutTotalTodayMorning",
        "msgPutTotalTodayNow",
        "msgPutTotalYesterdayMorning",
        "pageCacheLockTimeMills",
        "pullThreadPoolQueueHeadWaitTimeMills",
        "pullThreadPoolQueueSize",
        "putTps",
        "sendThreadPoolQueueHeadWaitTimeMills",
        "sendThreadPoolQueueSize",
        "timerCongestNum",
        "timerDequeueTps",
        "timerEnqueueTps",
        "timerOffsetBehind",
        "timerReadBehind",
    ]
)
# documented: rocketq keeps no day-start counters and has no timer wheel, so clusterList's #Hour and #Timer read 0
ROCKETQ_WITHOUT = [
    "msgGetTotalTodayMorning",
    "msgGetTotalYesterdayMorning",
    "msgPutTotalTodayMorning",
    "msgPutTotalYesterdayMorning",
    "timerCongestNum",
    "timerDequeueTps",
    "timerEnqueueTps",
    "timerOffsetBehind",
    "timerReadBehind",
]
KEYED = {"brokerStatus": (":", CLUSTER_LIST_KEYS), "getNamesrvConfig": ("=", frozenset({"configStorePath"}))}
# listings, compared by the rows of this module's own topics and the cluster's (other scenarios leave topics whose
# names are each server's own, such as Apache's POP retry topics); Apache RocketMQ also lists its POP revive topic
LISTED = {"topicList": "rmq_sys_REVIVE_LOG_"}


def missing_keys(out: str, sep: str, wanted: frozenset[str]) -> list[str]:
    have = {ln.split(sep)[0].strip() for ln in out.splitlines() if sep in ln and not ln.startswith("=")}
    return sorted(wanted - have)


def shape(out: str) -> list[str]:
    """The first two non-empty lines with addresses and numbers masked and runs of spaces collapsed."""
    lines = [ln.strip() for ln in out.splitlines() if ln.strip() and not ln.startswith(("WARNING", "SLF4J"))]
    return [re.sub(r"\s{2,}", " | ", _NUM.sub("N", _ADDR.sub("ADDR", ln))) for ln in lines[:2]]


@pytest.mark.parametrize(
    ("command", "args"),
    [pytest.param(c, a, id=c) for c, a in COMMANDS],
)
def test_mqadmin_command(
    command: str, args: tuple[str, ...], java4: Driver, targets: dict[str, Target], tmp_path: Path
) -> None:
    create(java4, targets["apache"], "RefMqBase")  # a non-empty cluster on both
    create(java4, targets["rocketq"], "RefMqBase")

    def run(t: Target) -> tuple[int, Any]:
        filled = [a.replace("{broker}", t.broker_addr) for a in args]
        out = mqadmin(t.ns_addr, tmp_path / t.name, command, *filled)
        text = out.stdout + out.stderr
        if command in KEYED:
            missing = missing_keys(text, *KEYED[command])
            if t.name == "rocketq" and command == "brokerStatus":
                assert missing == ROCKETQ_WITHOUT
                missing = []
            return out.returncode, missing
        if command in LISTED:
            rows = {ln.strip() for ln in text.splitlines() if "RefMq" in ln or "RefCluster" in ln}
            if t.name == "apache":  # documented: Apache RocketMQ's POP revive topic, which rocketq does not have
                assert {r for r in rows if r.startswith(LISTED[command])} == {LISTED[command] + "RefCluster"}
                rows = {r for r in rows if not r.startswith(LISTED[command])}
            return out.returncode, sorted(rows)
        return out.returncode, shape(text)

    with ThreadPoolExecutor(2) as pool:
        futures = {name: pool.submit(run, t) for name, t in targets.items()}
        seen = {name: f.result() for name, f in futures.items()}
    assert seen["apache"][0] == 0, seen["apache"]
    assert_same(seen)
