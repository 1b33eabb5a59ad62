"""Packaging, container and CI wiring, checked without Docker: pyproject.toml, docker-compose.yml, Dockerfile,
conf/broker.conf, scripts/run_pytest and .ci/run."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("protocol", "runtime", "namesrv", "controller", "broker", "client", "spark_connector")

# broker.conf keys from docs/reference/operations.md §2 (RocketMQ 4.9.8 names). TODO(lead): use the broker's key table.
KNOWN_BROKER_KEYS = frozenset(
    {
        "brokerClusterName", "brokerName", "brokerId", "namesrvAddr", "brokerIP1", "brokerIP2", "listenPort",
        "haListenPort", "storePathRootDir", "storePathCommitLog", "flushDiskType", "brokerRole", "deleteWhen",
        "fileReservedTime", "diskMaxUsedSpaceRatio", "autoCreateTopicEnable", "autoCreateSubscriptionGroup",
        "defaultTopicQueueNums", "mappedFileSizeCommitLog", "mapedFileSizeCommitLog", "mappedFileSizeConsumeQueue",
        "maxMessageSize", "messageDelayLevel", "longPollingEnable", "shortPollingTimeMills", "aclEnable",
        "flushIntervalCommitLog", "flushCommitLogLeastPages", "flushCommitLogThoroughInterval", "syncFlushTimeout",
        "flushConsumerOffsetInterval", "transientStorePoolEnable", "commitIntervalCommitLog",
        "sendMessageThreadPoolNums", "pullMessageThreadPoolNums", "waitTimeMillsInSendQueue",
        "osPageCacheBusyTimeOutMills", "enableDLegerCommitLog", "traceTopicEnable", "msgTraceTopicName",
        "slaveReadEnable", "messageIndexEnable", "maxHashSlotNum", "maxIndexNum", "checkCRCOnRecover",
        "serverChannelMaxIdleTimeSeconds", "maxTransferCountOnMessageInMemory", "maxTransferBytesOnMessageInMemory",
        # RocketMQ 5.x metrics keys
        "metricsExporterType", "metricsPromExporterHost", "metricsPromExporterPort", "metricsLabel",
    }
)  # fmt: skip


@pytest.fixture(scope="module")
def pyproject() -> dict[str, Any]:
    with (REPO / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def scripts(pyproject: dict[str, Any]) -> dict[str, str]:
    return dict(pyproject["project"]["scripts"])


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def read_properties(text: str) -> dict[str, str]:
    """Java-properties ``key=value`` / ``key: value`` / ``key value`` lines; ``#`` and ``!`` start comments."""
    props: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        m = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)$", line)
        assert m, f"line {lineno} is not a property: {raw!r}"
        key, value = m.groups()
        assert key not in props, f"line {lineno}: {key} repeated"
        props[key] = value
    return props


def _command(service: dict[str, Any]) -> list[str]:
    cmd = service["command"]
    return cmd.split() if isinstance(cmd, str) else list(cmd)


# -- pyproject.toml -----------------------------------------------------------------------------------------------------


def test_console_scripts_are_rocketmq_names_pointing_at_module_functions(scripts: dict[str, str]) -> None:
    assert scripts == {
        "mqnamesrv": "namesrv.__main__:main",
        "mqbroker": "broker.__main__:main",
        "mqadmin": "client.admin.cli:main",
        "mqcontroller": "controller.__main__:main",
    }
    for target in scripts.values():
        assert re.fullmatch(r"[a-z_]+(\.[a-z_]+)*:[a-z_]+", target), target
        assert target.split(".", 1)[0] in PACKAGES


def test_package_discovery_ships_the_five_packages_and_not_tests_or_bench(pyproject: dict[str, Any]) -> None:
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    for pkg in PACKAGES:
        assert pkg in include and f"{pkg}.*" in include
    assert not any(p.split(".")[0] in {"tests", "bench", "scripts"} for p in include)
    for pkg in PACKAGES:  # a regular package, so discovery finds it and its subpackages
        assert (REPO / pkg / "__init__.py").is_file(), pkg


