"""A compact n-gram language model of the crawl: trained here, offline, in every script.

Interpolated modified Kneser-Ney over words (characters in Chinese, Japanese and Thai), with a
character model beside it (``chars``) for the noise score of a line; counts bounded in memory
(``counts``), estimates in backoff form (``kneserney``), a model file that loads in a fraction
of a second (``model``), and ARPA files read and written (``arpa``), so a KenLM or SRILM model
can be used too. numpy does the counting and the scoring.
"""

from .model import LanguageModel

__all__ = ["LanguageModel"]
