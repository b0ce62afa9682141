"""The README and the documentation site say what the code does: the front door is short and
its commands and sample are real, the generated references cover every command, option and
field, every link resolves and every module path named imports."""

from __future__ import annotations

import gzip
import importlib
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import FIXTURES, ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
INSTALL_AND_RUN = ("python3 -m pip install . && warcdeboil clean fixtures/crawl/ -o cleaned/ "
                   "--format jsonl")
TEST_COMMAND = "python3 -m pip install tox && tox -e py"


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def test_the_readme_is_a_front_door() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300
    first_screen = "\n".join(lines[:24])
    assert INSTALL_AND_RUN in first_screen
    assert TEST_COMMAND in first_screen


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "tox -e py" in ci and "pip install" in ci and '"tox' in ci
    assert "tox -e docs" in ci
    tox = (ROOT / "tox.ini").read_text(encoding="utf-8")
    docs_env = tox.split("[testenv:docs]", 1)[1].split("\n[", 1)[0]
    assert "mkdocs build --strict" in docs_env and "docs/requirements.txt" in docs_env


def test_the_readme_sample_is_what_the_first_command_writes(tmp_path: Path) -> None:
    from warcdeboil import Options, OutputFormat, clean

    text = README.read_text(encoding="utf-8")
    block = re.search(r"```console\n\$ zcat cleaned/(\S+) \| head -1 \| python3 -m json.tool "
                      r"\| head -(\d+)\n(.*?)```", text, re.S)
    assert block is not None
    name, count, shown = block.group(1), int(block.group(2)), block.group(3)
    clean([FIXTURES / "crawl"], tmp_path, Options(format=OutputFormat.JSONL))
    first = gzip.decompress((tmp_path / name).read_bytes()).splitlines()[0]
    # python3 -m json.tool indents by 4 and keeps non-ASCII escaped
    made = json.dumps(json.loads(first), indent=4).splitlines()[:count]
    assert shown.splitlines() == made


def test_the_cli_reference_has_every_command_and_option() -> None:
    import typer.main

    from warcdeboil.cli import app

    reference = _hooks().cli_reference()
    root = typer.main.get_command(app)

    def walk(path: list[str], command: object) -> None:
        if hasattr(command, "list_commands"):
            ctx = command.context_class(command)  # type: ignore[attr-defined]
            for name in command.list_commands(ctx):
                walk([*path, name], command.get_command(ctx, name))  # type: ignore[attr-defined]
            if len(path) > 1:
                return
        assert f"## `{' '.join(path)}`" in reference
        section = reference.split(f"## `{' '.join(path)}`", 1)[1].split("\n## ", 1)[0]
        for param in command.params:  # type: ignore[attr-defined]
            if param.name == "help":
                continue
            shown = param.opts[0] if param.param_type_name == "option" else param.name.upper()
            assert f"`{shown}`" in section, (path, shown)

    walk(["warcdeboil"], root)
    assert "warcdeboil lm train" in reference


def test_the_field_reference_has_every_field() -> None:
    from warcdeboil.output.schema import FIELDS

    reference = _hooks().fields_reference()
    rows = [line for line in reference.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == [field.name for field in FIELDS]


def test_generated_pages_keep_their_markers() -> None:
    hooks = _hooks()
    assert hooks.MARKERS["cli"] in (DOCS / "cli.md").read_text(encoding="utf-8")
    assert hooks.MARKERS["fields"] in (DOCS / "fields.md").read_text(encoding="utf-8")
    page = hooks.on_page_markdown(f"x\n{hooks.MARKERS['fields']}\n")
    assert "`url_canonical`" in page and hooks.MARKERS["fields"] not in page


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = set(re.findall(r":\s*([\w-]+\.md)\s*$", config, re.M))
    assert nav == {p.name for p in DOCS.glob("*.md")}


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_every_local_link_resolves(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if not (page.parent / path).exists():
            broken.append(target)
    assert broken == []


def _resolves(dotted: str) -> bool:
    """Whether ``a.b.c`` names a module, or an attribute of the longest module it starts with."""
    parts = dotted.split(".")
    obj: object = importlib.import_module(parts[0])
    for k in range(1, len(parts)):
        name = ".".join(parts[: k + 1])
        try:
            obj = importlib.import_module(name)
            continue
        except ModuleNotFoundError:
            pass
        if not hasattr(obj, parts[k]):
            return False
        obj = getattr(obj, parts[k])
    return True


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_every_module_path_named_exists(page: Path) -> None:
    """Paths in the docs are the new ones; an old one (kept importable, with a warning, for a
    release) only in a paragraph that says it is deprecated."""
    import warcdeboil

    missing, old = [], []
    for paragraph in page.read_text(encoding="utf-8").split("\n\n"):
        for dotted in re.findall(r"\bwarcdeboil(?:\.[a-z_][a-z0-9_]*)+", paragraph):
            if dotted.split(".")[1] in warcdeboil._MOVED:
                if "deprecat" not in paragraph.lower():
                    old.append(dotted)
            elif not _resolves(dotted):
                missing.append(dotted)
    assert (missing, old) == ([], [])


def test_importing_the_hooks_does_not_build_anything() -> None:
    before = set(sys.modules)
    _hooks()
    assert "mkdocs" not in set(sys.modules) - before


def test_the_readme_api_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's first Python example, with two pages of one site for its html_a, html_b."""
    block = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block is not None and "Deboiler" in block.group(1)
    nav = "<nav><a href='/'>Home</a> <a href='/news'>News</a> <a href='/about'>About</a></nav>"
    html_a, html_b = (f"<html><body>{nav}<article><h1>{t}</h1><p>{t} happened today, and "
                      "people who saw it told the paper how it went.</p></article></body></html>"
                      for t in ("Floods", "Fires"))
    exec(block.group(1), {"html_a": html_a, "html_b": html_b})  # noqa: S102
    printed = capsys.readouterr().out
    assert printed.startswith("https://example.com/a  en Floods\nFloods happened today")
    assert "\nhttps://example.com/b  en Fires\nFires happened today" in printed
    assert "Home" not in printed
