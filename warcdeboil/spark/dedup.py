"""The duplicate stage on Spark: the local stage's steps as joins and shuffles.

* Pass 1's tasks also emit each page's store entry (:func:`page_row`); joined with the fitted
  profile of its site, each becomes a signed row (:func:`sign_row`: the same
  :func:`~warcdeboil.dedup.text.signature_text`, shingles and MinHash as locally).
* Exact duplicates: rows grouped by payload digest. Near ones: LSH bucket keys shuffled
  (:func:`~warcdeboil.dedup.lsh.bucket_keys`), each bucket's pairs chosen as locally
  (:func:`~warcdeboil.dedup.lsh.bucket_pairs`, members in page order), then confirmed with both
  signatures (two joins).
* The joined pairs come back to the driver, which joins them into groups and picks each group's
  kept page by the same rule (:func:`~warcdeboil.dedup.groups.choose_keeper`): the driver holds
  the duplicate pages only, not the run's pages. The verdicts go to pass 2 by a join on the
  file, and each task writes its file's side file before cleaning it.

A page is numbered ``file_id << 40 | ordinal``: that sorts as the local engine's page numbers
do (inputs in order, records in file order), so buckets are read in the same order and groups,
kept pages and similarities are the local engine's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

import numpy as np

from ..dedup.groups import Copy, UnionFind, choose_keeper
from ..dedup.lsh import LshParams, bucket_keys, bucket_pairs, confirms
from ..dedup.minhash import MinHasher
from ..dedup.shingles import shingle_hashes
from ..dedup.text import lead_digest, signature_text
from ..duplicates import Kind, Verdict
from ..fit import SiteProfile
from ..pagestore import PageEntry, entry_from_bytes
from ..profiles import ProfileRow, profile_from_row
from ..sitekey import SiteKeyer, SiteKeyMode
from ..urlrules import UrlRules

__all__ = ["JoinedPage", "find_duplicates", "joined_page", "learn_rules", "page_file",
           "page_key", "sign_row"]

_ORDINAL_BITS = 40
SignedRow = tuple[Any, ...]
"""``(page, (url, date, record_id, chars, shingles, has_text, digest, signature bytes, lead))``"""


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
                  bool(text.strip()), entry.digest, signature, lead_digest(text))


def _exact_pairs(item: tuple[bytes, Iterable[int]]) -> Iterator[tuple[int, int]]:
    members = sorted(item[1])
    return ((members[0], other) for other in members[1:])


def _buckets(row: SignedRow) -> Iterator[tuple[bytes, int]]:
    page, (*_, has_text, _digest, signature, lead) = row
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


def find_duplicates(
    signed: Any, partitions: int, groups_out: dict[int, int] | None = None,
) -> tuple[dict[str, int], dict[int, list[Verdict]]]:
    """The groups of the signed pages (an RDD of :func:`sign_row` rows, persisted by the
    caller): what the stage found (as :class:`~warcdeboil.dedup.stage.DedupCounts` says it),
    and each file's verdicts in ordinal order. ``groups_out`` gets each duplicate page's group
    id (its group's first page, as the local stage numbers groups; a page not in it is alone)."""
    with_digest = signed.filter(lambda row: bool(row[1][6])).map(lambda row: (row[1][6], row[0]))
    exact = with_digest.groupByKey(partitions).flatMap(_exact_pairs)
    candidates = signed.flatMap(_buckets).groupByKey(partitions).flatMap(_pairs).distinct(
        partitions)
    # (first, second) joined with first's row, then with second's: confirmed by both.
    by_first = candidates.join(signed, partitions).map(
        lambda item: (item[1][0], (item[0], item[1][1])))
    confirmed = by_first.join(signed, partitions).filter(_confirmed).map(
        lambda item: (item[1][0][0], item[0]))
    edges = sorted(set(exact.collect()) | set(confirmed.collect()))
    members = sorted({page for edge in edges for page in edge})
    rank = {page: i for i, page in enumerate(members)}
    union = UnionFind(len(members))
    for first, second in edges:
        union.union(rank[first], rank[second])
    wanted = set(members)
    rows = dict(signed.filter(lambda row: row[0] in wanted).collect()) if wanted else {}
    groups: dict[int, list[int]] = {}
    for i in range(len(members)):
        groups.setdefault(union.find(i), []).append(i)

    def copy_of(i: int) -> Copy:
        url, date, _, chars, *_ = rows[members[i]]
        return Copy(i, url, chars, date)

    counts = {"pages": int(signed.count()), "groups": 0, "exact": 0, "near": 0,
              "candidates": int(candidates.count()), "confirmed": int(confirmed.count())}
    verdicts: dict[int, list[Verdict]] = {}
    for group_members in groups.values():
        if groups_out is not None:
            first = members[min(group_members)]
            groups_out.update((members[i], first) for i in group_members)
        group = choose_keeper(group_members, copy_of)
        counts["groups"] += 1
        keep = rows[members[group.keep]]
        for i in group_members:
            page = members[i]
            row = rows[page]
            if i == group.keep:
                kind, similarity = Kind.KEPT, 1.0
            elif keep[6] and row[6] == keep[6]:
                kind, similarity = Kind.EXACT, 1.0
                counts["exact"] += 1
            else:
                kind, similarity = Kind.NEAR, _similarity(keep[7], row[7])
                counts["near"] += 1
            verdicts.setdefault(page_file(page), []).append(Verdict(
                _ordinal(page), len(group_members), kind, similarity, keep[0], keep[1], keep[2]))
    for found in verdicts.values():
        found.sort(key=lambda verdict: verdict.ordinal)
    return counts, verdicts


def learn_rules(context: Any, signed: Any, groups: dict[int, int], site_key: SiteKeyMode,
                partitions: int) -> UrlRules:
    """URL rules from the signed pages and their groups (:func:`find_duplicates`'s
    ``groups_out``), as the local run learns them (:mod:`warcdeboil.urlrules.run`): each
    site's pages with text, shuffled to one task that learns the site from them in URL, then
    page order; the sites' evidence comes back to the driver, which decides over the run."""
    shared = context.broadcast(groups)
    observations = signed.flatMap(partial(_observation, site_key, shared))
    states = observations.groupByKey(partitions).map(partial(_learn_site, site_key)).collect()
    shared.unpersist()
    rules = UrlRules(site_key=site_key)
    for state in sorted(states, key=lambda state: state.name):
        rules.add_learned_site(state)
    rules.decide()
    return rules


def _observation(site_key: SiteKeyMode, groups: Any, row: SignedRow
                 ) -> Iterator[tuple[str, tuple[str, int, int]]]:
    page, (url, *_, has_text, _digest, _signature, _lead) = row
    site = SiteKeyer(site_key)(url)
    if has_text and site:  # a page with no text of its own is no evidence
        yield site, (url, page, groups.value.get(page, page))


def _learn_site(site_key: SiteKeyMode, item: tuple[str, Iterable[tuple[str, int, int]]]) -> Any:
    site, rows = item
    rules = UrlRules(site_key=site_key)
    rules.learn_site(site, ((url, group) for url, _, group in sorted(rows)))
    return rules.learned_site(site)
