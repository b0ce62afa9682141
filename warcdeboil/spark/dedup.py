"""The duplicate stage on Spark: the local stage's steps as joins and shuffles.

* Pass 1's tasks also emit each page's store entry (:func:`page_row`); joined with the fitted
  profile of its site, each becomes a signed row (:func:`sign_row`: the same
  :func:`~warcdeboil.dedup.text.signature_text`, shingles and MinHash as locally).
* Exact duplicates: rows grouped by payload digest. Near ones: LSH bucket keys shuffled
  (:func:`~warcdeboil.dedup.lsh.bucket_keys`), each bucket's pairs chosen as locally
  (:func:`~warcdeboil.dedup.lsh.bucket_pairs`, members in page order), then confirmed with both
  signatures (two joins). A confirmed pair of two pages of one site without template gets the
  second look of :mod:`warcdeboil.dedup.own`: its pages' store entries joined to it again
  (:func:`second_look`).
* The pairs stay on the cluster: their connected components
  (:func:`~.components.component_labels`) give each page of a group its group id, the group's
  first page. Each group's size and kept page (the same rule as locally,
  :func:`~warcdeboil.dedup.groups.choose_keeper`) are a reduction by group id, joined back to
  its pages, whose verdicts are shuffled by file for pass 2's join: each task writes its file's
  side file before cleaning it. The driver gets counts, never pages or pairs.

A page is numbered ``file_id << 40 | ordinal``: that sorts as the local engine's page numbers
do (inputs in order, records in file order), so buckets are read in the same order and groups,
kept pages and similarities are the local engine's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from warcdeboil.dedup.groups import Copy, keep_order
from warcdeboil.dedup.lsh import LshParams, bucket_keys, bucket_pairs, confirms
from warcdeboil.dedup.minhash import MinHasher
from warcdeboil.dedup.own import has_template, own_texts, same_own
from warcdeboil.dedup.shingles import shingle_hashes
from warcdeboil.dedup.text import lead_digest, signature_text
from warcdeboil.dedup.verdicts import Kind, Verdict
from warcdeboil.site.fit import SiteProfile
from warcdeboil.site.pagestore import PageEntry, entry_from_bytes
from warcdeboil.site.profiles import ProfileRow, profile_from_row
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode
from warcdeboil.urlrules import UrlRules

from .components import component_labels

__all__ = ["Duplicates", "JoinedPage", "find_duplicates", "joined_page", "learn_rules", "page_file",
           "page_key", "second_look", "sign_row"]

_ORDINAL_BITS = 40
SignedRow = tuple[Any, ...]
"""``(page, (url, date, record_id, chars, shingles, has_text, digest, signature bytes, lead,
site, no_template))``"""


def page_key(file_id: int, ordinal: int) -> int:
    return file_id << _ORDINAL_BITS | ordinal


def _ordinal(page: int) -> int:
    return page & ((1 << _ORDINAL_BITS) - 1)


def page_file(page: int) -> int:
    return page >> _ORDINAL_BITS


JoinedPage = tuple[str, tuple[tuple[int, bytes], ProfileRow | None]]
"""A page row of pass 1 (its site, key and encoded store entry) joined with its site's profile
row (None: the site has no profile)."""


def joined_page(item: JoinedPage) -> tuple[int, PageEntry, SiteProfile | None]:
    """The page's key, its store entry and its site's profile."""
    site, ((page, blob), profile_row) = item
    profile = profile_from_row(profile_row) if profile_row is not None and site else None
    return page, entry_from_bytes(blob), profile


def sign_row(item: JoinedPage) -> SignedRow:
    """A joined page, signed."""
    page, entry, profile = joined_page(item)
    text = signature_text(entry.page, profile)
    shingles = shingle_hashes(text)
    signature = MinHasher().signature(shingles).astype("<u4").tobytes()
    return page, (entry.url, entry.date, entry.record_id, len(text), len(shingles),
                  bool(text.strip()), entry.digest, signature, lead_digest(text), item[0],
                  not has_template(profile))


def _exact_pairs(item: tuple[bytes, Iterable[int]]) -> Iterator[tuple[int, int]]:
    members = sorted(item[1])
    return ((members[0], other) for other in members[1:])


def _buckets(row: SignedRow) -> Iterator[tuple[bytes, int]]:
    page, (*_, has_text, _digest, signature, lead, _site, _no_template) = row
    if has_text:
        for key in bucket_keys(np.frombuffer(signature, dtype="<u4"), lead=lead):
            yield key, page


def _pairs(item: tuple[bytes, Iterable[int]]) -> Iterator[tuple[int, int]]:
    return bucket_pairs(sorted(item[1]))


def _similarity(first: bytes, second: bytes) -> float:
    a, b = np.frombuffer(first, dtype="<u4"), np.frombuffer(second, dtype="<u4")
    return float(np.count_nonzero(a == b)) / len(a)


def _confirmed(item: tuple[int, tuple[tuple[int, SignedRow], tuple[Any, ...]]]) -> bool:
    _, ((_, first), second) = item
    params = LshParams()
    same_lead = bool(first[8]) and first[8] == second[8]
    return confirms(_similarity(first[7], second[7]), first[4], second[4], params,
                    same_lead=same_lead)


def _needs_look(item: tuple[int, tuple[tuple[int, SignedRow], tuple[Any, ...]]]) -> bool:
    """Whether a confirmed pair is of two pages of one site without template."""
    _, ((_, first), second) = item
    return bool(first[10] and second[10] and first[9] and first[9] == second[9])


def _looked_again(item: tuple[int, tuple[tuple[int, JoinedPage], JoinedPage]]) -> bool:
    _, ((_, first), second) = item
    (_, a, profile), (_, b, _) = joined_page(first), joined_page(second)
    return same_own(*own_texts(a.page, b.page, profile))


def second_look(pairs: Any, pages: Any, partitions: int) -> Any:
    """The pairs of ``pairs`` (an RDD of ``(first, second)`` pages of one site without
    template) that are copies by the second look of :mod:`warcdeboil.dedup.own`; ``pages``:
    the joined pages (:data:`JoinedPage`) keyed by page."""
    by_first = pairs.join(pages, partitions).map(lambda item: (item[1][0], (item[0], item[1][1])))
    return by_first.join(pages, partitions).filter(_looked_again).map(
        lambda item: (item[1][0][0], item[0]))


class Duplicates(NamedTuple):
    """What :func:`find_duplicates` found, all of it on the cluster but the counts."""

    counts: dict[str, int]
    """As :class:`~warcdeboil.dedup.stage.DedupCounts` says them."""
    verdicts: Any
    """An RDD of ``(file_id, [Verdict, ...])``, each file's verdicts in ordinal order
    (persisted: the caller unpersists it after pass 2)."""
    groups: Any
    """An RDD of ``(page, group id)`` over the pages of a group, the group id its first page
    as the local stage numbers groups (persisted: the caller unpersists it)."""


def find_duplicates(signed: Any, partitions: int, pages: Any = None) -> Duplicates:
    """The groups of the signed pages (an RDD of :func:`sign_row` rows, persisted by the
    caller). Pairs are joined into groups by :func:`~.components.component_labels`, each group
    keeps the page :func:`~warcdeboil.dedup.groups.choose_keeper` would (the least
    :func:`_keep_key`, found by a reduction by group) and each page's verdict is worked out
    where its row is: the driver gets counts only, whatever the number of duplicates.
    ``pages``: the joined pages (:data:`JoinedPage`) keyed by page, for the second look (None:
    pairs that would need it are joined as the others)."""
    from pyspark import StorageLevel

    with_digest = signed.filter(lambda row: bool(row[1][6])).map(lambda row: (row[1][6], row[0]))
    exact = with_digest.groupByKey(partitions).flatMap(_exact_pairs)
    candidates = signed.flatMap(_buckets).groupByKey(partitions).flatMap(_pairs).distinct(
        partitions)
    # (first, second) joined with first's row, then with second's: confirmed by both.
    by_first = candidates.join(signed, partitions).map(
        lambda item: (item[1][0], (item[0], item[1][1])))
    passed = by_first.join(signed, partitions).filter(_confirmed).persist(
        StorageLevel.MEMORY_AND_DISK)
    looked = refused = 0
    confirmed = passed.map(lambda item: (item[1][0][0], item[0]))
    if pages is not None:
        doubtful = passed.filter(_needs_look).map(lambda item: (item[1][0][0], item[0]))
        looked = int(doubtful.count())
        confirmed = passed.filter(lambda item: not _needs_look(item)).map(
            lambda item: (item[1][0][0], item[0]))
        if looked:
            kept = second_look(doubtful, pages, partitions).persist(StorageLevel.MEMORY_AND_DISK)
            refused = looked - int(kept.count())
            confirmed = confirmed.union(kept)
    confirmed = confirmed.persist(StorageLevel.MEMORY_AND_DISK)
    groups = component_labels(exact.union(confirmed), partitions).labels
    # Each page of a group with its row, keyed by its group; then each group's size and kept
    # page (a reduction: a group's pages are never held together), joined back to its pages.
    # Partitioned by group, so that neither the reduction nor the join shuffles them again.
    members = groups.join(signed, partitions).map(_member).partitionBy(partitions).persist(
        StorageLevel.MEMORY_AND_DISK)
    keepers = members.mapValues(_keeper_candidate).reduceByKey(_better_keeper, partitions)
    verdicts = members.join(keepers, partitions).map(_verdict).groupByKey(partitions).mapValues(
        _in_ordinal_order).persist(StorageLevel.MEMORY_AND_DISK)
    kinds = verdicts.flatMap(lambda item: (verdict.kind for verdict in item[1])).countByValue()
    counts = {"pages": int(signed.count()), "groups": int(kinds.get(Kind.KEPT, 0)),
              "exact": int(kinds.get(Kind.EXACT, 0)), "near": int(kinds.get(Kind.NEAR, 0)),
              "candidates": int(candidates.count()), "confirmed": int(confirmed.count()),
              "looked": looked, "refused": refused}
    members.unpersist()
    confirmed.unpersist()
    passed.unpersist()
    return Duplicates(counts, verdicts, groups)


Member = tuple[int, tuple[int, Any]]
"""``(group, (page, signed row))``"""
Keeper = tuple[int, tuple[Any, ...], tuple[Any, ...]]
"""``(group size, keep key, (page, url, date, record_id, digest, signature))``"""


def _member(item: tuple[int, tuple[int, Any]]) -> Member:
    page, (group, row) = item
    return group, (page, row)


def _keep_key(page: int, row: Any) -> tuple[Any, ...]:
    """The keep rule's sort key with the page last: :func:`choose_keeper` sorts a group's
    pages in page order by :func:`~warcdeboil.dedup.groups.keep_order` (a stable sort), so
    the page it keeps is the one with the least key."""
    url, date, _, chars, *_ = row
    return (*keep_order(Copy(page, url, chars, date)), page)


def _keeper_candidate(value: tuple[int, Any]) -> Keeper:
    page, row = value
    url, date, record_id, *_, digest, signature, _lead, _site, _no_template = row
    return 1, _keep_key(page, row), (page, url, date, record_id, digest, signature)


def _better_keeper(first: Keeper, second: Keeper) -> Keeper:
    best = first if first[1] <= second[1] else second
    return first[0] + second[0], best[1], best[2]


def _verdict(item: tuple[int, tuple[tuple[int, Any], Keeper]]) -> tuple[int, Verdict]:
    _, ((page, row), (size, _, keep)) = item
    keep_page, keep_url, keep_date, keep_record_id, keep_digest, keep_signature = keep
    digest, signature = row[6], row[7]
    if page == keep_page:
        kind, similarity = Kind.KEPT, 1.0
    elif keep_digest and digest == keep_digest:
        kind, similarity = Kind.EXACT, 1.0
    else:
        kind, similarity = Kind.NEAR, _similarity(keep_signature, signature)
    return page_file(page), Verdict(_ordinal(page), size, kind, similarity, keep_url, keep_date,
                                    keep_record_id)


def _in_ordinal_order(verdicts: Iterable[Verdict]) -> list[Verdict]:
    return sorted(verdicts, key=lambda verdict: verdict.ordinal)


def learn_rules(signed: Any, groups: Any, site_key: SiteKeyMode, partitions: int) -> UrlRules:
    """URL rules from the signed pages and their groups (:func:`find_duplicates`'s, an RDD of
    ``(page, group id)``), as the local run learns them (:mod:`warcdeboil.urlrules.run`): each
    site's pages with text, joined with their groups and shuffled to one task that learns the
    site from them in URL, then page order; the sites' evidence comes back to the driver, which
    decides over the run."""
    observations = signed.flatMap(partial(_observation, site_key)).leftOuterJoin(
        groups, partitions).map(_grouped_observation)
    states = observations.groupByKey(partitions).map(partial(_learn_site, site_key)).collect()
    rules = UrlRules(site_key=site_key)
    for state in sorted(states, key=lambda state: state.name):
        rules.add_learned_site(state)
    rules.decide()
    return rules


def _observation(site_key: SiteKeyMode, row: SignedRow) -> Iterator[tuple[int, tuple[str, str]]]:
    page, (url, *_, has_text, _digest, _signature, _lead, _site, _no_template) = row
    site = SiteKeyer(site_key)(url)
    if has_text and site:  # a page with no text of its own is no evidence
        yield page, (site, url)


def _grouped_observation(item: tuple[int, tuple[tuple[str, str], int | None]]
                         ) -> tuple[str, tuple[str, int, int]]:
    page, ((site, url), group) = item
    return site, (url, page, page if group is None else group)


def _learn_site(site_key: SiteKeyMode, item: tuple[str, Iterable[tuple[str, int, int]]]) -> Any:
    site, rows = item
    rules = UrlRules(site_key=site_key)
    rules.learn_site(site, ((url, group) for url, _, group in sorted(rows)))
    return rules.learned_site(site)
