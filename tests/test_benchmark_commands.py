"""The command lines the benchmarks write into their results files name no path of the machine
they ran on: the shared data as ``../shared``, any other absolute path by its name."""

from __future__ import annotations

import pytest
from conftest import ROOT, load_script


def test_recorded_commands_name_no_path_of_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))  # peers.py imports speed.py
    peers = load_script("peers_benchmark", ROOT / "benchmarks" / "peers.py")
    shared = ROOT.parent / "shared"
    command = peers.recorded_command("benchmarks/floor.py", [
        str(shared / "eval" / "dragnet.warc.gz"), "../shared/eval/l3s-gn1.warc.gz",
        "--small", "200", "--json", "/somewhere/on/this/machine/floor.json",
        "--cache=/home/someone/peers cache"])
    assert command == ("python benchmarks/floor.py ../shared/eval/dragnet.warc.gz "
                       "../shared/eval/l3s-gn1.warc.gz --small 200 --json floor.json "
                       "'--cache=peers cache'")
