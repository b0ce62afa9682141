"""Text outputs with ``--lm``: pages scored a batch at a time, filtered, passed on in order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from warcdeboil.errors import WorkDirError
from warcdeboil.page.html import HtmlPage
from warcdeboil.warc.reader import WarcRecord
from warcdeboil.warc.tally import Tally

from .sink import PageResult, Sink, TextStage

if TYPE_CHECKING:
    # Imported where used: a template-mode run (WARC output, no --lm, no URL rules) needs none.
    from warcdeboil.lm.scoring import PageScorer


class ScoringSink(TextStage):
    """Text outputs with --lm: pages gathered a batch at a time, scored together (see
    ``PageScorer.score_many``), filtered, then passed on in their order."""

    BATCH_PAGES = 256
    BATCH_CHARS = 1 << 20

    def __init__(self, inner: Sink, scorer: PageScorer, tally: Tally,
                 stored: Iterator[tuple[int, float | None, str]] | None = None) -> None:
        """``stored``: (ordinal, perplexity, language) of every page in order, as the stage
        before pass 2 scored them (no line score needed): the pages are not scored again."""
        super().__init__(inner)
        self._stored = stored
        self._scorer = scorer
        self._tally = tally
        self._pending: list[PageResult] = []
        self._chars = 0

    def page(
        self, result: PageResult, record: WarcRecord | None, page: HtmlPage | None,
        html: bytes | None,
    ) -> None:
        self._pending.append(result)  # text sinks need the result only
        self._chars += len(result.cleaned.text)
        if len(self._pending) >= self.BATCH_PAGES or self._chars >= self.BATCH_CHARS:
            self._flush()

    def _flush(self) -> None:
        pending, self._pending, self._chars = self._pending, [], 0
        if not pending:
            return
        tally = self._tally
        if self._stored is not None:
            scores = [self._scorer.scored(r.cleaned, r.content, *self._score_of(r))
                      for r in pending]
        else:
            # The languages the stage before pass 2 found, if it ran (else found when needed).
            known = [r.language.language if r.language is not None else None for r in pending]
            scores = self._scorer.score_many([(r.cleaned, r.content) for r in pending],
                                             [r.entry.url for r in pending], known)
        for result, score in zip(pending, scores, strict=True):
            tally.lines_dropped_perplexity += score.lines_dropped
            tally.lines_dropped_noise += score.noise_dropped
            dropped = score.page_dropped or score.bucket_dropped
            written = 0 if dropped else len(score.cleaned.text)
            tally.text_chars -= len(result.cleaned.text) - written  # counted as cleaned
            if dropped:  # cleaned, but not written
                tally.pages_dropped_perplexity += score.page_dropped
                tally.pages_dropped_bucket += score.bucket_dropped
                continue
            # The line filter may have changed the text: its language is then found again.
            language = ((result.language or score.guess)
                        if score.cleaned.text == result.cleaned.text else None)
            self._inner.page(PageResult(result.entry, result.site, score.cleaned, score.content,
                                        score, result.duplicate, language), None, None, None)

    def _score_of(self, result: PageResult) -> tuple[float | None, str]:
        assert self._stored is not None
        # Pages that never reach the sink (duplicates dropped by --dedup drop) are passed over.
        ordinal, value, language = next(self._stored, (-1, None, ""))
        while 0 <= ordinal < result.entry.ordinal:
            ordinal, value, language = next(self._stored, (-1, None, ""))
        if ordinal != result.entry.ordinal:
            raise WorkDirError("the page scores of the language-model stage do not match the "
                               "page store: delete the work directory")
        return value, language

    def close(self) -> None:
        self._flush()
        super().close()
