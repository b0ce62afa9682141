"""The package's shape: no import cycle between its files, subpackages layered from the archive
up to the faces, and a short top level (docs/how-it-works.md draws the layers).

Imports are read from the source with ``ast``, wherever they stand (inside functions too), but
for those under ``if TYPE_CHECKING:``, which never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "warcdeboil"

# From the bottom up: a module may import from its own layer and the layers below it only.
LAYERS: list[tuple[str, ...]] = [
    ("warcdeboil._version", "warcdeboil.errors", "warcdeboil.sidefile"),
    ("warcdeboil.warc",),
    ("warcdeboil.page",),
    ("warcdeboil.site",),
    ("warcdeboil.dedup",),
    ("warcdeboil.urlrules",),
    ("warcdeboil.lm",),
    ("warcdeboil.corpus",),
    ("warcdeboil.output",),
    ("warcdeboil.run",),
    ("warcdeboil.report", "warcdeboil.evaluate"),
    ("warcdeboil.spark", "warcdeboil.api"),
    # The spark-submit driver script is a face of the command line, as the CLI is.
    ("warcdeboil.cli", "warcdeboil", "warcdeboil.__main__", "warcdeboil.spark.driver",
     "warcdeboil.spark.__main__"),
]
MAX_TOP_LEVEL_MODULES = 15


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:``."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skip.update(id(n) for n in ast.walk(inner))
    return skip


def imports_of(path: Path, name: str, modules: set[str]) -> set[str]:
    """The package's modules that the module ``name`` at ``path`` imports (for each import,
    the most specific module it names)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_only(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                found.add(sub if sub in modules else source)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in modules and m != name}


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, for the package under ``root``."""
    paths = sorted((root / "warcdeboil").rglob("*.py"))
    names = {p: module_name(p, root) for p in paths}
    modules = set(names.values())
    return {names[p]: imports_of(p, names[p], modules) for p in paths}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)) is not None:
            return cycle
    return None


def layer_of(module: str) -> int:
    best, depth = -1, -1
    for i, layer in enumerate(LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = i, len(prefix)
    return best


def test_the_package_has_no_import_cycle() -> None:
    assert find_cycle(import_graph()) is None


def test_the_cycle_finder_finds_cycles(tmp_path: Path) -> None:
    # A cycle through an import inside a function counts; one under TYPE_CHECKING does not.
    pkg = tmp_path / "warcdeboil"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub.b import x\n")
    (pkg / "sub" / "b.py").write_text("def x():\n    from ..a import y\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\n"
                              "if TYPE_CHECKING:\n    from .d import z\n")
    (pkg / "d.py").write_text("from . import c\n")
    graph = import_graph(tmp_path)
    assert graph["warcdeboil.d"] == {"warcdeboil.c"}
    assert find_cycle(graph) == ["warcdeboil.a", "warcdeboil.sub.b", "warcdeboil.a"]
    graph["warcdeboil.sub.b"].clear()
    assert find_cycle(graph) is None


def test_every_module_has_a_layer() -> None:
    assert [m for m in import_graph() if layer_of(m) < 0] == []


@pytest.mark.parametrize("module", sorted(import_graph()))
def test_no_module_imports_from_a_layer_above_its_own(module: str) -> None:
    graph = import_graph()
    above = sorted(m for m in graph[module] if layer_of(m) > layer_of(module))
    assert above == []


def test_the_top_level_stays_short() -> None:
    top = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(top) <= MAX_TOP_LEVEL_MODULES, sorted(top)


# The modules that moved into subpackages keep their old paths for one release --------------


@pytest.fixture
def forget_old_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test imports the old paths afresh (an import is cached in sys.modules)."""
    import sys

    import warcdeboil

    for old in ("reader", "pipeline", "lm_filter"):
        monkeypatch.delitem(sys.modules, f"warcdeboil.{old}", raising=False)
        if old in vars(warcdeboil):  # hasattr would import it: the package's __getattr__
            monkeypatch.delattr(warcdeboil, old)


def test_an_old_module_path_imports_the_moved_module(forget_old_paths: None) -> None:
    import warcdeboil.warc.reader

    with pytest.warns(DeprecationWarning, match=r"warcdeboil\.reader is now warcdeboil\.warc"):
        import warcdeboil.reader as old
    assert old is warcdeboil.warc.reader
    assert old.__spec__.name == "warcdeboil.warc.reader"
    with pytest.warns(DeprecationWarning):
        from warcdeboil.lm_filter import LmSettings
    from warcdeboil.lm import scoring

    assert LmSettings is scoring.LmSettings


def test_an_old_path_of_a_split_module_finds_each_name(forget_old_paths: None) -> None:
    from warcdeboil.run.local import clean
    from warcdeboil.run.options import Options
    from warcdeboil.run.summary import RunSummary

    with pytest.warns(DeprecationWarning, match="warcdeboil.run.local and"):
        import warcdeboil.pipeline as pipeline
    assert (pipeline.Options, pipeline.RunSummary, pipeline.clean) == (Options, RunSummary, clean)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        pipeline.nothing  # noqa: B018


def test_no_module_is_left_at_an_old_path() -> None:
    import warcdeboil

    left = [old for old in warcdeboil._MOVED if (PACKAGE / f"{old}.py").exists()]
    moved_to = {target for targets in warcdeboil._MOVED.values() for target in targets}
    missing = [t for t in moved_to if not (ROOT / (t.replace(".", "/") + ".py")).exists()]
    assert (left, missing) == ([], [])


def test_a_name_that_never_was_is_no_module() -> None:
    with pytest.raises(ModuleNotFoundError):
        import warcdeboil.nothing_here  # noqa: F401
