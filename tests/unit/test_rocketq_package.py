"""The ``rocketq`` import name: the same objects as ``client``/``client.admin``/``client.sync``/``spark_connector``,
found at run time even when the program's directory holds its own ``client.py`` (or ``protocol/``), a clear
ImportError when a foreign ``client`` module is already imported, and typed for mypy from a project outside the
repository (the dev venv's editable install is a static ``.pth``, which mypy reads; the wheel is tested in
``tests/integration/test_wheel_install.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import client
import client.admin.admin_client
import client.sync
import rocketq
import rocketq.admin
import rocketq.spark
import rocketq.sync
import spark_connector
from client.config import ClientConfig, PullConsumerConfig, PushConsumerConfig
from client.consumer.options import PullConsumerOptions, PushConsumerOptions

REPO = Path(__file__).resolve().parents[2]


def test_rocketq_names_are_the_sdk_objects() -> None:
    assert set(client.__all__) <= set(rocketq.__all__)
    for name in client.__all__:
        assert getattr(rocketq, name) is getattr(client, name), name
    assert rocketq.admin.AdminClient is client.admin.admin_client.AdminClient
    assert rocketq.sync.Producer is client.sync.Producer and rocketq.sync.PushConsumer is client.sync.PushConsumer
    assert rocketq.spark.OptionError is spark_connector.OptionError
    assert rocketq.spark.DataLossError is spark_connector.DataLossError
    assert (REPO / "rocketq" / "py.typed").is_file()


def test_consumer_options_are_the_config_fields() -> None:
    client_keys = set(ClientConfig.model_fields) - {"namesrv_addr"}
    assert set(PushConsumerOptions.__annotations__) == client_keys | set(PushConsumerConfig.model_fields)
    assert set(PullConsumerOptions.__annotations__) == client_keys | set(PullConsumerConfig.model_fields)


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH puts this checkout after the script's directory, as an installed rocketq would be
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_a_project_client_py_does_not_shadow_the_sdk(tmp_path: Path) -> None:
    (tmp_path / "client.py").write_text('raise SystemExit("the project\'s client.py was imported")\n')
    (tmp_path / "protocol").mkdir()
    (tmp_path / "protocol" / "__init__.py").write_text('raise SystemExit("the project\'s protocol/ was imported")\n')
    (tmp_path / "app.py").write_text(
        "from rocketq import Message, Producer\n"
        "import client, protocol\n"
        "print(Producer.__module__, Message.__module__, client.__file__, protocol.__file__)\n"
    )
    out = _run(tmp_path, "app.py")
    assert out.returncode == 0, out.stderr
    producer_mod, message_mod, client_file, protocol_file = out.stdout.split()
    assert (producer_mod, message_mod) == ("client.producer.producer", "client.message")
    assert Path(client_file) == REPO / "client" / "__init__.py"
    assert Path(protocol_file) == REPO / "protocol" / "__init__.py"


def test_a_script_named_client_py_can_use_rocketq(tmp_path: Path) -> None:
    (tmp_path / "client.py").write_text("from rocketq import Producer\nprint(Producer.__qualname__)\n")
    out = _run(tmp_path, "client.py")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Producer"


def test_a_foreign_client_already_imported_is_named_in_the_error(tmp_path: Path) -> None:
    (tmp_path / "client.py").write_text("X = 1\n")
    (tmp_path / "app.py").write_text("import client\nimport rocketq\n")
    out = _run(tmp_path, "app.py")
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: rocketq needs the package name 'client'"), out.stderr
    assert str(tmp_path / "client.py") in last


def test_mypy_finds_rocketq_from_another_project(tmp_path: Path) -> None:
    """mypy --strict in a directory outside the repository, with nothing but the venv's install to go on."""
    (tmp_path / "app.py").write_text(
        "from rocketq import Message, Producer, PushConsumer, SendResult\n"
        "from rocketq.admin import AdminClient\n\n\n"
        "async def main() -> SendResult:\n"
        '    PushConsumer("g", orderly="yes")\n'
        '    async with AdminClient("127.0.0.1:9876"):\n'
        "        pass\n"
        '    async with Producer("g", "127.0.0.1:9876", send_timeout_ms=100) as p:\n'
        '        return await p.send(Message("T", b"x"))\n'
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "app.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    # exactly one error: the mistyped consumer option (so Producer, SendResult and AdminClient resolved, not Any)
    assert 'Argument "orderly" to "PushConsumer" has incompatible type "str"; expected "bool"' in out.stdout, out.stdout
    assert out.stdout.count("error:") == 1, out.stdout
