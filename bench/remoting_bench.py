"""Loopback request/response benchmark of RemotingServer + RemotingClient (server in a separate process), next to
the raw uvloop length-prefixed echo ceiling from ``../shared/bench/anchors/tcp_limits.py`` measured in the same run.

Every request carries a 1 KiB body and is answered with the same body. Modes, on one connection:

* ``depth 32``: write 32 requests, wait for the 32 replies, repeat — what the echo anchor does (``--depth 32``).
* ``window 32``: 32 callers each keep one request in flight (an application with many concurrent senders).
* ``depth 1``: ping-pong, one request at a time (the anchor's ``--depth 1``).

Header types: JSON (what official clients send), ROCKETMQ binary, msgpack (our native client's extension). Rows
"send hdr" carry the 13 ext fields of a SEND_MESSAGE_V2 request instead of one, to choose the native default.
With ``--runs N`` each figure is the median of N runs, the cases interleaved so that drift hits all of them alike.

    .venv/bin/python bench/remoting_bench.py [--secs 3] [--runs 3]
    .venv/bin/python bench/remoting_bench.py --profile [--secs 5]   # cProfile of the server, JSON, depth 32
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

try:
    from bench._util import free_port, run_anchor, table
except ImportError:
    from _util import free_port, run_anchor, table  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parent.parent

SERVER = r"""
import asyncio, os, signal, sys
from protocol.remoting import HandlerRegistry, RemotingServer
from runtime.daemon import configure_logging, run
configure_logging("WARNING")
profile = None
if os.environ.get("RQ_BENCH_PROFILE"):
    import cProfile, pstats
    profile = cProfile.Profile()
async def main():
    reg = HandlerRegistry()
    async def echo(ctx, cmd):
        return cmd.make_response(body=cmd.body)
    reg.register(1, echo)
    srv = RemotingServer(reg, "127.0.0.1", int(sys.argv[1]))
    await srv.start()
    done = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, done.set)
    print("ready", flush=True)
    if profile is not None:
        profile.enable()
    await done.wait()
    if profile is not None:
        profile.disable()
        pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(25)
        pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative").print_stats(15)
