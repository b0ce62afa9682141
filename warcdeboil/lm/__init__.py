"""A compact n-gram language model of the crawl: trained here, offline, in every script; and
the stage of a run that trains and scores with it.

The model: interpolated modified Kneser-Ney over words (characters in Chinese, Japanese and
Thai, :mod:`.units`), with a character model beside it (:mod:`.chars`) for the noise score of
a line (:mod:`.noise`); counts bounded in memory (:mod:`.counts`), estimates in backoff form
(:mod:`.kneserney`), a model file that loads in a fraction of a second (:mod:`.model`), and
ARPA files read and written (:mod:`.arpa`), so a KenLM or SRILM model can be used too. numpy
does the counting and the scoring. :mod:`.sources` reads training text from what a user has.

In a run: :mod:`.scoring` scores cleaned pages and drives the perplexity filters; :mod:`.stage`
trains the run's own models (``--lm auto``) and sorts pages into perplexity buckets between
the fit and pass 2, keeping what it cleaned in :mod:`.cleaned` and its training units in
:mod:`.unitstore`.

``LanguageModel`` is imported when first asked for: the stage's stores need no numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import LanguageModel

__all__ = ["LanguageModel"]


def __getattr__(name: str) -> Any:
    if name == "LanguageModel":
        from .model import LanguageModel

        return LanguageModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
