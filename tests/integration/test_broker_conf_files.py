"""Config files RocketMQ operators already own: the J 4.9.8 distribution's ``conf/broker.conf`` and
``conf/2m-2s-sync/broker-a.properties`` (reproduced byte for byte under ``tests/fixtures``), and an operator's file
full of J keys, start a real broker unchanged (only the listener and store are pointed at the test's port 0 and
tmp dir, as ``-n``/overrides on J's command line would); ``updateBrokerConfig`` is written back to the file."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from broker.app import BrokerApp
from broker.config import ConfigError, load_config
from client import Message, Producer
from protocol.bodies.properties_text import parse_properties
from tests.harness import run_namesrv
from tests.integration.test_mqadmin import REPO, mqadmin

CONF = Path(__file__).resolve().parents[1] / "fixtures" / "rocketmq-4.9.8" / "conf"


def _test_overrides(ns_addr: str, tmp_path: Path) -> dict[str, Any]:
    return {
        "listenPort": 0,
        "bindAddress": "127.0.0.1",
        "brokerIP1": "127.0.0.1",
        "namesrvAddr": ns_addr,
        "storePathRootDir": tmp_path / "store",
        "mappedFileSizeCommitLog": 4 * 1024 * 1024,
    }


@pytest.mark.parametrize(
    ("name", "role"), [("broker.conf", "ASYNC_MASTER"), ("2m-2s-sync/broker-a.properties", "SYNC_MASTER")]
)
async def test_the_official_config_files_start_the_broker(
    name: str, role: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with run_namesrv(tmp_path) as ns:
        cfg = load_config(CONF / name, _test_overrides(ns.addr, tmp_path))
        assert "WARN" not in capsys.readouterr().err  # every key of the official files takes effect here
        assert (cfg.identity.broker_name, cfg.identity.broker_role) == ("broker-a", role)
        assert (cfg.store.file_reserved_time, cfg.store.delete_when) == (48, "04")
        app = BrokerApp(cfg)
        await app.start()
        try:
            async with Producer("PG_conf", namesrv_addr=ns.addr) as p:
                r = await p.send(Message("ConfTopic", b"from an official broker.conf"))
            assert r.message_queue.broker_name == "broker-a"
        finally:
            await app.stop(grace=1.0)


def test_an_operators_file_loads_with_one_warning_line(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = load_config(CONF / "operator-broker.conf")
    assert cfg.identity.broker_name == "broker-x"  # "brokerName broker-x": the space separator
    assert cfg.identity.region_id == "région-1"  # \u00e9
    assert cfg.store.message_delay_level.split()[-4:] == ["20m", "30m", "1h", "2h"]  # the continued line
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    for key in ("transientStorePoolEnable", "maxHashSlotNum", "maxIndexNum", "useTLS", "sendMessageThreadPoolNums"):
        assert key in err[0]
    assert "operator-broker.conf" in err[0]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("transientStorePoolEnabled=false\n", "unknown config key 'transientStorePoolEnabled' (did you mean"),
        ("brokername=x\n", "(did you mean 'brokerName'?)"),
        ("maxIndexNum=lots\n", "line 1: maxIndexNum=lots: expected an integer"),
        ("slaveReadEnable=yes\n", "slaveReadEnable=yes: expected true or false"),
        ("listenPort=ten\n", "listenPort=ten: expected an integer"),
        ("flushDiskType=SOMETIMES\n", "flushDiskType=SOMETIMES"),
    ],
)
def test_bad_keys_and_values_are_named(tmp_path: Path, text: str, needle: str) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(conf)
    assert needle in str(info.value) and "\n" not in str(info.value)


async def test_update_broker_config_is_written_back_to_the_file(tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    shutil.copy(CONF / "broker.conf", conf)
    async with run_namesrv(tmp_path) as ns:
        app = BrokerApp(load_config(conf, _test_overrides(ns.addr, tmp_path)))
        await app.start()
        try:
            rc, _out, err = await mqadmin(
                "updateBrokerConfig", "-n", ns.addr, "-b", app.addr, "-k", "fileReservedTime", "-v", "24"
            )
            assert rc == 0, err
            rc, _out, err = await mqadmin(
                "updateBrokerConfig", "-n", ns.addr, "-b", app.addr, "-k", "autoCreateTopicEnable", "-v", "false"
            )
            assert rc == 0, err
            rc, _out, err = await mqadmin(
                "updateBrokerConfig", "-n", ns.addr, "-b", app.addr, "-k", "listenPort", "-v", "1"
            )
            assert rc != 0
        finally:
            await app.stop(grace=1.0)
    text = conf.read_text()
    assert text.startswith("# Licensed to the Apache Software Foundation")  # the operator's comments are kept
    values = {k: v for _no, k, v in parse_properties(text)}
    assert values["fileReservedTime"] == "24" and values["autoCreateTopicEnable"] == "false"
    assert values["brokerName"] == "broker-a" and "listenPort" not in values  # refused keys never reach the file
    restarted = load_config(conf, _test_overrides("127.0.0.1:1", tmp_path))
    assert restarted.store.file_reserved_time == 24 and not restarted.features.auto_create_topic_enable


@pytest.mark.parametrize("name", ["broker.conf", "2m-2s-sync/broker-a.properties", "operator-broker.conf"])
async def test_mqbroker_reads_them_as_they_are(name: str) -> None:
    """``mqbroker -c <file> -m`` as an operator runs it: exit 0, the file's values, at most the one warning line."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "broker", "-c", str(CONF / name), "-m",
        cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode == 0, err
    values = dict(line.split("=", 1) for line in out.decode().splitlines())
    assert values["brokerName"] == ("broker-x" if name == "operator-broker.conf" else "broker-a")
    assert values["fileReservedTime"] == "48" and values["deleteWhen"] == "04"
    assert len(err.decode().strip().splitlines()) == (1 if name == "operator-broker.conf" else 0)
