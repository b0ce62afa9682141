"""The language-model stage on Spark (``--lm auto``, buckets): what :mod:`warcdeboil.lm.stage`
does on one machine, between the fit and pass 2, with the same results.

* A map over pass 1's page rows (each joined with its site's profile, as the duplicate stage's
  are: no page is parsed again) cleans each page as pass 2 will and emits
  ``((language, half, file, ordinal), text)``.
* ``--lm auto``: the rows of each language and half are shuffled into a partition of their own,
  sorted by file and ordinal (the local engine's order: the same models, byte for byte), and
  a task trains the model from them as they stream by. The models come back to the driver,
  which hands them to every executor (``SparkContext.addFile``).
* Buckets: each row is scored as pass 2 will score it; the scores are sorted by language and
  value on the cluster, and only the two that are each language's percentiles come back to
  the driver (never a score per page: the driver's memory does not grow with the crawl).
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from warcdeboil.lm.scoring import LmSettings, PageScorer, url_half
from warcdeboil.lm.stage import MIN_TRAINING_CHARS, percentile_ranks, train_run_model
from warcdeboil.page.dom import without_structure
from warcdeboil.page.language import identify
from warcdeboil.run.options import Options
from warcdeboil.site.clean import clean_page

from .dedup import JoinedPage, joined_page, page_file

__all__ = ["executor_settings", "run_models"]

TextRow = tuple[tuple[str, int, int, int], str]
_BATCH_PAGES = 256


def text_rows(options: Options, item: JoinedPage) -> Iterator[TextRow]:
    """The cleaned text of a page, when its language is known."""
    page, entry, profile = joined_page(item)
    analysed = entry.page if options.output_structure else without_structure(entry.page)
    text = clean_page(analysed, profile, options.effective_mode, url=entry.url,
                      drop_headline=options.drop_headline, favor=options.favor).cleaned.text
    language = identify(text, options.language_model).language
    if language:
        yield (language, url_half(entry.url), page_file(page), entry.ordinal), text


def _train(rows: Iterator[TextRow]) -> Iterator[tuple[str, int, bytes]]:
    """The model of each (language, half) of a partition, from its texts in order."""
    for (language, half), group in itertools.groupby(rows, key=lambda row: row[0][:2]):
        model = train_run_model(text for _, text in group)
        with tempfile.TemporaryDirectory(prefix="warcdeboil-lm-") as tmp:
            path = Path(tmp) / "model.lm"
            model.save(path)
            yield language, half, path.read_bytes()


def executor_settings(settings: LmSettings | None) -> LmSettings | None:
    """The settings with the run's models where this executor holds its copies of them."""
    if settings is None or not settings.trained:
        return settings
    from pyspark import SparkFiles

    return replace(settings, trained=tuple(
        (language, half, SparkFiles.get(os.path.basename(path)))
        for language, half, path in settings.trained))


def _score(settings: LmSettings, rows: Iterator[TextRow]) -> Iterator[tuple[str, float]]:
    """(language, perplexity) of each row, as pass 2 will score its page."""
    scorer = PageScorer(executor_settings(settings))  # type: ignore[arg-type]
    ordered = sorted(rows, key=lambda row: row[0])
    for (language, half), group in itertools.groupby(ordered, key=lambda row: row[0][:2]):
        texts = [text for _, text in group]
        for start in range(0, len(texts), _BATCH_PAGES):
            for value in scorer.perplexities(language, half, texts[start:start + _BATCH_PAGES]):
                if value is not None:
                    yield language, value


def run_models(spark: Any, pages: Any, options: Options, models_dir: str) -> Options:
    """The options with the run's models (``--lm auto``, saved in ``models_dir`` on the driver
    and added to the Spark context) and each language's percentiles (buckets). ``pages``: pass
    1's page rows of every input, each joined with its site's profile."""
    from functools import partial

    from pyspark import StorageLevel

    settings = options.lm
    assert settings is not None
    context = spark.sparkContext
    texts = pages.flatMap(partial(text_rows, options)).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        chars = dict(texts.map(lambda row: (row[0][:2], len(row[1])))
                     .reduceByKey(lambda a, b: a + b).collect())
        if settings.auto:
            languages = sorted({lang for lang, _ in chars if all(
                chars.get((lang, h), 0) >= MIN_TRAINING_CHARS for h in (0, 1))})
            keys = [(lang, h) for lang in languages for h in (0, 1)]
            trained = []
            if keys:
                index = {key: i for i, key in enumerate(keys)}
                chosen = texts.filter(lambda row: row[0][:2] in index)
                shuffled = chosen.repartitionAndSortWithinPartitions(
                    len(keys), partitionFunc=lambda key: index[key[:2]])
                prefix = os.path.basename(models_dir)
                for language, half, blob in sorted(shuffled.mapPartitions(_train).collect()):
                    path = Path(models_dir) / f"{prefix}-{language}.{half}.lm"
                    path.write_bytes(blob)
                    context.addFile(str(path))
                    trained.append((language, half, str(path)))
            settings = replace(settings, trained=tuple(trained))
        if settings.bucketed:
            scores = texts.mapPartitions(partial(_score, settings)).persist(
                StorageLevel.MEMORY_AND_DISK)
            try:
                settings = replace(settings, limits=percentiles(scores))
            finally:
                scores.unpersist()
    finally:
        texts.unpersist()
    return replace(options, lm=settings)


def percentiles(scores: Any) -> tuple[tuple[str, float, float], ...]:
    """Each language's head and middle limits, as :func:`~warcdeboil.lm.stage.percentile_limits`
    gives them, from an RDD of (language, score): sorted by (language, score) on the cluster,
    where each language's two ranks are picked; the driver gets a count and two scores a
    language."""
    counts = scores.countByKey()
    wanted: dict[int, list[tuple[str, int]]] = {}  # place in the sorted scores -> what it is
    start = 0
    for language in sorted(counts):
        for which, rank in enumerate(percentile_ranks(counts[language])):
            wanted.setdefault(start + rank, []).append((language, which))
        start += counts[language]
    picked = scores.sortBy(_itself).zipWithIndex().filter(
        lambda pair: pair[1] in wanted).collect()
    limits: dict[str, list[float]] = {language: [0.0, 0.0] for language in counts}
    for (language, score), place in picked:
        for _, which in wanted[place]:
            limits[language][which] = score
    return tuple((language, head, middle) for language, (head, middle) in sorted(limits.items()))


def _itself(item: tuple[str, float]) -> tuple[str, float]:
    return item
