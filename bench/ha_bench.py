"""Replication cost on the send path: a single broker vs ASYNC_MASTER + slave vs SYNC_MASTER + slave, same run,
same workload; plus the slave's catch-up throughput (a fresh slave copying a master's log).

Each mode starts its own name server and brokers as separate processes (async flush, 1 GiB segments). The workload:
``--producers`` concurrent senders (one client), ``--n`` single 1 KiB messages in all (SEND_MESSAGE_V2, one round
trip each, so the SYNC_MASTER wait shows in every latency); msgs/s and p50/p99 send latency. With a slave, the
bench also waits until the slave holds everything and reports how far behind it was when the last send returned.

    .venv/bin/python bench/ha_bench.py [--n 20000] [--producers 64] [--rounds 3] [--catchup-mib 64]

The three modes take turns ``--rounds`` times and the table shows medians; the CPU seconds the master and slave
processes used during the sends show what replication itself costs, apart from the machine's noise.

Targets (issue #13): ASYNC_MASTER within 10% of a single broker; SYNC_MASTER at least 50% of it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    from bench._util import REPO, cpu_seconds, free_port, start_namesrv, table, wait_port
except ImportError:
    from _util import REPO, cpu_seconds, free_port, start_namesrv, table, wait_port  # type: ignore[no-redef]

sys.path.insert(0, str(REPO))

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _broker(tmp: Path, name: str, ns: str, **conf: object) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    settings = {
        "listenPort": port,
        "haListenPort": free_port(),
        "brokerIP1": "127.0.0.1",
        "brokerName": "bench-ha",
        "storePathRootDir": tmp / name,
        "flushDiskType": "ASYNC_FLUSH",
        "registerNameServerPeriod": 1000,
        **conf,
    }
    path = tmp / f"{name}.conf"
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    proc = subprocess.Popen(
        [sys.executable, "-m", "broker", "-n", ns, "-c", str(path)],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_port(port, time.monotonic() + 30)
    return proc, f"127.0.0.1:{port}"


@contextlib.contextmanager
def servers(mode: str):  # type: ignore[no-untyped-def]
    tmp = Path(tempfile.mkdtemp(prefix=f"ha-bench-{mode}-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        ns = start_namesrv(tmp, procs, time.monotonic() + 30)
        addrs: dict[str, str] = {}
        pids: dict[str, int] = {}
        if mode != "single":
            p, addrs["slave"] = _broker(tmp, "slave", ns, brokerRole="SLAVE", brokerId=1)
            procs.append(p)
            pids["slave"] = p.pid
        p, addrs["master"] = _broker(tmp, "master", ns, brokerRole="SYNC_MASTER" if mode == "sync" else "ASYNC_MASTER")
        procs.append(p)
        pids["master"] = p.pid
        yield ns, addrs, pids
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


async def _status(admin: object, addr: str) -> dict[str, object]:
    from protocol.codes import RequestCode

    resp = await admin.call(addr, RequestCode.GET_BROKER_HA_STATUS)  # type: ignore[attr-defined]
    return dict(json.loads(resp.body))


async def _until(cond, timeout: float = 120.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not await cond():
        if time.monotonic() > end:
            raise RuntimeError("timed out")
        await asyncio.sleep(0.05)


async def send_workload(ns: str, addrs: dict[str, str], n: int, producers: int, size: int) -> dict[str, float]:
    from client import Message, Producer, SendStatus
    from client.admin.admin_client import AdminClient

    topic = "BenchHA"
    body = b"x" * size
    async with AdminClient(ns) as admin:
        if "slave" in addrs:

            async def paired() -> bool:
                with contextlib.suppress(Exception):
                    st = await _status(admin, addrs["master"])
                    return not st["fenced"] and int(st["inSyncSlaveNums"]) >= 1  # type: ignore[call-overload]
                return False

            await _until(paired)
        await admin.create_topic(addrs["master"], topic, 8, 8, 6, False)
        async with Producer("bench_ha_pg", namesrv_addr=ns) as p:
            for _ in range(200):  # route, connections, warm-up
                await p.send(Message(topic, body))
            lat: list[float] = []
            statuses: dict[str, int] = {}
            per = n // producers

            async def sender() -> None:
                for _ in range(per):
                    t = time.perf_counter()
                    r = await p.send(Message(topic, body))
                    lat.append(time.perf_counter() - t)
                    statuses[r.send_status.name] = statuses.get(r.send_status.name, 0) + 1

            t0 = time.perf_counter()
            await asyncio.gather(*(sender() for _ in range(producers)))
            elapsed = time.perf_counter() - t0
        out: dict[str, float] = {
            "msgs_s": len(lat) / elapsed,
            "p50_ms": statistics.median(lat) * 1000,
            "p99_ms": sorted(lat)[int(len(lat) * 0.99) - 1] * 1000,
            "not_ok": float(sum(v for k, v in statuses.items() if k != SendStatus.SEND_OK.name)),
        }
        if "slave" in addrs:
            st = await _status(admin, addrs["master"])
            end = int(st["masterCommitLogMaxOffset"])  # type: ignore[call-overload]
            out["lag_at_end_KiB"] = (end - int(st["push2SlaveMaxOffset"])) / 1024  # type: ignore[call-overload]

            async def caught_up() -> bool:
                s = await _status(admin, addrs["slave"])
                return int(s["haClientRuntimeInfo"]["maxOffset"]) >= end  # type: ignore[index]

            await _until(caught_up)
    return out


async def catchup(mib: int) -> dict[str, float]:
    """A master holding ``mib`` MiB; a fresh slave starts; time until it holds all of it."""
    from client import Message, Producer
    from client.admin.admin_client import AdminClient

    tmp = Path(tempfile.mkdtemp(prefix="ha-bench-catchup-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        ns = start_namesrv(tmp, procs, time.monotonic() + 30)
        mp, master = _broker(tmp, "master", ns)
        procs.append(mp)
        async with AdminClient(ns) as admin, Producer("bench_fill", namesrv_addr=ns) as p:
            await admin.create_topic(master, "BenchFill", 8, 8, 6, False)
            body = b"y" * 4096
            batch = [Message("BenchFill", body) for _ in range(32)]
            for _ in range(mib * 1024 // 4 // 32):
                await p.send_batch(batch)
            end = int((await _status(admin, master))["masterCommitLogMaxOffset"])  # type: ignore[call-overload]
            t0 = time.perf_counter()
            sp, slave = _broker(tmp, "slave", ns, brokerRole="SLAVE", brokerId=1)
            procs.append(sp)

            async def done() -> bool:
                with contextlib.suppress(Exception):
                    s = await _status(admin, slave)
                    return int(s["haClientRuntimeInfo"]["maxOffset"]) >= end  # type: ignore[index]
                return False

            await _until(done, 600)
            secs = time.perf_counter() - t0
        return {"MiB": end / 2**20, "seconds (incl. slave start)": secs, "MiB_s": end / 2**20 / secs}
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--producers", type=int, default=64)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--catchup-mib", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    # the modes take turns, ``--rounds`` times, and each figure is the median over the rounds: on a shared machine
    # the load of other processes moves between runs, and interleaving spreads it over every mode alike
    runs: dict[str, list[dict[str, float]]] = {"single": [], "async": [], "sync": []}
    for _ in range(a.rounds):
        for mode in runs:
            with servers(mode) as (ns, addrs, pids):
                cpu0 = {k: cpu_seconds(v) for k, v in pids.items()}
                r = asyncio.run(send_workload(ns, addrs, a.n, a.producers, a.size))
                for k, v in pids.items():
                    r[f"{k}_cpu_s"] = cpu_seconds(v) - cpu0[k]
            runs[mode].append(r)
            print(json.dumps({"mode": mode, **r}), flush=True)
    results = {m: {k: statistics.median(x[k] for x in rs) for k in rs[0]} for m, rs in runs.items()}
    base = results["single"]["msgs_s"]
    rows = [
        (
            {"single": "single broker", "async": "ASYNC_MASTER + slave", "sync": "SYNC_MASTER + slave"}[m],
            f"{r['msgs_s']:.0f}",
            f"{100 * r['msgs_s'] / base:.0f}%",
            f"{r['p50_ms']:.2f}",
            f"{r['p99_ms']:.2f}",
            f"{r.get('lag_at_end_KiB', 0):.0f}",
            f"{r['not_ok']:.0f}",
            f"{r['master_cpu_s']:.1f}",
            f"{r.get('slave_cpu_s', 0):.1f}",
        )
        for m, r in results.items()
    ]
    print()
    table(
        rows,
        (
            "mode",
            "msgs/s",
            "vs single",
            "p50 ms",
            "p99 ms",
            "slave lag at end KiB",
            "not SEND_OK",
            "master CPU s",
            "slave CPU s",
        ),
    )
    if a.catchup_mib:
        c = asyncio.run(catchup(a.catchup_mib))
        print()
        print(
            f"catch-up: a fresh slave copied {c['MiB']:.1f} MiB in {c['seconds (incl. slave start)']:.1f} s "
            f"= {c['MiB_s']:.1f} MiB/s (including the slave's start)"
        )


if __name__ == "__main__":
    main()
