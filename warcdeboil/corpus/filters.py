"""The quality filters by name, and the flags of a page: ``FILTER:REASON`` for each reason a
filter would drop it.

>>> filters = QualityFilters(names=("c4_quality", "fineweb_quality"))
>>> filters.flags("Buy now\\nBuy now\\nBuy now")
['c4_quality:few_sentences', 'fineweb_quality:line_punct_ratio', \
'fineweb_quality:short_line_ratio', 'fineweb_quality:char_dup_ratio', \
'fineweb_quality:list_ratio']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ConfigError
from ..page.language import primary_subtag
from .c4 import c4_quality
from .codes import WordCache
from .config import QualityConfig
from .fineweb import fineweb_quality
from .gopher import gopher_quality, gopher_repetition
from .page import PageText

__all__ = ["FILTERS", "QualityFilters", "filter_names", "quality_flags"]

# Name -> the function that gives the page's reasons, with the filter's parameters.
FILTERS: dict[str, Callable[[PageText, Any], list[str]]] = {
    "gopher_quality": gopher_quality,
    "gopher_repetition": gopher_repetition,
    "c4_quality": c4_quality,
    "fineweb_quality": fineweb_quality,
}


def filter_names(spec: str) -> tuple[str, ...]:
    """The filters named by ``all`` or a comma-separated list, in the order of :data:`FILTERS`.

    >>> filter_names("fineweb_quality, c4_quality")
    ('c4_quality', 'fineweb_quality')
    """
    wanted = {name.strip() for name in spec.split(",") if name.strip()}
    if wanted == {"all"}:
        return tuple(FILTERS)
    unknown = sorted(wanted - set(FILTERS))
    if unknown or not wanted:
        raise ConfigError(f"unknown quality filter {', '.join(unknown) or repr(spec)}: "
                          f"name all or some of {', '.join(FILTERS)}")
    return tuple(name for name in FILTERS if name in wanted)


class QualityFilters:
    """The filters chosen, with their parameters, and a cache of the words they have split
    (one per process: it makes the next page's words cheaper)."""

    def __init__(self, config: QualityConfig | None = None,
                 names: Iterable[str] = tuple(FILTERS)) -> None:
        self.config = config or QualityConfig()
        self.names = tuple(names)
        unknown = [name for name in self.names if name not in FILTERS]
        if unknown:
            raise ConfigError(f"unknown quality filter {', '.join(unknown)}")
        self._cache = WordCache()

    def page(self, text: str, language: str = "") -> PageText:
        """The page as the filters read it (its words, lines... worked out once)."""
        return PageText(text, self._cache, primary_subtag(language or ""))

    def reasons(self, text: str, language: str = "") -> dict[str, list[str]]:
        """Each filter chosen, and the reasons it would drop the page (empty: it keeps it)."""
        page = self.page(text, language)
        return {name: FILTERS[name](page, getattr(self.config, name)) for name in self.names}

    def flags(self, text: str, language: str = "") -> list[str]:
        """``FILTER:REASON`` for each reason each filter chosen would drop the page, in the
        order of the filters and of their rules; empty when all of them keep it."""
        return [f"{name}:{reason}" for name, reasons in self.reasons(text, language).items()
                for reason in reasons]


def quality_flags(text: str, language: str = "", config: QualityConfig | None = None) -> list[str]:
    """The flags of every filter for one page. For many pages, keep one :class:`QualityFilters`:
    its cache of words makes them faster."""
    return QualityFilters(config).flags(text, language)
