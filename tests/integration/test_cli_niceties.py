"""Small things a new user meets first: a lone master starts without slave-fence warnings, ``--help`` states the
default ports and directories, ``mqadmin ... | head`` ends without a traceback, a ``str`` body is a TypeError that
names ``body``."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from rocketq import Message, Producer
from tests.harness import run_broker, run_namesrv

REPO = Path(__file__).resolve().parents[2]


async def test_a_lone_master_starts_without_warnings(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="rocketq.broker.ha")
    async with run_namesrv(tmp_path) as ns, run_broker(ns, tmp_path) as broker:
        async with Producer("PG_quiet", namesrv_addr=ns.addr) as p:
            await p.send(Message("QuietT", b"x"))  # the start-up fence is lifted: the master takes writes
        assert broker.ha is not None and broker.ha.master is not None and broker.ha.master.state.fenced is None
    ha = [r for r in caplog.records if r.name.startswith("rocketq.broker.ha")]
    assert any("no slave listed" in r.getMessage() for r in ha)  # it happened, at debug level
    assert [r.getMessage() for r in ha if r.levelno >= logging.WARNING] == []


@pytest.mark.parametrize(
    ("module", "wanted"),
    [
        ("broker", ["listenPort 10911", "haListenPort listenPort+1", "grpcServerPort 8081", "~/store", "~/logs/rocketmqlogs"]),
        ("namesrv", ["listenPort 9876", "~/namesrv/kvConfig.json", "~/logs/rocketmqlogs"]),
    ],
)  # fmt: skip
def test_help_states_the_defaults(module: str, wanted: list[str]) -> None:
    out = subprocess.run([sys.executable, "-m", module, "--help"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    for text in wanted:
        assert text in out.stdout, (text, out.stdout)


def test_mqadmin_into_a_closed_pipe_ends_quietly() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "client.admin"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before mqadmin writes its first line (as `| head -0` would)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(60) == 141
    assert err == ""


def test_a_str_body_is_a_type_error_naming_body() -> None:
    with pytest.raises(TypeError, match=r"^Message body must be bytes, not str: encode it first"):
        Message("T", "text")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^Message body must be bytes, not NoneType$"):
        Message("T", None)  # type: ignore[arg-type]
    assert bytes(Message("T", bytearray(b"ok")).body) == b"ok"
