"""warcdeboil: clean web archives by learning each site's boilerplate and removing it.

Two passes over WARC files with bounded memory: pass 1 indexes every HTML page's subtree hashes,
the fit compares each page with its URL-sorted neighbour to learn each site's template, pass 2
rewrites the archives without it. The subpackages follow the design, from the bottom up:
:mod:`.warc` (archives), :mod:`.page` (one page), :mod:`.site` (the site model), :mod:`.dedup`,
:mod:`.urlrules` and :mod:`.lm` (the crawl-level stages), :mod:`.output` (the formats),
:mod:`.run` (plan, passes, the local engine), :mod:`.report`, :mod:`.spark` and :mod:`.cli`.
In Python::

    from warcdeboil import clean
    summary = clean(["crawl/"], "cleaned/")
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from typing import TYPE_CHECKING

from ._version import __version__
from .api import CleanPage, Deboiler
from .errors import (
    ConfigError,
    InputError,
    PayloadError,
    RandomAccessError,
    RecordError,
    WarcDeboilError,
    WorkDirError,
)
from .output.formats import OutputFormat
from .run.local import apply_profiles, build_index, clean, fit_profiles
from .run.options import Options
from .run.summary import RunSummary
from .site.fit import FitParams, SiteProfile
from .site.sitekey import SiteKeyMode
from .warc.compression import Codec
from .warc.reader import WarcRecord, iter_records, read_record_at

if TYPE_CHECKING:
    from .lm import LanguageModel
    from .urlrules import UrlRules

__all__ = [
    "CleanPage",
    "Codec",
    "ConfigError",
    "Deboiler",
    "FitParams",
    "InputError",
    "LanguageModel",
    "Options",
    "OutputFormat",
    "PayloadError",
    "RandomAccessError",
    "RecordError",
    "RunSummary",
    "SiteKeyMode",
    "SiteProfile",
    "UrlRules",
    "WarcDeboilError",
    "WarcRecord",
    "WorkDirError",
    "__version__",
    "apply_profiles",
    "build_index",
    "clean",
    "fit_profiles",
    "iter_records",
    "read_record_at",
]

# The modules that stood at the top level in 0.1.0, and where their names live now. Their old
# paths still import, with a DeprecationWarning, for one release: ``warcdeboil.reader`` is
# ``warcdeboil.warc.reader`` itself; a module that was split in two or more (``apply``,
# ``pipeline``) becomes a stand-in that finds each name in the modules it went to.
_MOVED: dict[str, tuple[str, ...]] = {
    "reader": ("warcdeboil.warc.reader",),
    "fields": ("warcdeboil.warc.fields",),
    "names": ("warcdeboil.warc.names",),
    "spill": ("warcdeboil.warc.spill",),
    "remote": ("warcdeboil.warc.remote",),
    "compression": ("warcdeboil.warc.compression",),
    "zstdio": ("warcdeboil.warc.zstdio",),
    "httpbody": ("warcdeboil.warc.httpbody",),
    "writer": ("warcdeboil.warc.writer",),
    "recompress": ("warcdeboil.warc.recompress",),
    "tally": ("warcdeboil.warc.tally",),
    "pages": ("warcdeboil.page.html",),
    "dom": ("warcdeboil.page.dom",),
    "content": ("warcdeboil.page.content",),
    "markdown": ("warcdeboil.page.markdown",),
    "language": ("warcdeboil.page.language",),
    "sitekey": ("warcdeboil.site.sitekey",),
    "index": ("warcdeboil.site.index",),
    "pagestore": ("warcdeboil.site.pagestore",),
    "fit": ("warcdeboil.site.fit",),
    "profiles": ("warcdeboil.site.profiles",),
    "duplicates": ("warcdeboil.dedup.verdicts",),
    "doomedstore": ("warcdeboil.dedup.doomed",),
    "lm_filter": ("warcdeboil.lm.scoring",),
    "lm_fit": ("warcdeboil.lm.stage",),
    "lm_commands": ("warcdeboil.cli.lm",),
    "cleanstore": ("warcdeboil.lm.cleaned",),
    "unitstore": ("warcdeboil.lm.unitstore",),
    "provenance": ("warcdeboil.output.provenance",),
    "relink": ("warcdeboil.output.relink",),
    "plan": ("warcdeboil.run.plan",),
    "selection": ("warcdeboil.run.selection",),
    "scan": ("warcdeboil.run.scan",),
    "meter": ("warcdeboil.run.meter",),
    "signals": ("warcdeboil.run.signals",),
    "apply": ("warcdeboil.run.apply", "warcdeboil.site.clean", "warcdeboil.output.formats",
              "warcdeboil.output.sink", "warcdeboil.output.jsonl"),
    "pipeline": ("warcdeboil.run.local", "warcdeboil.run.options", "warcdeboil.run.summary"),
}


def _moved(old: str) -> types.ModuleType:
    """The module (or the stand-in for the modules) that ``warcdeboil.<old>`` became."""
    targets = _MOVED[old]
    where = targets[0] if len(targets) == 1 else " and ".join(targets)
    warnings.warn(f"warcdeboil.{old} is now {where}; the old name goes in the next release",
                  DeprecationWarning, stacklevel=_caller_level())
    if len(targets) == 1:
        return importlib.import_module(targets[0])
    standin = types.ModuleType(f"warcdeboil.{old}", f"Moved to {where}.")

    def lookup(name: str) -> object:
        for target in targets:
            module = importlib.import_module(target)
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"module 'warcdeboil.{old}' has no attribute {name!r}")

    standin.__getattr__ = lookup  # type: ignore[method-assign]
    return standin


def _caller_level() -> int:
    """How far up the stack the first frame outside this file and the import machinery is,
    as ``warnings.warn`` counts (so the warning names the user's line)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and (frame.f_code.co_filename == __file__
                                 or "importlib" in frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Lets ``import warcdeboil.<old>`` find the module that took its place. Consulted only
    after the usual finders fail, and only for the names in ``_MOVED``."""

    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        package, _, old = fullname.rpartition(".")
        if package != __name__ or old not in _MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _moved(spec.name.rpartition(".")[2])
        self._spec = module.__spec__  # the import system is about to overwrite it
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self._spec  # the moved module keeps its own name and spec


if not any(type(finder).__name__ == "_MovedModules" for finder in sys.meta_path):
    sys.meta_path.append(_MovedModules())


def __getattr__(name: str) -> object:
    # The language model needs numpy, and URL rules a package of their own: imported when
    # asked for, so that the command line and the cleaning library start without them.
    if name == "LanguageModel":
        from .lm import LanguageModel

        return LanguageModel
    if name == "UrlRules":
        from .urlrules import UrlRules

        return UrlRules
    if name in _MOVED:
        return _moved(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
