"""``python -m broker`` (mqbroker): -p/-m print config and exit 0, bad config and a busy port exit non-zero with one
line, SIGTERM stops cleanly (exit 0) after unregistering from the name server.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import RemotingClient
from tests.eventually import eventually
from tests.harness import run_namesrv

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "broker", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def test_print_config(tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text("brokerName=b-cli\nlistenPort=12345\n")
    r = run_cli("-c", str(conf), "-n", "10.0.0.1:9876", "-p")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "brokerName=b-cli" in lines and "listenPort=12345" in lines and "namesrvAddr=10.0.0.1:9876" in lines
    m = run_cli("-c", str(conf), "-m", env={"NAMESRV_ADDR": "10.0.0.2:9876"})
    assert m.returncode == 0 and "namesrvAddr=10.0.0.2:9876" in m.stdout.splitlines()
    assert len(m.stdout.splitlines()) < len(lines)


def test_bad_config_is_one_line(tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text("brokerName=x\nnoSuchKey=1\n")
    r = run_cli("-c", str(conf))
    assert r.returncode != 0
    assert r.stderr.strip().count("\n") == 0 and "noSuchKey" in r.stderr
    conf.write_text("listenPort=notanumber\n")
    r = run_cli("-c", str(conf))
    assert r.returncode != 0 and "listenPort=notanumber" in r.stderr and "Traceback" not in r.stderr


def test_port_in_use(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        conf = tmp_path / "broker.conf"
        conf.write_text(
            f"listenPort={port}\nbindAddress=127.0.0.1\nstorePathRootDir={tmp_path}/store\nlogDir={tmp_path}/logs\n"
        )
        r = run_cli("-c", str(conf))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("mqbroker:")]  # other lines are JSON logs
    assert len(errors) == 1 and str(port) in errors[0] and "in use" in errors[0]


async def test_sigterm_clean_shutdown_unregisters(tmp_path: Path) -> None:
    async with run_namesrv(tmp_path) as ns:
        conf = tmp_path / "broker.conf"
        conf.write_text(
            f"listenPort=0\nbindAddress=127.0.0.1\nstorePathRootDir={tmp_path}/store\nbrokerName=b-sig\n"
            f"logDir={tmp_path}/logs\n"
        )
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "broker",
            "-c",
            str(conf),
            "-n",
            ns.addr,
            cwd=REPO,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            assert proc.stdout is not None
            line = await asyncio.wait_for(proc.stdout.readline(), 30)
            assert b"boot success" in line and b"b-sig" in line
            client = RemotingClient()
            try:
                cmd = RemotingCommand.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "TBW102"})
                assert (await client.invoke(ns.addr, cmd)).code == ResponseCode.SUCCESS
                proc.send_signal(signal.SIGTERM)
                assert await asyncio.wait_for(proc.wait(), 30) == 0

                async def unregistered() -> bool:
                    cmd = RemotingCommand.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "TBW102"})
                    return (await client.invoke(ns.addr, cmd)).code == ResponseCode.TOPIC_NOT_EXIST

                await eventually(unregistered, timeout=5, what="the broker unregistered after shutdown")
            finally:
                await client.close()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
