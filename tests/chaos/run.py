"""The chaos suite's scheduler and report: ``run_one`` runs one nemesis run on a fresh cluster (namespaces, nodes,
workload, fault, heal, checker); ``python -m tests.chaos.run`` (``make chaos``) runs a schedule of them and writes a
markdown report.

    python -m tests.chaos.run [--rounds 4] [--hold 15] [--only kill-master,...] [--report chaos-report.md]

One run: boot the cluster and wait for a master whose SyncStateSet holds all three replicas; create the topic
(``QUEUES`` queues); start the push consumers (ours and the C++ client's, each its own group) and the producers
(ours; the C++ client in every other run); after ~15 s of traffic (slaves copy consumer offsets every 10 s) note
the master's committed offsets and inject the fault; if the scenario deposes the master, wait for a new one and read its committed offsets at once; hold the
fault ``hold`` seconds, heal, wait until all three replicas are in sync again, send a few more seconds, stop,
let both consumers drain, read everything back and judge (``checker.py``); the sends' times and failures go to
``<work>/record.json`` for a post-mortem. Exit status 1 when any run broke a rule.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from client.admin.admin_client import AdminClient
from tests.chaos.checker import Log, Verdict, judge, read_log
from tests.chaos.nemesis import SCENARIOS, Scenario
from tests.chaos.netns import Network
from tests.chaos.nodes import BROKERS, Cluster
from tests.chaos.workload import (
    CONSUMER_GROUP,
    CPP_CONSUMER_GROUP,
    PROBE,
    QUEUES,
    TOPIC,
    CppConsumer,
    CppProducer,
    Record,
    consuming,
    produce,
)
from tests.eventually import eventually

WARMUP_S = 13.0  # between the offsets snapshot and the fault: slaves copy offsets every 10 s
POST_S = 5.0
CUT_LINE = re.compile(r"commit log cut at \d+: (\d+) bytes dropped")


async def _committed(admin: AdminClient, addr: str) -> dict[str, dict[int, int]]:
    """Each consumer group's committed offsets on the broker at ``addr`` (a group it cannot tell: {})."""
    out: dict[str, dict[int, int]] = {}
    for group in (CONSUMER_GROUP, CPP_CONSUMER_GROUP):
        try:
            stats = await admin.consume_stats(addr, group, TOPIC)
        except Exception:
            out[group] = {}
        else:
            out[group] = {mq.queue_id: w.consumer_offset for mq, w in stats.offset_table.items()}
    return out


async def _replicas_match(admin: AdminClient, cluster: Cluster, final: Log) -> dict[str, Log]:
    """Every replica's log, once each equals the master's (or as it is after 30 s)."""
    logs: dict[str, Log] = {}

    async def all_match() -> bool:
        for b in BROKERS:
            with contextlib.suppress(Exception):
                logs[b] = await read_log(admin, cluster.addr(b))
        return all(logs.get(b) == final for b in BROKERS)

    with contextlib.suppress(AssertionError):
        await eventually(all_match, timeout=30, step=0.5)
    return logs


def _dump(path: Path, record: Record, fault_at: float) -> None:
    """The run's sends for a post-mortem of its window: the fault time, every failure, every ack's times."""
    path.write_text(
        json.dumps(
            {
                "fault_at": fault_at,
                "failures": [dataclasses.astuple(f) for f in record.failures],
                "acks": [(a.key, a.acker, a.sent, a.acked) for a in record.acks],
            }
        )
    )


