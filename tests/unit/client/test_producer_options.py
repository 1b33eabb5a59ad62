"""``Producer``'s keyword options are typed (``ProducerOptions``): the TypedDict has exactly the config models'
fields, and mypy --strict reports a misspelt option in a user's program (the SDK ships ``py.typed``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from client.config import ClientConfig, ProducerConfig
from client.producer.options import ProducerOptions

REPO = Path(__file__).resolve().parents[3]


def test_the_options_are_the_config_fields() -> None:
    fields = (set(ClientConfig.model_fields) | set(ProducerConfig.model_fields)) - {"namesrv_addr"}
    assert set(ProducerOptions.__annotations__) == fields


def test_mypy_strict_flags_a_misspelt_option(tmp_path: Path) -> None:
    user = tmp_path / "app.py"
    user.write_text(
        "from client import Message, Producer\n\n\n"
        "async def main() -> None:\n"
        '    async with Producer("g", "127.0.0.1:9876", send_timout_ms=100) as p:\n'
        '        await p.send(Message("T", b"x"))\n'
        '    Producer("g", send_timeout_ms="3s")\n'
    )
    env = {**os.environ, "MYPYPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent", str(user)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )  # fmt: skip
    assert 'Unexpected keyword argument "send_timout_ms"' in out.stdout, out.stdout
    assert 'Argument "send_timeout_ms" to "Producer" has incompatible type "str"' in out.stdout, out.stdout
    assert out.stdout.count("error:") == 2, out.stdout