def test_dependencies_and_extras(pyproject: dict[str, Any]) -> None:
    project = pyproject["project"]
    assert project["name"] == "rocketq"
    assert project["requires-python"] == ">=3.11"
    deps = " ".join(project["dependencies"])
    for name in ("uvloop", "msgpack", "pydantic>=2", "structlog"):
        assert name in deps
    assert "sys_platform != 'win32'" in next(d for d in project["dependencies"] if d.startswith("uvloop"))
    extras = project["optional-dependencies"]
    assert any(d.startswith("pyspark>=4.2") for d in extras["spark"])
    assert any(d.startswith("rocketmq==0.4.4") for d in extras["test"])
    assert {"spark", "test", "dev"} <= extras.keys()


def test_pytest_config_declares_markers_and_a_timeout(pyproject: dict[str, Any]) -> None:
    ini = pyproject["tool"]["pytest"]["ini_options"]
    assert ini["asyncio_mode"] == "auto"
    assert ini["timeout"] > 0
    assert {m.split(":")[0] for m in ini["markers"]} >= {"spark", "compat"}


# -- docker-compose.yml, Dockerfile, conf/broker.conf -------------------------------------------------------------------


def test_compose_commands_are_the_console_scripts(compose: dict[str, Any], scripts: dict[str, str]) -> None:
    services = compose["services"]
    assert _command(services["namesrv"])[0] == "mqnamesrv"
    assert _command(services["broker"])[0] == "mqbroker"
    for service in services.values():
        if "profiles" not in service:  # the "monitoring" profile runs Prometheus and Grafana images
            assert _command(service)[0] in scripts