async def run_one(scenario: Scenario, work: Path, *, cpp: bool = False, hold: float = 15.0) -> Verdict:
    net = Network.create()
    cluster = Cluster(net, work)
    record = Record()
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []
    cpp_producer: CppProducer | None = None
    cpp_consumer: CppConsumer | None = None
    notes: list[str] = []
    try:
        await cluster.start()
        async with AdminClient(cluster.ns_addr) as admin:
            master = await cluster.wait_master(admin, 3, 120)
            for b in BROKERS:
                with contextlib.suppress(Exception):  # slaves refuse (and copy the master's table)
                    await admin.create_topic(cluster.addr(b), TOPIC, QUEUES, QUEUES, 6, True)
            await eventually(lambda: admin.topic_route(TOPIC), timeout=30, ignoring=(Exception,), what="the route")
            cpp_consumer = CppConsumer(cluster.ns_addr, work / "cpp-consumer.jsonl")
            await eventually(cpp_consumer.started, timeout=60, what="the C++ consumer to start")
            async with consuming(cluster.ns_addr, record):
                tasks.append(asyncio.create_task(produce(cluster.ns_addr, record, stop)))
                tasks.append(asyncio.create_task(produce(cluster.ns_addr, record, stop, "probe", PROBE)))
                if cpp:
                    cpp_producer = CppProducer(cluster.ns_addr, work / "cpp-producer.jsonl")

                def traffic() -> bool:
                    for t in tasks:  # a producer that died says why
                        if t.done():
                            t.result()
                    assert cpp_consumer is not None
                    return len(record.acks) >= 20 and len(record.consumed) >= 10 and len(cpp_consumer.consumed()) >= 10

                await eventually(traffic, timeout=60, what=lambda: f"traffic: {record.failures[-3:]}")
                await asyncio.sleep(2.0)  # the consumer commits every second
                master = await cluster.master(admin) or master
                before = await _committed(admin, cluster.addr(master))
                await asyncio.sleep(WARMUP_S)  # traffic before the fault; slaves copy the offsets meanwhile
                fault_at = time.time()
                victim = await scenario.inject(cluster, admin, master)
                after = dict(before)
                if scenario.master_changes:
                    try:
                        new = await cluster.wait_master(admin, 1, hold + 60, exclude=victim)
                        after = await _committed(admin, cluster.addr(new))
                    except AssertionError as exc:
                        notes.append(str(exc))
                await asyncio.sleep(max(0.0, fault_at + hold - time.time()))
                await scenario.heal(cluster, victim)
                try:
                    await cluster.wait_master(admin, 3, 120)
                except AssertionError as exc:
                    notes.append(f"after heal: {exc}")
                await asyncio.sleep(POST_S)
                stop.set()
                await asyncio.gather(*tasks)
                if cpp_producer is not None:
                    cpp_producer.stop(record)
                    cpp_producer = None
                acked = {a.key for a in record.acks}

                def drained() -> bool:
                    assert cpp_consumer is not None
                    ours = {k for k, _q, _o in record.consumed}
                    return acked <= ours and acked <= {k for k, _q, _o in cpp_consumer.consumed()}

                with contextlib.suppress(AssertionError):
                    await eventually(drained, timeout=60, step=0.5, what="drain")
            if note := cpp_consumer.stop(record):
                notes.append(note)
            cpp_consumer = None
            final_master = await cluster.wait_master(admin, 1, 60)
            final = await read_log(admin, cluster.addr(final_master))
            replicas = await _replicas_match(admin, cluster, final)
            verdict = judge(scenario.name, record, final, replicas, before, after, [fault_at])
            _dump(work / "record.json", record, fault_at)
            verdict.notes += notes
            verdict.cut_bytes = sum(
                int(m) for b in BROKERS for m in CUT_LINE.findall(cluster.procs[b].log.read_text(errors="replace"))
            )
            return verdict
    finally:
        stop.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if cpp_producer is not None:
            cpp_producer.stop(record)
        if cpp_consumer is not None:
            cpp_consumer.stop(record)
        cluster.stop_all()
        net.destroy()


# -- schedule and report ---------------------------------------------------------------------------------------------

HEADER = (
    "| # | scenario | C++ producer | acked (C++) | failed sends | lost | dup | fenced | order | divergent "
    "| unconsumed ours / C++ | redelivered ours / C++ | offsets regressed | cut bytes | unavailable s "
    "| unavailable (3 s) s | ok |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
)


