"""Loopback request/response benchmark of RemotingServer + RemotingClient (server in a separate process), next to
the raw uvloop length-prefixed echo ceiling from ``../shared/bench/anchors/tcp_limits.py`` measured in the same run.

Each request is a 1 KiB-body frame answered with a 1 KiB-body reply; "depth 32" keeps 32 requests in flight on one
connection, "depth 1" is ping-pong. Header types: JSON, ROCKETMQ, msgpack.

    .venv/bin/python bench/remoting_bench.py [--secs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time

try:
    from bench._util import free_port, run_anchor, table
except ImportError:
    from _util import free_port, run_anchor, table  # type: ignore[no-redef]

SERVER = r"""
import asyncio, sys
from protocol.remoting import HandlerRegistry, RemotingServer
from protocol.remoting.runtime import configure_logging, run
configure_logging("WARNING")
async def main():
    reg = HandlerRegistry()
    async def echo(ctx, cmd):
        return cmd.make_response(body=cmd.body)
    reg.register(1, echo)
    srv = RemotingServer(reg, "127.0.0.1", int(sys.argv[1]))
    await srv.start()
    print("ready", flush=True)
    await asyncio.Event().wait()
run(main())
"""


async def measure(port: int, st: int, depth: int, secs: float) -> float:
    from protocol.codes import SerializeType
    from protocol.command import RemotingCommand
    from protocol.remoting import RemotingClient

    client = RemotingClient()
    addr = f"127.0.0.1:{port}"
    conn = await client.get_connection(addr)
    body = b"x" * 1024
    done = 0
    end = time.perf_counter() + secs

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < end:
            await conn.invoke(RemotingCommand.request(1, {"a": "b"}, body, serialize_type=SerializeType(st)), 5)
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(depth)))
    elapsed = time.perf_counter() - start
    await client.close()
    return done / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--secs", type=float, default=3.0)
    a = ap.parse_args()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        while proc.stdout.readline().strip() != "ready":
            pass
        try:
            import uvloop

            runner = uvloop.run
        except ImportError:
            runner = asyncio.run
        rows = []
        ceilings = {}
        for depth in (32, 1):
            anchor = run_anchor("tcp_limits.py", "echo", "--depth", str(depth), "--size", "1024", "--secs", str(a.secs))
            ceilings[depth] = float(anchor[0]["req_s"]) if anchor else 0.0
            rows.append((f"raw uvloop echo (anchor), depth {depth}", f"{ceilings[depth]:,.0f}", "1.00"))
            for st, name in ((0, "JSON"), (1, "ROCKETMQ"), (2, "msgpack")):
                r = runner(measure(port, st, depth, a.secs))
                ratio = f"{r / ceilings[depth]:.2f}" if ceilings[depth] else "-"
                rows.append((f"rocketq remoting {name}, depth {depth}", f"{r:,.0f}", ratio))
        table(rows, ("what", "req/s", "ratio to echo"))
    finally:
        proc.terminate()
        proc.wait(5)


if __name__ == "__main__":
    main()