run(main())
"""

# The ext fields of a SEND_MESSAGE_V2 request (SendMessageRequestHeaderV2: a..m) as the native producer sends them.
SEND_HEADER = {
    "a": "please_rename_unique_group_name",
    "b": "TopicTest",
    "c": "TBW102",
    "d": "4",
    "e": "3",
    "f": "0",
    "g": "1700000000000",
    "h": "0",
    "i": "UNIQ_KEY\x01AC110001002A18B4AAC21B2E6C0000\x02WAIT\x01true\x02TAGS\x01TagA\x02",
    "j": "0",
    "k": "false",
    "l": "0",
    "m": "false",
}
TYPES = {"JSON": 0, "ROCKETMQ": 1, "msgpack": 2}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; 0.0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(port: int, st: int, mode: str, depth: int, secs: float, ext: dict[str, str]) -> float:
    """Requests per second from one RemotingClient connection for ``secs``."""
    from protocol.codes import SerializeType
    from protocol.command import RemotingCommand
    from protocol.remoting import RemotingClient

    client = RemotingClient()
    conn = await client.get_connection(f"127.0.0.1:{port}")
    body = b"x" * 1024
    stype = SerializeType(st)
    loop = asyncio.get_running_loop()
    done = 0
    end = time.perf_counter() + secs
    # batch mode: every caller waits for the whole batch of ``depth`` replies before the next batch is written
    gate: asyncio.Future[None] = loop.create_future()
    left = depth

    async def caller() -> None:
        nonlocal done, gate, left
        while time.perf_counter() < end:
            this_batch = gate
            await conn.invoke(RemotingCommand.request(1, dict(ext), body, serialize_type=stype), 10)
            done += 1
            if mode == "window":
                continue
            left -= 1
            if left == 0:  # the last reply of the batch releases the others; all write in one loop pass
                left = depth
                gate = loop.create_future()
                if not this_batch.done():
                    this_batch.set_result(None)
            else:
                await this_batch

    start = time.perf_counter()
    callers = [asyncio.ensure_future(caller()) for _ in range(depth)]
    await asyncio.wait(callers, return_when=asyncio.FIRST_COMPLETED)
    if not gate.done():
        gate.set_result(None)  # let callers parked on the last, unfinished batch see the clock
    await asyncio.gather(*callers)
    elapsed = time.perf_counter() - start
    await client.close()
    return done / elapsed


def _start_server(port: int, profile: bool = False) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if profile:
        env["RQ_BENCH_PROFILE"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port)], stdout=subprocess.PIPE, text=True, cwd=str(REPO), env=env
    )
    assert proc.stdout is not None
    while (line := proc.stdout.readline()) and line.strip() != "ready":
        pass
    return proc


def _runner() -> Any:
    try:
        import uvloop

        return uvloop.run
    except ImportError:
        return asyncio.run


def profile_server(secs: float) -> None:
    port = free_port()
    proc = _start_server(port, profile=True)
    rate = _runner()(measure(port, 0, "batch", 32, secs, {"a": "b"}))
    proc.send_signal(signal.SIGUSR1)
    out, _ = proc.communicate(timeout=60)
    print(f"JSON depth 32 under the profiler: {rate:,.0f} req/s\n{out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--secs", type=float, default=3.0, help="seconds per measurement (default 3)")
    ap.add_argument("--runs", type=int, default=1, help="median of this many runs per figure (default 1)")
    ap.add_argument("--only", default="", help="run only the header types whose name contains this (e.g. JSON)")
    ap.add_argument("--profile", action="store_true", help="profile the server with cProfile instead")
    a = ap.parse_args()
    if a.profile:
        profile_server(a.secs)
        return
    cases: list[tuple[str, int, str, int, dict[str, str]]] = []
    for depth, mode in ((32, "batch"), (32, "window"), (1, "batch")):
        for name, st in TYPES.items():
            cases.append((name, st, mode, depth, {"a": "b"}))
    for name, st in TYPES.items():
        cases.append((f"{name}, send hdr", st, "batch", 32, SEND_HEADER))
    cases = [c for c in cases if a.only in c[0]]
    port = free_port()
    proc = _start_server(port)
    runner = _runner()
    results: dict[int, list[float]] = {}
    server_cpu: dict[int, list[float]] = {}  # server CPU microseconds per request
    client_cpu: dict[int, list[float]] = {}
    anchors: dict[int, list[float]] = {32: [], 1: []}
    try:
        for r in range(a.runs):
            for depth in (32, 1):
                args = ("echo", "--depth", str(depth), "--size", "1024", "--secs", str(a.secs))
                anchor = run_anchor("tcp_limits.py", *args)
                if anchor:
                    anchors[depth].append(float(anchor[0]["req_s"]))
            order = range(len(cases)) if r % 2 == 0 else reversed(range(len(cases)))
            for i in order:
                _name, st, mode, depth, ext = cases[i]
                s0, c0, t0 = cpu_seconds(proc.pid), time.process_time(), time.perf_counter()
                rate = runner(measure(port, st, mode, depth, a.secs, ext))
                n = rate * (time.perf_counter() - t0)  # requests done, near enough (connect and close included)
                results.setdefault(i, []).append(rate)
                server_cpu.setdefault(i, []).append((cpu_seconds(proc.pid) - s0) / n * 1e6)
                client_cpu.setdefault(i, []).append((time.process_time() - c0) / n * 1e6)
    finally:
        proc.send_signal(signal.SIGUSR1)
        proc.wait(10)
    ceiling = {d: statistics.median(v) if v else 0.0 for d, v in anchors.items()}
    rows = []
    for depth in (32, 1):
        rows.append((f"raw uvloop echo (anchor), depth {depth}", "-", f"{ceiling[depth]:,.0f}", "1.00", "-", "-"))
        for i, (name, _st, mode, d, _ext) in enumerate(cases):
            if d != depth:
                continue
            rate = statistics.median(results[i])
            ratio = f"{rate / ceiling[d]:.2f}" if ceiling[d] else "-"
            what = f"rocketq remoting, {'window' if mode == 'window' else 'depth'} {d}"
            srv_us, cli_us = statistics.median(server_cpu[i]), statistics.median(client_cpu[i])
            rows.append((what, name, f"{rate:,.0f}", ratio, f"{srv_us:.1f}", f"{cli_us:.1f}"))
    print(f"1 KiB body, {a.secs:g} s per figure, median of {a.runs} run(s); ratio = req/s / echo req/s at that depth;")
    print("CPU = CPU microseconds per request in the server process and in the client process (less load-sensitive)")
    table(rows, ("what", "header", "req/s", "ratio to echo", "server CPU us/req", "client CPU us/req"))


if __name__ == "__main__":
    main()
