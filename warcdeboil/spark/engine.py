"""The Spark engine: the same two passes as the local engine, as Spark jobs.

* **Pass 1** is a map over the input files: each task scans one file
  (:func:`.tasks.scan_task`) and emits its index rows and its tally. The rows are the index
  DataFrame (:func:`index_frame`: site, URL key, file, offset, length, sort key, entry).
* **Fit**: the site grouping is Spark's shuffle — the DataFrame repartitioned by site and sorted
  within partitions by the index's key (site, URL key, file, offset: the local engine's order) —
  and the fit is a function over each partition (:func:`.tasks.fit_partition`, i.e.
  ``fit.fit_site``).
* **Pass 2** is a map over the input files, each joined with the profiles of the sites it holds
  (a file's task gets only those) and cleaned by :func:`.tasks.apply_task`, i.e.
  ``apply.apply_file``. Pass 2 parses pages again instead of reading a page store: the outputs
  are the local engine's, byte for byte.

Profiles never leave the cluster; tallies (one per file and pass) and the fit's counts come back
to the driver as the same :class:`~warcdeboil.run.summary.RunSummary` the local engine returns.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.errors import ConfigError, JobError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.run.excluded import gather_excluded
from warcdeboil.run.madewith import (
    NO_SELECTION,
    RunRecord,
    check_resumable,
    selection_key,
    wanted,
)
from warcdeboil.run.meter import input_bytes
from warcdeboil.run.options import Options, Progress
from warcdeboil.run.plan import check_writable, holds_input
from warcdeboil.run.selection import SiteFilter, index_kind, read_selection, selected_files
from warcdeboil.run.summary import FitStats, RunSummary
from warcdeboil.urlrules.run import check_rules_path, rules_counts, write_rules
from warcdeboil.warc.remote import discover, exists, filesystem, is_remote, local_path, under
from warcdeboil.warc.tally import Tally

from .progress import Counts, StageMonitor
from .session import build_session
from .tasks import (
    INDEX_COLUMNS,
    InputFile,
    TaskSettings,
    add_stats,
    applied,
    apply_task,
    by_output,
    candidate,
    cleaned_row,
    excluded_of,
    file_sites,
    first_candidate,
    fit_partition,
    fit_stats,
    fitted_profile,
    index_row,
    is_applied,
    is_cleaned,
    is_entry,
    is_excluded,
    is_fitted,
    is_page,
    is_tally,
    output_codec_of,
    output_location,
    relink_output,
    revisit_lookups,
    scan_task,
    site_page,
    tally_of,
)

__all__ = ["IndexSelection", "by_site_in_order", "index_frame", "input_files", "run_spark"]

log = logging.getLogger(__name__)

T = TypeVar("T")
IndexSelection = tuple[str, SiteFilter]
"""An index file (CDX, CDXJ or Common Crawl Parquet) and the sites to take from it."""
_PYTHON_ERROR = re.compile(r"^(?:[\w.]+\.)?(\w*(?:Error|Exception)): (.+)$", re.MULTILINE)


def run_spark(
    inputs: Sequence[str],
    output: str,
    options: Options | None = None,
    *,
    session: Any = None,
    master: str | None = None,
    conf: dict[str, str] | None = None,
    select: IndexSelection | None = None,
    progress: Progress | None = None,
    resume: bool = False,
) -> RunSummary:
    """Index, fit and apply on Spark: what :func:`warcdeboil.clean` does on one machine.

    ``inputs`` are archive files or directories (local paths or URLs); with ``select``, they are
    the one location the index's file names are relative to. Without ``session``, one is built
    with ``master`` and ``conf`` and stopped at the end. With ``resume``, inputs whose output
    exists are not written again (outputs appear under their final name only when complete);
    every input is still scanned, so that the fit, and every output, is that of a whole run.
    An output is kept only when made with the options of this run (recorded beside it:
    :mod:`warcdeboil.run.madewith`), else the run is refused before a job starts.
    """
    options = options or Options()
    if select is None:  # the plan, before a session is built: see warcdeboil.run.plan
        files = input_files(None, inputs, None, output)
        check_output(output, files, options)
    spark = session if session is not None else build_session(master, conf or {})
    try:
        if select is not None:
            files = input_files(spark, inputs, select, output)
            check_output(output, files, options)
        record = wanted(options, NO_SELECTION if select is None else selection_key(
            (f.rel, f.spans or ()) for f in files))
        done = frozenset(f.file_id for f in files if exists(output_location(output, f, options))
                         ) if resume else frozenset()
        # An output is kept only when made with what this run would make it with.
        check_resumable((output_location(output, f, options),
                         record.output(output_codec_of(f, options)))
                        for f in files if f.file_id in done)
        rules_written = options.url_rules is None or exists(os.fspath(options.url_rules))
        if len(done) == len(files) and files and rules_written:
            return RunSummary(inputs=len(files), resumed=len(done)).asked(options)
        summary = _run(spark, files, output, options, progress, done, record)
        summary.resumed = len(done)
        return summary
    finally:
        if session is None:
            spark.stop()


def input_files(
    spark: Any, inputs: Sequence[str], select: IndexSelection | None, output: str | None = None
) -> list[InputFile]:
    """The run's inputs: archives found under ``inputs`` (never under the ``output``
    directory), or the files an index names."""
    if select is None:
        found = discover(inputs, exclude=output)
        return [InputFile(i, location, rel) for i, (location, rel) in enumerate(found)]
    if len(inputs) != 1:
        raise ConfigError(
            "--select-index takes one input: the directory or URL prefix its file names are "
            f"relative to (got {len(inputs)})"
        )
    index, sites = select
    if index_kind(index) == "parquet":
        from .parquet import read_cc_index

        selection = read_cc_index(spark, index, sites)
    else:
        selection = read_selection(index, sites)
    return [InputFile(i, location, rel, tuple(spans))
            for i, (location, rel, spans) in enumerate(selected_files(inputs[0], selection))]


def _run(
    spark: Any, files: list[InputFile], output: str, options: Options, progress: Progress | None,
    done: frozenset[int] = frozenset(), record: RunRecord | None = None,
) -> RunSummary:
    from pyspark import StorageLevel

    context = spark.sparkContext
    monitor = StageMonitor(context, progress)
    settings = TaskSettings(options, output, record=record)
    partitions = max(1, int(spark.conf.get("spark.sql.shuffle.partitions")))
    summary = RunSummary(inputs=len(files)).asked(options)
    models_dir: str | None = None  # the run's language models (--lm auto), on the driver
    log.info("spark: %d inputs, %d fit partitions", len(files), partitions)

    # Pass 1: one task per input file; its rows stay on the cluster for the fit and the join.
    inputs = context.parallelize(files, len(files))
    scan_counts = Counts(context)
    scanned = inputs.flatMap(partial(scan_task, settings, count=scan_counts.add)).persist(
        StorageLevel.MEMORY_AND_DISK
    )
    size = sum(input_bytes(f.location, f.spans) for f in files)
    with monitor.stage("scan", len(files), scan_counts, size):
        rows = _action(lambda: scanned.filter(is_tally).map(tally_of).collect())
    summary.scan_files = _in_order(rows)
    entries = scanned.filter(is_entry)

    # Fit: shuffle by site, sorted by the index's sort key, then fit each partition.
    by_site = by_site_in_order(index_frame(spark, entries), partitions)
    fit = partial(fit_partition, options.fit)
    profiles = by_site.select("entry").rdd.mapPartitions(fit).persist(StorageLevel.MEMORY_AND_DISK)
    with monitor.stage("fit", partitions):
        summary.fit = _action(lambda: profiles.map(fit_stats).fold(FitStats(), add_stats))

    # Pass 2: each file with the fitted profiles of its own sites (a join, not a broadcast).
    fitted = profiles.filter(is_fitted).map(fitted_profile)
    needed = entries.map(file_sites).distinct().join(fitted).values().groupByKey()
    if options.lm is not None and (options.lm.auto or options.lm.bucketed):
        from .lm import run_models  # the run's models and percentiles, from every input

        models_dir = tempfile.mkdtemp(prefix="warcdeboil-lm-")
        joined = scanned.filter(is_page).map(site_page).leftOuterJoin(fitted, partitions)
        options = run_models(spark, joined, options, models_dir)
        settings = TaskSettings(options, output, record=record)
    todo = inputs.filter(lambda file: file.file_id not in done) if done else inputs
    held: list[Any] = []  # RDDs persisted until pass 2 is written
    jobs = todo.keyBy(_file_id).leftOuterJoin(needed, max(1, len(files) - len(done)))
    if options.dedup_stage:
        verdicts, groups, rules = _duplicates(monitor, scanned, fitted, partitions, summary,
                                              options)
        held += [verdicts, groups]
        if options.effective_dedup is not DedupMode.OFF:
            jobs = jobs.leftOuterJoin(verdicts, max(1, len(files) - len(done))).map(
                _with_verdicts)
            if rules is not None:  # pass 2's JSONL gives each page's url_canonical
                settings = replace(settings, url_rules=context.broadcast(rules))
    write_counts = Counts(context)
    size = sum(input_bytes(f.location, f.spans) for f in files if f.file_id not in done)
    written = jobs.flatMap(partial(apply_task, settings, count=write_counts.add)).persist(
        StorageLevel.MEMORY_AND_DISK
    )
    with monitor.stage("write", len(files) - len(done), write_counts, size):
        tallies = _action(lambda: written.filter(is_applied).map(applied).collect())
    summary.apply_files = sorted(tallies, key=lambda t: _order(files, t))
    if options.quality is not None and options.quality.excluded is not None:
        # --excluded: each input's pages left out, in the inputs' order, as the local engine
        listed = _action(lambda: written.filter(is_excluded).map(excluded_of).collect())
        gather_excluded(options.quality.excluded, [lines for _, lines in sorted(listed)])
    if options.format is OutputFormat.WARC:
        _action(lambda: relinked(written, max(1, len(files) - len(done))))
    written.unpersist()
    for rdd in held:
        rdd.unpersist()
    scanned.unpersist()
    profiles.unpersist()
    if models_dir is not None:
        shutil.rmtree(models_dir, ignore_errors=True)
    return summary


def _duplicates(monitor: StageMonitor, scanned: Any, fitted: Any, partitions: int,
                summary: RunSummary, options: Options) -> tuple[Any, Any, str | None]:
    """The duplicate stage (:mod:`.dedup`): its counts into ``summary``, an RDD of
    (file_id, verdicts) for pass 2's join, one of each grouped page's group (both persisted,
    for the caller to unpersist), and with --url-rules the rules learned from its
    groups (their JSON text, also written to the file, and counted in ``summary``)."""
    from pyspark import StorageLevel

    from .dedup import find_duplicates, learn_rules, sign_row

    pages = scanned.filter(is_page).map(site_page)
    joined = pages.leftOuterJoin(fitted, partitions)
    signed = joined.map(sign_row).persist(StorageLevel.MEMORY_AND_DISK)
    # The joined pages again, by page, for the few that need a second look (.dedup.second_look).
    by_page = joined.map(lambda item: (item[1][0][0], item))
    with monitor.stage("dedup", partitions):
        found = _action(lambda: find_duplicates(signed, partitions, by_page))
        summary.dedup = found.counts
        text = None
        if options.url_rules is not None:
            rules = _action(lambda: learn_rules(signed, found.groups, options.site_key,
                                                partitions))
            text = rules.dumps()
            write_rules(text, options.url_rules)
            summary.url_rules = {"path": os.fspath(options.url_rules), **rules_counts(rules)}
    signed.unpersist()
    return found.verdicts, found.groups, text


def _with_verdicts(item: tuple[int, tuple[tuple[Any, Any], Any]]) -> tuple[int, tuple[Any, ...]]:
    (file_id, ((file, rows), verdicts)) = item
    return file_id, (file, rows, verdicts or [])


def relinked(written: Any, partitions: int) -> int:
    """Revisits no output resolved while it was written, looked up among the pages cleaned in
    every output of the run (a join by key), and their outputs rewritten: what
    :func:`warcdeboil.output.relink.relink` does on one machine, with the same choice. The number of
    outputs rewritten."""
    lookups = written.flatMap(revisit_lookups)
    cleaned = written.filter(is_cleaned).map(cleaned_row)
    found = lookups.join(cleaned, partitions).map(candidate).reduceByKey(first_candidate)
    per_output = found.map(by_output).groupByKey(partitions)
    return int(per_output.map(relink_output).sum())


def check_output(output: str, files: Sequence[InputFile], options: Options | None = None
                 ) -> None:
    """Refuse, in one line, an output directory that is or holds an input, one that cannot be
    written (a local one), or a URL no filesystem is installed for; and a --url-rules file
    that would overwrite an input, an output or a file the run writes."""
    if options is not None and options.url_rules is not None:
        remote = is_remote(output)
        check_rules_path(
            options.url_rules,
            [local_path(f.location) for f in files if not is_remote(f.location)],
            [] if remote else [local_path(output_location(output, f, options)) for f in files],
            None if remote else local_path(output))
    if is_remote(output):
        filesystem(output)
        return
    out_dir = Path(local_path(output))
    out_real = os.path.realpath(out_dir)
    for file in files:
        if not is_remote(file.location):
            real = os.path.realpath(local_path(file.location))
            if under(real, out_real):
                raise holds_input(output, file.location)
    check_writable(out_dir)


def index_frame(spark: Any, entries: Any) -> Any:
    """Pass 1's entry rows as the index DataFrame: a row per page, :data:`.tasks.INDEX_COLUMNS`."""
    from pyspark.sql.types import (
        BinaryType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    types = {"site": StringType(), "url_key": StringType(), "file_id": IntegerType(),
             "offset": LongType(), "length": LongType(), "key": BinaryType(),
             "entry": BinaryType()}
    schema = StructType([StructField(name, types[name], False) for name in INDEX_COLUMNS])
    return spark.createDataFrame(entries.map(index_row), schema, verifySchema=False)


def by_site_in_order(index: Any, partitions: int) -> Any:
    """The fit's shuffle: every site's rows in one of ``partitions`` partitions, each partition
    sorted by the index's key (so a site's pages are consecutive, in the local engine's order)."""
    return index.repartition(partitions, "site").sortWithinPartitions("key")


def _file_id(file: InputFile) -> int:
    return file.file_id


def _in_order(rows: list[tuple[int, Tally]]) -> list[Tally]:
    return [tally for _, tally in sorted(rows, key=lambda row: row[0])]


def _order(files: list[InputFile], tally: Tally) -> int:
    for file in files:
        if file.location == tally.path:
            return file.file_id
    return len(files)


def _action(run: Callable[[], T]) -> T:
    """Run a Spark action; a failed job becomes one :class:`JobError` line naming the cause."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    try:
        return run()
    except (Py4JError, PySparkException) as exc:
        raise JobError(_cause(exc)) from exc


def _cause(exc: BaseException) -> str:
    """The Python error a task died of, from the message Spark hands back, else its first line."""
    text = str(exc)
    found = _PYTHON_ERROR.findall(text)
    for name, message in found:
        if name not in ("Py4JJavaError", "PythonException", "SparkException"):
            return f"a Spark task failed: {name}: {message.strip()}"
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return f"the Spark job failed: {first[:300]}"
