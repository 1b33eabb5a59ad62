"""``make run``: a local name server (127.0.0.1:9876) and broker (10911) in the foreground, with embedded defaults.

    python scripts/run_local.py [--namesrv-port 9876] [--broker-config broker.conf] [--brokers 2]

``--brokers 2`` (``make run BROKERS=2``) adds a second broker process, broker-b on 11911 with its store in
``~/store-b``, in the same cluster: one Python broker uses one core, two use two (README, "Using more than one
core"); a topic created on the cluster gets queues on both.

Starts ``python -m namesrv`` and, once it accepts connections, ``python -m broker -n 127.0.0.1:9876`` as child
processes in their own process groups, so a terminal's Ctrl-C reaches only this launcher. SIGINT/SIGTERM are
forwarded as SIGTERM: the broker first (it unregisters from the name server), then the name server. If either child
exits on its own, the other is stopped too and the launcher exits with the first child's status.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

HOST = "127.0.0.1"
START_TIMEOUT = 30.0
BROKER_B_PORT = 11911
BROKER_B_CONF = (
    "brokerClusterName=DefaultCluster\nbrokerName=broker-b\nbrokerId=0\nlistenPort={port}\nhaListenPort={ha}\n"
    "storePathRootDir=~/store-b\nautoCreateTopicEnable=true\n"
)
STOP_TIMEOUT = 15.0


class Child:
    """One server process, started in its own process group."""

    def __init__(self, name: str, argv: Sequence[str]) -> None:
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, process_group=0)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def exit_status(self) -> int:
        """The child's status as a shell would report it (128 + N when killed by signal N), never 0."""
        rc = self.proc.returncode
        return 128 - rc if rc < 0 else rc or 1

    def stop(self) -> int:
        """SIGTERM, wait for the clean shutdown, SIGKILL as a last resort; returns the exit status."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                print(f"run_local: {self.name} did not stop in {STOP_TIMEOUT:.0f}s, killing it", file=sys.stderr)
                self.proc.kill()
        return self.proc.wait()


def _wait_listening(child: Child, port: int, stopping: list[int]) -> bool:
    """True once ``HOST:port`` accepts a connection; False if the child died, a signal arrived or time ran out."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and child.alive() and not stopping:
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--namesrv-port", type=int, default=9876, help="name server port (default 9876)")
    p.add_argument("--broker-port", type=int, default=10911, help="broker port, only to wait for it (default 10911)")
    p.add_argument("--broker-config", metavar="FILE", help="broker.conf passed to the broker as -c FILE")
    p.add_argument("--brokers", type=int, choices=(1, 2), default=1, help="broker processes (default 1)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    namesrv_addr = f"{HOST}:{args.namesrv_port}"
    stopping: list[int] = []

    def _on_signal(signum: int, _frame: FrameType | None) -> None:
        stopping.append(signum)

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)

    children: list[Child] = []
    status = 0
    conf = Path(tempfile.gettempdir()) / f"rocketq-broker-b-{os.getpid()}.conf"
    try:
        namesrv = Child("namesrv", [sys.executable, "-m", "namesrv"])
        children.append(namesrv)
        if not _wait_listening(namesrv, args.namesrv_port, stopping):
            return _startup_failed(namesrv, stopping, f"name server did not listen on {namesrv_addr}")
        broker_argv = [sys.executable, "-m", "broker", "-n", namesrv_addr]
        if args.broker_config:
            broker_argv += ["-c", args.broker_config]
        broker = Child("broker", broker_argv)
        children.append(broker)
        if not _wait_listening(broker, args.broker_port, stopping):
            return _startup_failed(broker, stopping, f"broker did not listen on {HOST}:{args.broker_port}")
        if args.brokers == 2:
            conf.write_text(BROKER_B_CONF.format(port=BROKER_B_PORT, ha=BROKER_B_PORT + 1))
            broker_b = Child("broker-b", [sys.executable, "-m", "broker", "-n", namesrv_addr, "-c", str(conf)])
            children.append(broker_b)
            if not _wait_listening(broker_b, BROKER_B_PORT, stopping):
                return _startup_failed(broker_b, stopping, f"broker-b did not listen on {HOST}:{BROKER_B_PORT}")

        print(
            f"\nrocketq is running:\n"
            f"  namesrv {namesrv_addr} — export NAMESRV_ADDR={namesrv_addr}\n"
            f"  broker  {HOST}:{args.broker_port}\n"
            + (f"  broker-b {HOST}:{BROKER_B_PORT}\n" if args.brokers == 2 else "")
            + "Ctrl-C stops them all.\n",
            flush=True,
        )
        while not stopping:
            dead = next((c for c in children if not c.alive()), None)
            if dead is not None:
                status = dead.exit_status()
                print(f"run_local: {dead.name} exited with status {dead.proc.returncode}", file=sys.stderr)
                break
            time.sleep(0.2)
    finally:
        # Reverse start order: the broker unregisters from a name server that is still up.
        for child in reversed(children):
            child.stop()
        conf.unlink(missing_ok=True)
    return status


def _startup_failed(child: Child, stopping: list[int], reason: str) -> int:
    if stopping:
        return 0
    if child.alive():
        print(f"run_local: {reason} within {START_TIMEOUT:.0f}s", file=sys.stderr)
        return 1
    print(f"run_local: {child.name} exited with status {child.proc.returncode}", file=sys.stderr)
    return child.exit_status()


if __name__ == "__main__":
    sys.exit(main())
