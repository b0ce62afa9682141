"""What corpus builders run on extracted text: the published quality filters (Gopher's quality
and repetition rules, C4's, FineWeb's), each a function from a page's text and language to the
reasons it would drop the page, with the published parameters as defaults and every parameter
settable from a TOML file.

>>> quality_flags("Buy now. Buy now. Buy now.", "en")[:3]
['gopher_quality:few_words', 'gopher_quality:alpha_words', 'gopher_quality:stop_words']

:mod:`.words` counts words by script, :mod:`.codes` codes a page's words for numpy; :mod:`.page`
works out a page's lines and words once for all filters; :mod:`.gopher`, :mod:`.c4` and
:mod:`.fineweb` are the filters; :mod:`.config` reads their parameters; :mod:`.filters` names
them and gives a page's ``FILTER:REASON`` flags.
``docs/quality.md`` describes every rule.
"""

from __future__ import annotations

from .config import QualityConfig, load_config
from .filters import FILTERS, QualityFilters, filter_names, quality_flags

__all__ = ["FILTERS", "QualityConfig", "QualityFilters", "filter_names", "load_config",
           "quality_flags"]
