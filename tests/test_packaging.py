"""The wheel holds every module and data file of the source tree: built as pip builds it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import ROOT

DATA = ("warcdeboil/py.typed", "warcdeboil/page/content_model.json",
        "warcdeboil/spark/log4j2.properties")


def test_the_wheel_holds_every_module_and_data_file(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True, timeout=600)
    [wheel] = tmp_path.glob("warcdeboil-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    tree = {p.relative_to(ROOT).as_posix() for p in (ROOT / "warcdeboil").rglob("*.py")}
    assert tree - names == set()
    assert set(DATA) - names == set()
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "scripts/", "docs/"))]
    # pass 1's walks and the filters' word codes, compiled where the machine has a C compiler
    # (CI's has)
    if shutil.which("cc") or shutil.which("gcc"):
        for module in ("warcdeboil/page/_walk.", "warcdeboil/corpus/_words."):
            assert [n for n in names if n.startswith(module) and n.endswith(".so")], module


def test_a_machine_without_a_c_compiler_still_gets_a_wheel(tmp_path: Path) -> None:
    # The source tree without what builds leave in it (an in-place build's module would ride
    # along as package data), built with a compiler that always fails: the extension is
    # optional, so the wheel is made without it, and warcdeboil takes its Python path there.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".tox", "build", "dist", "*.egg-info", "__pycache__", "*.so", "*.pyd", "site"))
    env = {**os.environ, "CC": "false"}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w",
                    str(tmp_path), str(source)], check=True, capture_output=True, timeout=600,
                   env=env)
    [wheel] = tmp_path.glob("warcdeboil-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "warcdeboil/page/walker.py" in names
    assert not [n for n in names if n.endswith((".so", ".pyd"))]
