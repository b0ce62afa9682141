"""The command lines the benchmarks write into their results files name no path of the machine
they ran on: the shared data as ``../shared``, any other absolute path by its name."""

from __future__ import annotations

import os
from pathlib import Path

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


def test_shared_data_given_relative_to_elsewhere_is_recorded_as_shared(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    peers = load_script("peers_benchmark", ROOT / "benchmarks" / "peers.py")
    shared = ROOT.parent / "shared"
    monkeypatch.chdir(tmp_path)
    # from a directory elsewhere, the shared data by a path relative to it
    relative = os.path.relpath(shared / "eval" / "dragnet.warc.gz", tmp_path)
    command = peers.recorded_command("benchmarks/floor.py", [relative, "out/x.json"])
    assert command == "python benchmarks/floor.py ../shared/eval/dragnet.warc.gz out/x.json"


def test_floor_tables_give_each_tool_as_multiples_of_both_floors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))  # floor.py imports peers.py, speed.py
    floor = load_script("floor_benchmark", ROOT / "benchmarks" / "floor.py")
    views = {"x.warc.gz": {
        "floor": {"pages_per_cpu_second": 1000.0, "pages": 10},
        "floor-2pass": {"pages_per_cpu_second": 400.0, "pages": 10},
        "warcdeboil-warc": {"pages_per_cpu_second": 200.0, "pages": 10},
        "deboiler": {"pages_per_cpu_second": 100.0, "pages": 10},
    }}
    text = floor.table(views, "warcdeboil-warc", ["deboiler"], list(views["x.warc.gz"]), True)
    header, _, row = text.splitlines()[:3]
    assert "(×floor / ×two-pass)" in header
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    # the floor, the two-pass floor (×floor), ours and the peer (×floor / ×two-pass), the ratio
    assert cells == ["x.warc.gz (10)", "1000", "400 (2.5×)", "200 (5.0× / 2.0×)",
                     "100 (10.0× / 4.0×)", "2.0×"]


def test_alongside_tables_give_medians_ranges_and_ratios(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    alongside = load_script("alongside_benchmark", ROOT / "benchmarks" / "alongside.py")

    def run(speed: float, peak: float) -> dict[str, float]:
        return {"pages": 10, "pages_per_cpu_second": speed, "peak_rss_mb": peak}

    figures = {"x.warc.gz": {"warc": {"old": [run(100, 50), run(110, 51), run(90, 50)],
                                      "new": [run(200, 52), run(190, 52), run(230, 53)]}}}
    text = alongside.table(figures, ["old", "new"], True)
    row = text.splitlines()[2]
    assert [c.strip() for c in row.strip("|").split("|")] == [
        "x (10)", "warc", "100 (90-110), 51", "200 (190-230), 53", "2.00×"]