def test_compose_ports(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert [str(p) for p in services["namesrv"]["ports"]] == ["9876:9876", "5558:5558"]
    assert "10911:10911" in [str(p) for p in services["broker"]["ports"]]


def test_broker_points_at_the_namesrv_service_and_a_mounted_config(compose: dict[str, Any]) -> None:
    broker = compose["services"]["broker"]
    cmd = _command(broker)
    assert cmd[cmd.index("-n") + 1] == "namesrv:9876"
    assert broker["environment"]["NAMESRV_ADDR"] == "namesrv:9876"
    conf_path = cmd[cmd.index("-c") + 1]
    mounts = {}
    for volume in broker["volumes"]:
        source, target, *_ = volume.split(":")
        mounts[target] = source
    assert conf_path in mounts, f"{conf_path} is not a volume target"
    assert (REPO / mounts[conf_path]).resolve() == REPO / "conf" / "broker.conf"
    store_root = read_properties((REPO / "conf" / "broker.conf").read_text())["storePathRootDir"]
    assert store_root in mounts, "the broker's store is not on a volume"


def test_compose_services_have_healthchecks(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        assert "healthcheck" in service, name


def test_broker_conf_has_only_known_rocketmq_keys() -> None:
    props = read_properties((REPO / "conf" / "broker.conf").read_text())
    unknown = sorted(props.keys() - KNOWN_BROKER_KEYS)
    assert not unknown, f"unknown broker.conf keys: {unknown}"
    assert props["brokerClusterName"] == "DefaultCluster"
    assert props["brokerName"] == "broker-a"
    assert props["brokerId"] == "0"
    assert props["listenPort"] == "10911"
    assert props["storePathRootDir"] == "/home/rocketmq/store"
    assert props["flushDiskType"] == "ASYNC_FLUSH"
    assert props["autoCreateTopicEnable"] == "true"
    assert "brokerIP1" in props


def test_dockerfile_conventions() -> None:
    text = (REPO / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim\b", text, re.M)
    assert re.search(r"--uid 3000\b", text) and re.search(r"^USER rocketmq\b", text, re.M)
    expose = re.search(r"^EXPOSE (.+)$", text, re.M)
    assert expose and {"9876", "10911"} <= set(expose.group(1).split())
    assert "/home/rocketmq/store" in text and "/home/rocketmq/logs" in text


# -- CI ------------------------------------------------------------------------------------------------------------------


def _fake_executable(path: Path, body: str) -> Path:
    path.write_text(f"#!/usr/bin/env bash\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize(("pytest_rc", "expected"), [(0, 0), (1, 1), (2, 2), (5, 0)])
def test_run_pytest_passes_the_status_through_except_no_tests_collected(
    tmp_path: Path, pytest_rc: int, expected: int
) -> None:
    fake_python = _fake_executable(tmp_path / "python", f"exit {pytest_rc}")
    env = {**os.environ, "PYTHON": str(fake_python)}
    proc = subprocess.run([REPO / "scripts" / "run_pytest", "tests"], env=env, cwd=REPO, capture_output=True)
    assert proc.returncode == expected


@pytest.mark.parametrize(
    ("lint_rc", "pytest_rc", "ci_ok"), [(0, 5, True), (0, 0, True), (0, 1, False), (2, 0, False), (2, 5, False)]
)
def test_ci_run_lints_then_tests_and_treats_no_tests_collected_as_success(
    tmp_path: Path, lint_rc: int, pytest_rc: int, ci_ok: bool
) -> None:
    """.ci/run with `make` replaced: lint, then test through scripts/run_pytest with a pytest that exits rc."""
    calls = tmp_path / "calls"
    fake_python = _fake_executable(
        tmp_path / "python", f"echo '============ 3 passed in 0.01s ============'\nexit {pytest_rc}"
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_executable(
        bin_dir / "make",
        f'echo "$1" >> {calls}\n'
        f'if [ "$1" = test ]; then PYTHON={fake_python} exec scripts/run_pytest; fi\n'
        f"exit {lint_rc}",
    )
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "CI": "true"}
    proc = subprocess.run(
        ["bash", REPO / ".ci" / "run"], env=env, cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    assert calls.read_text().split() == ["lint", "test"]  # the tests run even when lint failed
    assert (proc.returncode == 0) is ci_ok, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().splitlines()[-1] == "============ 3 passed in 0.01s ============"


def test_ci_run_is_strict_bash_and_make_test_uses_run_pytest() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    assert "set -euo pipefail" in ci
    makefile = (REPO / "Makefile").read_text()
    recipe = re.search(r"^test: .*\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe and "$(RUN_PYTEST)" in recipe.group(1)
    assert re.search(r"^RUN_PYTEST := .*scripts/run_pytest", makefile, re.M)


@pytest.mark.parametrize("version", ['openjdk version "17.0.15" 2025-04-15', 'openjdk version "21" 2023-09-19'])
def test_ensure_java_accepts_java_17_and_newer_without_installing(tmp_path: Path, version: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_executable(bin_dir / "java", f"echo '{version}' >&2")
    _fake_executable(bin_dir / "apt-get", "echo apt-get must not run >&2; exit 99")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run([REPO / "scripts" / "ensure_java.sh"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert version in proc.stdout


@pytest.mark.parametrize("version", ['java version "1.8.0_392"', 'openjdk version "11.0.21" 2023-10-17', None])
def test_ensure_java_rejects_older_java_and_does_not_install_unless_root(tmp_path: Path, version: str | None) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if version is not None:
        _fake_executable(bin_dir / "java", f"echo '{version}' >&2")
    _fake_executable(bin_dir / "id", "echo 1000")
    _fake_executable(bin_dir / "apt-get", "echo apt-get must not run >&2; exit 99")
    if version is None:  # a PATH with the tools the script uses, and no java at all
        for tool in ("bash", "awk", "head"):
            found = shutil.which(tool)
            assert found, tool
            (bin_dir / tool).symlink_to(found)
        path = str(bin_dir)
    else:
        path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    proc = subprocess.run(
        [REPO / "scripts" / "ensure_java.sh"], env={**os.environ, "PATH": path}, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert "apt-get must not run" not in proc.stderr
    assert "openjdk-17-jre-headless" in proc.stderr
