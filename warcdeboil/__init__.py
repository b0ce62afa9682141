"""warcdeboil: clean web archives by learning each site's boilerplate and removing it.

Two passes over WARC files with bounded memory: pass 1 indexes every HTML page's subtree hashes,
the fit compares each page with its URL-sorted neighbour to learn each site's template, pass 2
rewrites the archives without it. See README.md for the command line; in Python::

    from warcdeboil import clean
    summary = clean(["crawl/"], "cleaned/")
"""

from typing import TYPE_CHECKING

from .api import CleanPage, Deboiler
from .apply import OutputFormat
from .compression import Codec
from .errors import (
    ConfigError,
    InputError,
    PayloadError,
    RandomAccessError,
    RecordError,
    WarcDeboilError,
    WorkDirError,
)
from .fit import FitParams, SiteProfile
from .pipeline import Options, RunSummary, apply_profiles, build_index, clean, fit_profiles
from .reader import WarcRecord, iter_records, read_record_at
from .sitekey import SiteKeyMode

if TYPE_CHECKING:
    from .lm import LanguageModel
    from .urlrules import UrlRules

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # The language model needs numpy, and URL rules a package of their own: imported when
    # asked for, so that the command line and the cleaning library start without them.
    if name == "LanguageModel":
        from .lm import LanguageModel

        return LanguageModel
    if name == "UrlRules":
        from .urlrules import UrlRules

        return UrlRules
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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
