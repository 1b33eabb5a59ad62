"""Security benches, servers as separate processes (full size; the tests run scaled-down versions):

    .venv/bin/python bench/security_bench.py acl    [--n 20000 --burst 1000]
        send and pull, ACL off vs on in the same run: both setups run at once and take turns in bursts (so both see
        the same machine load); reports throughput and the broker's CPU time per message (the steadier figure).
    .venv/bin/python bench/security_bench.py attack [--conns 100 --mib 15]
        100 connections each declare a 16 MiB frame and send 15 MiB of it; the broker's pending-frame cap is
        256 MiB. Reports the broker's peak RSS, how many attackers it closed, and a well-behaved producer's p99.
    .venv/bin/python bench/security_bench.py fuzz   [--rounds 3 --frames 60000]
        rounds of damaged frames (bad lengths, bad serialize types, bad headers, random bytes), each on its own
        connection; reports the broker's (``--namesrv``: the name server's) RSS and anonymous RSS after every round.

Everything targets 127.0.0.1 only and is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    from bench._util import REPO, cpu_seconds, free_port, table
except ImportError:
    from _util import REPO, cpu_seconds, free_port, table  # type: ignore[no-redef]

sys.path.insert(0, str(REPO))

MiB = 1024 * 1024
ACL_YML = """accounts:
  - accessKey: benchUser1
    secretKey: benchSecret1
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: SUB
"""


def _wait_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    import socket

    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("server did not start") from None
            time.sleep(0.1)


def start(tmp: Path, ns: str | None, extra: str = "") -> tuple[subprocess.Popen[bytes], int]:
    """A broker (or, with ns=None and extra "namesrv", a name server) as a process; returns (proc, port)."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if ns is None:
        (tmp / "namesrv.conf").write_text(f"listenPort={port}\nlistenAddress=127.0.0.1\nkvConfigPath={tmp}/kv.json\n")
        args = [sys.executable, "-m", "namesrv", "-c", str(tmp / "namesrv.conf")]
    else:
        conf = tmp / f"broker-{port}.conf"
        conf.write_text(
            f"listenPort={port}\nbindAddress=127.0.0.1\nbrokerIP1=127.0.0.1\nbrokerName=b{port}\n"
            f"storePathRootDir={tmp}/store-{port}\nflushDiskType=ASYNC_FLUSH\n{extra}"
        )
        args = [sys.executable, "-m", "broker", "-n", ns, "-c", str(conf)]
    p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_port(port, p)
    return p, port


