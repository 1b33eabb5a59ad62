"""CPU per remoting SEND and per PULL through the broker's own code, in-process, checkouts alternating.

Each run is a fresh process started in one checkout (``--repo``; the first is the baseline): a broker's handlers over
a started store in a temporary directory (``tests/unit/broker/handler_support.py``: no server, no socket), then
``--sends`` SEND_MESSAGE requests (256-byte bodies, 4 queues) through ``SendHandlers.send`` → ``SendService`` → the
store, and ``--pulls`` PULL_MESSAGE requests of 32 messages through ``PullHandlers`` → the consume service → the
store's read, and ``--batches`` SEND_BATCH_MESSAGE requests shaped as the Spark sink sends them (``--batch-size``
messages of 1 KiB, properties ``WAIT`` and a ``UNIQ_KEY`` each; figure per message, dispatch included: each batch's
scheduled drain runs before the next). The figure is the process CPU time (``time.process_time``) per request after a warm-up; the runs of the
checkouts alternate and each figure is the median of ``--runs`` rounds, with the ratio to the baseline. A checkout
runs as it is: compiled where it has its ``make compile`` build, pure otherwise (it says which).

    .venv/bin/python bench/handler_cpu_bench.py --repo /tmp/base --repo . [--runs 7] [--batches 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_WARM_SENDS = 200
_WARM_PULLS = 50
_WARM_BATCHES = 5


async def _cpu_us_per_request(broker: Any, cmds: list[Any], warm: int, *, drain: bool = False) -> float:
    """Dispatch ``cmds`` through ``broker``'s handlers; the process CPU µs per request after the first ``warm``
    (with ``drain``, the loop runs the scheduled dispatch after each request, inside the measure)."""
    from protocol.codes import ResponseCode
    from tests.unit.broker.handler_support import dispatch

    for cmd in cmds[:warm]:
        await dispatch(broker, cmd)
        await asyncio.sleep(0)
    t0 = time.process_time()
    for cmd in cmds[warm:]:
        reply = await dispatch(broker, cmd)
        if drain:
            await asyncio.sleep(0)
    spent = time.process_time() - t0
    assert reply.code == ResponseCode.SUCCESS, reply.remark
    return spent / (len(cmds) - warm) * 1e6


def _sink_batches(topic: str, n: int, size: int) -> list[Any]:
    """``n`` SEND_BATCH_MESSAGE requests of ``size`` 1 KiB messages as the Spark sink's columnar path encodes them."""
    import os

    from protocol.batch import encode_batch_texts
    from protocol.codes import RequestCode
    from protocol.command import RemotingCommand
    from tests.integration.broker_wire import send_cmd

    ext = dict(send_cmd(topic, b"", queue_id=0).ext_fields, batch="true", properties="")
    body = b"x" * 1024
    cmds = []
    for i in range(n):
        head = os.urandom(14).hex().upper()
        items = [(0, body, f"WAIT\x01true\x02UNIQ_KEY\x01{head}{j:04X}\x02") for j in range(size)]
        cmd = RemotingCommand.request(RequestCode.SEND_BATCH_MESSAGE, {**ext, "queueId": str(i % 4)}, b"")
        cmd.body = encode_batch_texts(items)
        cmds.append(cmd)
    return cmds


async def _measure(n_send: int, n_pull: int, n_batch: int, batch_size: int) -> dict[str, float | bool]:
    sys.path.insert(0, ".")  # the checkout this run measures
    import protocol.record
    from broker import topics as T
    from protocol.bodies import TopicConfig
    from tests.integration.broker_wire import pull_cmd, send_cmd
    from tests.unit.broker.handler_support import wired_broker

    with tempfile.TemporaryDirectory() as d:
        async with wired_broker(
            Path(d), mappedFileSizeCommitLog=256 * 1024 * 1024, mappedFileSizeConsumeQueue=300_000 * 20
        ) as b:
            b.topics.put(TopicConfig.with_queues("BenchT", 4, T.PERM_RW))
            sends = [send_cmd("BenchT", b"x" * 256, tags="TagA", queue_id=i % 4) for i in range(n_send + _WARM_SENDS)]
            send_us = await _cpu_us_per_request(b, sends, _WARM_SENDS)
            await asyncio.sleep(0.2)  # the scheduled dispatch drains
            top = max(1, b.store.get_max_offset_in_queue("BenchT", 0) - 32)
            pulls = [pull_cmd("G", "BenchT", 0, (i * 32) % top) for i in range(n_pull + _WARM_PULLS)]
            pull_us = await _cpu_us_per_request(b, pulls, _WARM_PULLS)
            batch_us = 0.0
            if n_batch:
                cmds = _sink_batches("BenchT", n_batch + _WARM_BATCHES, batch_size)
                batch_us = await _cpu_us_per_request(b, cmds, _WARM_BATCHES, drain=True) / batch_size
    compiled = not (protocol.record.__file__ or "").endswith(".py")
    return {"send_us": send_us, "pull_us": pull_us, "batch_msg_us": batch_us, "compiled": compiled}


def _run(repo: str, counts: list[int]) -> dict[str, float | bool]:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", *map(str, counts)],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    row: dict[str, float | bool] = json.loads(out.strip().splitlines()[-1])
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", action="append", help="checkout to measure (first = baseline; default: this one)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sends", type=int, default=20000)
    ap.add_argument("--pulls", type=int, default=3000)
    ap.add_argument("--batches", type=int, default=0, help="SEND_BATCH_MESSAGE requests (0: none)")
    ap.add_argument(
        "--batch-size", type=int, default=460, help="messages per batch (the sink's default: ~460 of 1 KiB)"
    )
    ap.add_argument("--child", nargs=4, type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(asyncio.run(_measure(*a.child))))
        return
    repos = a.repo or ["."]
    rows: dict[str, list[dict[str, float | bool]]] = {r: [] for r in repos}
    for _ in range(a.runs):
        for repo in repos:
            rows[repo].append(_run(repo, [a.sends, a.pulls, a.batches, a.batch_size]))
    base = repos[0]
    for key in ("send_us", "pull_us", "batch_msg_us") if a.batches else ("send_us", "pull_us"):
        base_med = statistics.median(float(r[key]) for r in rows[base])
        for repo in repos:
            med = statistics.median(float(r[key]) for r in rows[repo])
            kind = "compiled" if all(r["compiled"] for r in rows[repo]) else "pure"
            print(f"{key:8} {repo:30} {kind:8} median {med:7.1f} µs  ratio {med / base_med:.3f}")


if __name__ == "__main__":
    main()
