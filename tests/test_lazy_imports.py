"""What a run imports: a template-mode WARC run loads neither the content model, the language
identifier, the perplexity filter nor URL rules (their import is a fixed cost of every process,
issue 21), and the package's public names still resolve when asked for."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, ROOT

# Modules a template-mode run with WARC output has no use for.
_UNUSED = ("warcdeboil.page.content", "warcdeboil.page.language", "warcdeboil.lm.scoring",
           "warcdeboil.lm.cleaned", "warcdeboil.page.markdown", "warcdeboil.urlrules",
           "warcdeboil.lm", "numpy")

# Runs the command line in this process, then prints which modules it imported.
_RUN = """
import json, runpy, sys
sys.argv = ["warcdeboil"] + sys.argv[1:]
try:
    runpy.run_module("warcdeboil", run_name="__main__", alter_sys=True)
except SystemExit as stop:
    code = stop.code
else:
    code = 0
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _run(*args: str) -> tuple[int, set[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _RUN, *args], capture_output=True, text=True,
                          timeout=120, env=env, check=True)
    report = json.loads(done.stdout.splitlines()[-1])
    return report["code"], set(report["modules"])


def _loaded(modules: set[str], name: str) -> bool:
    return name in modules or any(m.startswith(name + ".") for m in modules)


def test_template_warc_run_imports_no_content_modules(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, modules = _run("clean", str(FIXTURES / "crawl"), "-o", str(out), "--format", "warc",
                         "-j", "1", "-q")
    assert code == 0
    written = sorted(out.glob("*.warc.gz"))
    assert len(written) == 2
    with gzip.open(written[0], "rb") as f:
        assert f.read(5) == b"WARC/"
    assert "warcdeboil.run.apply" in modules and "warcdeboil.page.dom" in modules
    assert [name for name in _UNUSED if _loaded(modules, name)] == []


def test_content_jsonl_run_imports_them(tmp_path: Path) -> None:
    # The check above can fail: a run that needs these modules has them in sys.modules.
    code, modules = _run("clean", str(FIXTURES / "crawl"), "-o", str(tmp_path / "out"),
                         "--format", "jsonl", "--mode", "content", "-j", "1", "-q")
    assert code == 0
    for name in ("warcdeboil.page.content", "warcdeboil.page.language", "warcdeboil.page.markdown"):
        assert name in modules


def test_public_names_resolve_lazily() -> None:
    script = (
        "import json, sys, warcdeboil\n"
        "before = sorted(m for m in sys.modules if m.startswith('warcdeboil.'))\n"
        "names = {n: getattr(warcdeboil, n).__module__ if n != '__version__' else 'str'"
        " for n in warcdeboil.__all__}\n"
        "print(json.dumps({'before': before, 'names': names,"
        " 'deboiler': warcdeboil.Deboiler.__name__}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=env, check=True)
    report = json.loads(done.stdout)
    assert not [m for m in report["before"] if m.startswith(
        ("warcdeboil.urlrules", "warcdeboil.lm", "warcdeboil.page.content"))]
    names = report["names"]
    assert names["UrlRules"] == "warcdeboil.urlrules.rules"
    assert names["LanguageModel"].startswith("warcdeboil.lm")
    assert names["Deboiler"] == "warcdeboil.api"
    assert report["deboiler"] == "Deboiler"
    assert set(names) == set(__import__("warcdeboil").__all__)


_THREADS = """
import json, os, runpy, sys
import warcdeboil.cli
imported_first = "numpy" in sys.modules
sys.argv = ["warcdeboil"] + sys.argv[1:]
try:
    runpy.run_module("warcdeboil", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
print(json.dumps({"numpy": "numpy" in sys.modules, "imported_first": imported_first,
                  "threads": os.environ.get("OPENBLAS_NUM_THREADS")}))
"""


def test_blas_runs_one_thread_unless_the_user_chose(tmp_path: Path) -> None:
    """The command line sets OpenBLAS to one thread before numpy is imported (its threads
    spin for nothing: no run calls BLAS), and leaves a user's own setting alone."""
    for given, expected in ((None, "1"), ("3", "3")):
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        env["PYTHONPATH"] = str(ROOT)
        if given is not None:
            env["OPENBLAS_NUM_THREADS"] = given
        done = subprocess.run(
            [sys.executable, "-c", _THREADS, "clean", str(FIXTURES / "crawl"), "-o",
             str(tmp_path / f"out{given}"), "--format", "jsonl", "--mode", "content", "-j", "1",
             "-q"], capture_output=True, text=True, timeout=120, env=env, check=True)
        report = json.loads(done.stdout.splitlines()[-1])
        assert report == {"numpy": True, "imported_first": False, "threads": expected}