def row(i: int, v: Verdict, cpp: bool) -> str:
    unavail = ", ".join(f"{u:.1f}" for u in v.unavailable) or "-"
    unavail_main = ", ".join(f"{u:.1f}" for u in v.unavailable_main) or "-"
    ok = "yes" if v.ok else "NO"
    return (
        f"| {i} | {v.scenario} | {'yes' if cpp else 'no'} | {v.acked} ({v.acked_cpp}) | {v.failed_sends} "
        f"| {len(v.lost)} | {v.duplicates} | {len(v.fenced)} | {v.order_violations} | {len(v.divergent)} "
        f"| {len(v.unconsumed)} / {len(v.unconsumed_cpp)} | {v.redelivered} / {v.redelivered_cpp} "
        f"| {len(v.offset_regressions)} | {v.cut_bytes} | {unavail} | {unavail_main} | {ok} |\n"
    )


def summary(results: list[tuple[Verdict, bool]]) -> str:
    out = "\n| scenario | runs | unavailable p50 s | max s | unavailable (3 s) p50 s | max s |\n"
    out += "|---|---|---|---|---|---|\n"
    for name in SCENARIOS:
        runs = [v for v, _ in results if v.scenario == name]
        vals = [u for v in runs for u in v.unavailable]
        main = [u for v in runs for u in v.unavailable_main] or [float("nan")]
        if vals:
            out += f"| {name} | {len(runs)} | {statistics.median(vals):.1f} | {max(vals):.1f} "
            out += f"| {statistics.median(main):.1f} | {max(main):.1f} |\n"
    return out


async def schedule(names: list[str], rounds: int, hold: float, report: Path, work: Path) -> int:
    results: list[tuple[Verdict, bool]] = []
    report.write_text(f"# Chaos report ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n\n{HEADER}")
    i = 0
    for r in range(rounds):
        for k, name in enumerate(names):
            i += 1
            cpp = (r + k) % 2 == 1  # each scenario alternates between rounds with and without the C++ producer
            try:
                v = await run_one(SCENARIOS[name], work / f"run{i}-{name}", cpp=cpp, hold=hold)
            except Exception as exc:  # a run that could not even be set up is reported, the schedule goes on
                v = Verdict(name, notes=[f"run failed: {type(exc).__name__}: {exc}"[:300]])
                v.lost = ["?"]
            results.append((v, cpp))
            with report.open("a") as f:
                f.write(row(i, v, cpp))
            print(row(i, v, cpp), end="", flush=True)
            if not v.ok or v.notes:
                print(f"    run {i} ({name}): {v.problems()} {v.notes}", flush=True)
    with report.open("a") as f:
        f.write(summary(results))
        for idx, (v, _) in enumerate(results, 1):
            if not v.ok or v.notes:
                f.write(f"\n- run {idx} ({v.scenario}): {v.problems()} {'; '.join(v.notes)}")
        f.write("\n")
    return 0 if all(v.ok for v, _ in results) else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="chaos_run", description="Jepsen-style nemesis runs against controller mode")
    p.add_argument("--rounds", type=int, default=4, help="rounds over the scenarios (default 4: 24 runs)")
    p.add_argument("--hold", type=float, default=15.0, help="seconds each fault lasts before the heal")
    p.add_argument("--only", default="", help="comma-separated scenarios (default: all)")
    p.add_argument("--report", default="chaos-report.md", help="markdown report path")
    p.add_argument("--work", default="", help="where the nodes' stores and logs go (default: a temp dir)")
    a = p.parse_args(argv)
    names = [n for n in a.only.split(",") if n] or list(SCENARIOS)
    if unknown := [n for n in names if n not in SCENARIOS]:
        print(f"chaos_run: unknown scenario(s) {unknown}; known: {list(SCENARIOS)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="chaos-") as tmp:
        work = Path(a.work) if a.work else Path(tmp)
        return asyncio.run(schedule(names, a.rounds, a.hold, Path(a.report), work))


if __name__ == "__main__":
    sys.exit(main())