def rss(pid: int) -> tuple[int, int]:
    """(VmRSS, RssAnon) in bytes."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon"):
            out[k] = int(v.split()[0]) * 1024
    return out.get("VmRSS", 0), out.get("RssAnon", 0)


# -- acl on vs off ----------------------------------------------------------------------------------------------------


async def acl_bursts(setups: dict[str, tuple[str, int, dict[str, str]]], n: int, burst: int) -> dict[str, list[float]]:
    """Alternate bursts of sends, then of pulls, between the ACL-off and ACL-on setups, so both see the same
    machine load; per mode: [send s, pull s, broker CPU s during sends, broker CPU s during pulls]."""
    from client import Message, Producer, PullConsumer

    out = {m: [0.0, 0.0, 0.0, 0.0] for m in setups}
    body = b"x" * 1024
    topic = f"AclBench{random.randrange(1 << 30)}"
    producers = {}
    for mode, (ns, _pid, creds) in setups.items():
        producers[mode] = Producer(f"pg_{mode}", namesrv_addr=ns, **creds)
        await producers[mode].start()
        await producers[mode].send(Message(topic, body))
    cpu0 = {m: cpu_seconds(setups[m][1]) for m in setups}  # the whole phase: a tick is 10 ms, a burst takes a few
    try:
        for k in range(n // burst):
            for mode in list(setups) if k % 2 == 0 else list(reversed(setups)):
                p = producers[mode]
                t0 = time.perf_counter()
                window: list[asyncio.Future[object]] = []
                for _ in range(burst):
                    window.append(asyncio.ensure_future(p.send(Message(topic, body))))
                    if len(window) >= 64:
                        await window.pop(0)
                await asyncio.gather(*window)
                out[mode][0] += time.perf_counter() - t0
    finally:
        for m in setups:
            out[m][2] = cpu_seconds(setups[m][1]) - cpu0[m]
        for p in producers.values():
            await p.close()
    # pulls: one consumer at a time (a consumer prefetches in the background, so two at once would time each
    # other's prefetch), two rounds in alternating order, each reading the whole topic with a fresh group
    for rnd in range(2):
        for mode in list(setups) if rnd % 2 == 0 else list(reversed(setups)):
            ns, pid, creds = setups[mode]
            c = PullConsumer(
                f"cg_{mode}_{rnd}", namesrv_addr=ns, consume_from_where="FIRST_OFFSET", pull_batch_size=32, **creds
            )
            c.subscribe(topic, "*")
            await c.start()
            try:
                got = 0
                while not got:  # warm up: rebalance done, first pull answered
                    got = len(await c.poll(timeout=1.0, max_records=1))
                c0, t0 = cpu_seconds(pid), time.perf_counter()
                while got < n:
                    got += len(await c.poll(timeout=1.0, max_records=1000))
                out[mode][1] += time.perf_counter() - t0
                out[mode][3] += cpu_seconds(pid) - c0
            finally:
                await c.close()
    return out


def bench_acl(n: int, burst: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        home = tmp / "home"
        (home / "conf").mkdir(parents=True)
        (home / "conf" / "plain_acl.yml").write_text(ACL_YML)
        procs: list[subprocess.Popen[bytes]] = []
        setups: dict[str, tuple[str, int, dict[str, str]]] = {}
        try:
            for mode in ("off", "on"):
                sub = tmp / mode
                sub.mkdir()
                ns_proc, ns_port = start(sub, None)
                extra = f"aclEnable=true\nrocketmqHome={home}\n" if mode == "on" else ""
                br_proc, _ = start(sub, f"127.0.0.1:{ns_port}", extra)
                procs += [br_proc, ns_proc]
                creds = {"access_key": "benchUser1", "secret_key": "benchSecret1"} if mode == "on" else {}
                setups[mode] = (f"127.0.0.1:{ns_port}", br_proc.pid, creds)
            time.sleep(1.0)  # registration
            res = asyncio.run(acl_bursts(setups, n, burst))
        finally:
            for p in procs:
                p.terminate()
                p.wait(30)
        rows = []
        for mode in ("off", "on"):
            send_s, pull_s, send_cpu, pull_cpu = res[mode]
            pull_s, pull_cpu = pull_s / 2, pull_cpu / 2  # two rounds of n
            rows.append(
                (
                    f"ACL {mode}",
                    f"{n / send_s:,.0f}",
                    f"{n / pull_s:,.0f}",
                    f"{send_cpu / n * 1e6:.0f}",
                    f"{pull_cpu / n * 1e6:.0f}",
                )
            )
        off, on = res["off"], res["on"]
        rows.append(
            (
                "on / off",
                f"{off[0] / on[0]:.3f}",
                f"{off[1] / on[1]:.3f}",
                f"{on[2] / off[2]:.3f}",
                f"{on[3] / off[3]:.3f}",
            )
        )
        table(
            rows,
            (
                f"{n} x 1 KiB, alternating bursts of {burst}",
                "send msg/s",
                "pull msg/s",
                "broker CPU us/send",
                "broker CPU us/pulled msg",
            ),
        )


# -- partial-frame attack ----------------------------------------------------------------------------------------------


async def attack(port: int, pid: int, conns: int, mib: int) -> dict[str, float]:
    from protocol.codes import RequestCode
    from protocol.command import RemotingCommand
    from protocol.remoting import RemotingClient

    addr = f"127.0.0.1:{port}"
    stop = asyncio.Event()
    lat: list[float] = []
    peak = [0]
    closed = [0]

    async def sampler() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], rss(pid)[0])
            await asyncio.sleep(0.05)

    async def good() -> None:
        client = RemotingClient()
        try:
            while not stop.is_set():
                cmd = RemotingCommand.request(RequestCode.GET_BROKER_RUNTIME_INFO)
                t0 = time.perf_counter()
                await client.invoke(addr, cmd, 5.0)
                lat.append(time.perf_counter() - t0)
                await asyncio.sleep(0.005)
        finally:
            await client.close()

    async def attacker() -> None:
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port)
            w.write(struct.pack(">iI", 16 * MiB - 8, 0))
            chunk = b"\x00" * MiB
            for _ in range(mib):
                w.write(chunk)
                await w.drain()
            await asyncio.wait_for(r.read(1), 5)  # hold the connection (the frame deadline is 30 s)
            closed[0] += 1
        except (ConnectionError, TimeoutError):
            closed[0] += 1 if not isinstance(sys.exc_info()[1], TimeoutError) else 0

    tasks = [asyncio.ensure_future(sampler()), asyncio.ensure_future(good())]
    await asyncio.sleep(0.5)
    base = rss(pid)[0]
    t0 = time.perf_counter()
    await asyncio.gather(*(attacker() for _ in range(conns)))
    took = time.perf_counter() - t0
    stop.set()
    await asyncio.gather(*tasks)
    lat.sort()
    return {
        "rss_before_mb": base / MiB,
        "rss_peak_mb": peak[0] / MiB,
        "attackers_closed": closed[0],
        "attack_s": took,
        "good_requests": len(lat),
        "good_p50_ms": lat[len(lat) // 2] * 1000,
        "good_p99_ms": lat[int(len(lat) * 0.99)] * 1000,
    }


def bench_attack(conns: int, mib: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        br, port = start(tmp, "", f"serverMaxPendingFrameBytes={256 * MiB}\n")
        try:
            out = asyncio.run(attack(port, br.pid, conns, mib))
        finally:
            br.terminate()
            br.wait(30)
        table([(k, f"{v:,.1f}") for k, v in out.items()], (f"{conns} x {mib} MiB partial frames, cap 256 MiB", ""))


# -- fuzz rounds ------------------------------------------------------------------------------------------------------


_CODES = (10, 11, 12, 14, 15, 17, 25, 26, 28, 29, 30, 31, 34, 35, 36, 38, 41, 42, 200, 215, 310, 320, 9999)
_FIELDS = ("topic", "group", "consumerGroup", "producerGroup", "a", "b", "queueId", "queueOffset", "clientID", "key")


def _text(rng: random.Random) -> str:
    return "".join(rng.choice("abcXYZ019%_-.\x00é") for _ in range(rng.randrange(0, 24)))


def bad_frame(rng: random.Random) -> bytes:
    kind = rng.randrange(7)
    if kind >= 5:  # a well-formed frame with a real code and random fields and body: dispatched to a handler
        import json

        ext = {rng.choice(_FIELDS): _text(rng) for _ in range(rng.randrange(0, 6))}
        hdr = json.dumps(
            {
                "code": rng.choice(_CODES),
                "language": "JAVA",
                "version": 400,
                "opaque": rng.randrange(1 << 31),
                "flag": 0,
                "extFields": ext,
            }
        ).encode()
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 100)))
        return struct.pack(">iI", 4 + len(hdr) + len(body), len(hdr)) + hdr + body
    if kind == 0:  # too large
        return struct.pack(">iI", 17 * MiB, 0)
    if kind == 1:  # bad serialize type
        hdr = b'{"code":10}'
        return struct.pack(">iI", 4 + len(hdr), (9 << 24) | len(hdr)) + hdr
    if kind == 2:  # header length beyond the frame
        return struct.pack(">iI", 8, 1000) + b"1234"
    if kind == 3:  # undecodable JSON header
        hdr = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60)))
        return struct.pack(">iI", 4 + len(hdr), len(hdr)) + hdr
    return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))  # random bytes


async def fuzz_round(port: int, frames: int, seed: int, parallel: int = 64) -> None:
    rng = random.Random(seed)
    sem = asyncio.Semaphore(parallel)

    async def one(data: bytes) -> None:
        async with sem:
            try:
                r, w = await asyncio.open_connection("127.0.0.1", port)
                w.write(data)
                w.write_eof()
                await asyncio.wait_for(r.read(), 5)
                w.close()
            except (ConnectionError, TimeoutError, OSError):
                pass

    await asyncio.gather(*(one(bad_frame(rng)) for _ in range(frames)))


def bench_fuzz(rounds: int, frames: int, namesrv: bool) -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        br, port = start(tmp, None if namesrv else "")
        rows = []
        try:
            time.sleep(1)
            rows.append(("start", *(f"{x / MiB:.1f}" for x in rss(br.pid)), "-"))
            for i in range(rounds):
                t0 = time.perf_counter()
                asyncio.run(fuzz_round(port, frames, seed=i))
                took = time.perf_counter() - t0
                time.sleep(2)  # let closes finish
                rows.append((f"after round {i + 1}", *(f"{x / MiB:.1f}" for x in rss(br.pid)), f"{took:.1f}"))
        finally:
            br.terminate()
            br.wait(30)
        who = "name server" if namesrv else "broker"
        table(rows, (f"{who}: {frames} bad frames per round", "VmRSS MiB", "RssAnon MiB", "round s"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("acl", "attack", "fuzz"))
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--burst", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--conns", type=int, default=100)
    ap.add_argument("--mib", type=int, default=15)
    ap.add_argument("--frames", type=int, default=60_000)
    ap.add_argument("--namesrv", action="store_true", help="fuzz: target the name server instead of the broker")
    a = ap.parse_args()
    if a.what == "acl":
        bench_acl(a.n, a.burst)
    elif a.what == "attack":
        bench_attack(a.conns, a.mib)
    else:
        bench_fuzz(a.rounds, a.frames, a.namesrv)


if __name__ == "__main__":
    main()
