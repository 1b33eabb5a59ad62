"""The build: setuptools (metadata in pyproject.toml), plus, when ``ROCKETQ_COMPILE=1``, the modules listed in
pyproject.toml's ``[tool.rocketq.compile]`` compiled by mypyc into C extension modules (one shared library,
``rocketq__mypyc``, and one small extension module beside each compiled ``.py``). Without it the build is the pure
Python package. mypyc comes with mypy: ``setup_requires`` asks pip's isolated build environment for it only when
compiling (setuptools' PEP 517 backend reports it as a build requirement); ``make compile`` uses the venv's own.

| ROCKETQ_COMPILE | build                                                   | used by                         |
|-----------------|---------------------------------------------------------|---------------------------------|
| unset or 0      | pure Python (``py3-none-any`` wheel, editable installs) | ``make venv``, ``pip install .`` |
| 1               | the listed modules compiled (a platform wheel)          | ``make dist``, ``make compile``  |
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
# the mypy (mypyc) the compiled build is made with: the same major line as the dev extra's type checker
MYPYC_REQUIREMENT = "mypy>=1.10"


def compiled_paths() -> list[str]:
    """The source files of ``[tool.rocketq.compile] modules`` (dotted module name -> why it is compiled)."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        modules: dict[str, str] = tomllib.load(f)["tool"]["rocketq"]["compile"]["modules"]
    return [str(Path(*name.split(".")).with_suffix(".py")) for name in modules]


if os.environ.get("ROCKETQ_COMPILE", "0") not in ("", "0"):
    try:
        from mypyc.build import mypycify
    except ImportError:  # the first pass of pip's PEP 517 build: report mypy as a build requirement
        setup(setup_requires=[MYPYC_REQUIREMENT])
    else:
        opt = os.environ.get("ROCKETQ_COMPILE_OPT", "3")
        # mypy reads its [tool.mypy] settings; the overrides for modules outside this build are not "unused" here
        args = ["--no-warn-unused-configs", *compiled_paths()]
        setup(ext_modules=mypycify(args, opt_level=opt, group_name="rocketq"))
else:
    setup()
