"""Stall probe for the benches (issue 21, workload B's tail): every Python process started with this directory on
``PYTHONPATH`` and ``BENCH_STALL_PROBE=<dir>`` set records its cyclic-GC collections (generation, pause) and, on
uvloop, its event loop's lag (a 1 ms sleep that ran late), and writes them to ``<dir>/<pid>.json`` when its
``uvloop.run`` returns. Inert without ``BENCH_STALL_PROBE``. ``bench/stall_summary.py`` reads the files.

    BENCH_STALL_PROBE=/tmp/stalls PYTHONPATH=bench/stall_probe .venv/bin/python bench/latency_bench.py \\
        --only b --rates 5000 --systems rocketq --runs 1
    .venv/bin/python bench/stall_summary.py /tmp/stalls

The daemons get the directory through ``bench/e2e_bench.py``'s ``start_servers`` (it keeps ``PYTHONPATH``), the
bench's producer and consumer as forked children. The lag monitor costs ~1000 wake-ups a second: compare runs with
the probe on both sides, not with plain bench figures.

| file ``<pid>.json`` key | meaning                                                                                    |
|-------------------------|--------------------------------------------------------------------------------------------|
| ``argv``                | the process's command line (daemons: ``.../broker/__main__.py ...``)                       |
| ``t0``, ``t1``          | ``time.monotonic()`` when its ``uvloop.run`` started and returned                         |
| ``gc``                  | ``[monotonic s, generation, pause ms]`` per collection after ``t0``                        |
| ``lag``                 | ``[monotonic s, ms late]`` per loop wake-up more than 1 ms late                           |
| ``lag_n``               | loop wake-ups measured                                                                     |
| ``frozen``              | ``gc.get_freeze_count()`` at the end                                                        |
| ``full_ms``             | one full collection at the end, ms (what a generation-2 collection costs that process)    |
"""

from __future__ import annotations

import os

_OUT = os.environ.get("BENCH_STALL_PROBE")

if _OUT:
    import asyncio
    import gc
    import json
    import sys
    import time
    from typing import Any

    _started = [0]
    _gc: list[tuple[float, int, float]] = []

    def _on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            _started[0] = time.perf_counter_ns()
        else:
            _gc.append((time.monotonic(), info["generation"], (time.perf_counter_ns() - _started[0]) / 1e6))

    gc.callbacks.append(_on_gc)

    def _dump(out: str, t0: float, lag: list[tuple[float, float]], lag_n: int) -> None:
        t1 = time.monotonic()
        t = time.perf_counter()
        gc.collect()
        full_ms = (time.perf_counter() - t) * 1e3
        os.makedirs(out, exist_ok=True)
        report = {
            "argv": " ".join(sys.argv),
            "t0": t0,
            "t1": t1,
            "gc": [x for x in _gc if t0 <= x[0] <= t1],
            "lag": lag,
            "lag_n": lag_n,
            "frozen": gc.get_freeze_count(),
            "full_ms": full_ms,
        }
        with open(os.path.join(out, f"{os.getpid()}.json"), "w") as f:
            json.dump(report, f)

    try:
        import uvloop
    except ImportError:
        pass
    else:
        _run = uvloop.run

        def _probed_run(main: Any, **kw: Any) -> Any:
            out = _OUT

            async def wrapped() -> Any:
                lag: list[tuple[float, float]] = []
                n = [0]

                async def monitor() -> None:
                    while True:
                        t = time.perf_counter()
                        await asyncio.sleep(0.001)
                        late = time.perf_counter() - t - 0.001
                        n[0] += 1
                        if late > 0.001:
                            lag.append((time.monotonic() - late, late * 1e3))

                t0 = time.monotonic()
                task = asyncio.ensure_future(monitor())
                try:
                    return await main
                finally:
                    task.cancel()
                    _dump(out, t0, lag, n[0])

            return _run(wrapped(), **kw)

        uvloop.run = _probed_run
