"""The Spark duplicate stage's grouping on the cluster: connected components against a local
union-find, and the groups, kept pages and verdicts of signed rows with no page or pair ever
collected to the driver."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from warcdeboil.dedup.groups import Copy, UnionFind, choose_keeper, roots_of
from warcdeboil.dedup.minhash import MinHasher
from warcdeboil.dedup.shingles import shingle_hashes
from warcdeboil.dedup.text import lead_digest
from warcdeboil.dedup.verdicts import Kind, Verdict

pytestmark = pytest.mark.spark

PARTITIONS = 4


def union_find_labels(nodes: list[int], edges: list[tuple[int, int]]) -> dict[int, int]:
    """Each node of an edge and the smallest node of its component, by the local union-find."""
    ranks = {node: i for i, node in enumerate(sorted(nodes))}
    union = UnionFind(len(ranks))
    for first, second in edges:
        union.union(ranks[first], ranks[second])
    roots = roots_of(union)
    ordered = sorted(nodes)
    touched = {node for edge in edges if edge[0] != edge[1] for node in edge}  # loops join none
    return {node: ordered[roots[ranks[node]]] for node in touched}


def random_graph(rng: random.Random) -> list[tuple[int, int]]:
    """A long path (in shuffled order, nodes numbered at random), stars, isolated edges,
    random sparse edges, loops and repeated edges, over page-key-sized numbers."""
    nodes = rng.sample(range(1 << 41, (1 << 41) + 5000), 1200)
    path, rest = nodes[:200], nodes[200:]
    edges = list(zip(path, path[1:], strict=False))
    for centre in range(0, 200, 40):  # five stars of 39 leaves each
        leaves = rest[centre + 1 : centre + 40]
        edges += [(rest[centre], leaf) if rng.random() < 0.5 else (leaf, rest[centre])
                  for leaf in leaves]
    edges += [(rest[i], rest[i + 1]) for i in range(200, 400, 2)]  # isolated pairs
    pool = rest[400:]
    edges += [tuple(rng.sample(pool, 2)) for _ in range(300)]  # type: ignore[misc]
    edges += [(pool[0], pool[0])] + edges[:20]  # a loop, and repeated edges
    rng.shuffle(edges)
    return edges


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_components_are_the_union_find_groups(spark: Any, seed: int) -> None:
    from warcdeboil.spark.components import component_labels

    edges = random_graph(random.Random(seed))
    nodes = sorted({node for edge in edges for node in edge})
    expected = union_find_labels(nodes, edges)
    found = component_labels(spark.sparkContext.parallelize(edges, PARTITIONS), PARTITIONS)
    labels = dict(found.labels.collect())
    found.labels.unpersist()
    assert labels == expected
    assert len(set(labels.values())) < len(labels) // 2  # big components, not singletons
    # The path needed rounds, far fewer than its 200 nodes (O(log² n) rounds, not O(n)).
    assert 2 <= found.rounds <= 30


def test_a_path_in_order_and_a_graph_without_edges(spark: Any) -> None:
    from warcdeboil.spark.components import component_labels

    context = spark.sparkContext
    path = [(i, i + 1) for i in range(300)]
    found = component_labels(context.parallelize(path[::-1], PARTITIONS), PARTITIONS)
    assert dict(found.labels.collect()) == {i: 0 for i in range(301)}
    found.labels.unpersist()
    empty = component_labels(context.parallelize([(7, 7)], PARTITIONS), PARTITIONS)
    assert empty.labels.collect() == [] and empty.rounds == 0


def words(rng: random.Random, count: int) -> str:
    return " ".join(f"w{rng.randrange(1 << 30):x}" for _ in range(count))


def signed_row(page: int, url: str, date: str, text: str, digest: bytes) -> tuple[int, Any]:
    """A row as :func:`warcdeboil.spark.dedup.sign_row` makes it, from a text."""
    shingles = shingle_hashes(text)
    signature = MinHasher().signature(shingles).astype("<u4").tobytes()
    site = url.split("/")[2]  # sites with templates: no second look
    return page, (url, date, f"<urn:uuid:{page}>", len(text), len(shingles), bool(text.strip()),
                  digest, signature, lead_digest(text), site, False)


def designed_crawl(rng: random.Random) -> tuple[list[tuple[int, Any]], list[list[int]]]:
    """Signed rows of six files: distinct pages, and groups of 2-25 copies of one text (some
    with the same payload digest), with ties in text length and date so the keep rule goes
    down to the URL and then the page. The groups, pages ascending."""
    from warcdeboil.spark.dedup import page_key

    ordinals = [0] * 6
    rows: list[tuple[int, Any]] = []
    groups: list[list[int]] = []

    def next_page() -> int:
        file_id = rng.randrange(6)
        ordinals[file_id] += 1
        return page_key(file_id, ordinals[file_id])

    for number in range(40):
        text = words(rng, 120)
        size = 1 if number % 4 == 0 else rng.choice([2, 3, 5, 25])
        members = []
        for copy in range(size):
            page = next_page()
            digest = bytes([number]) * 20 if copy % 3 == 0 else rng.randbytes(20)
            date = rng.choice(["", "2024-01-01T00:00:00Z", "2023-01-01T00:00:00Z"])
            url = rng.choice([f"http://a.example/{number}", f"http://b.example/{number}?x",
                              f"http://b.example/{number}"])
            rows.append(signed_row(page, url, date, text, digest))
            members.append(page)
        if size > 1:
            groups.append(sorted(members))
    rows.append(signed_row(next_page(), "http://c.example/", "", "", b""))  # no text, no digest
    rng.shuffle(rows)
    return rows, groups


def expected_verdicts(rows: list[tuple[int, Any]], groups: list[list[int]]
                      ) -> dict[int, list[Verdict]]:
    """Each file's verdicts by the local rule: choose_keeper over each group's pages."""
    from warcdeboil.spark.dedup import page_file

    by_page = dict(rows)
    verdicts: dict[int, list[Verdict]] = {}
    for members in groups:
        def copy_of(page: int) -> Copy:
            url, date, _, chars, *_ = by_page[page]
            return Copy(page, url, chars, date)

        keep = choose_keeper(members, copy_of).keep
        kept = by_page[keep]
        for page in members:
            row = by_page[page]
            kind = (Kind.KEPT if page == keep else Kind.EXACT if row[6] == kept[6]
                    else Kind.NEAR)
            verdicts.setdefault(page_file(page), []).append(Verdict(
                page & ((1 << 40) - 1), len(members), kind, 1.0, kept[0], kept[1], kept[2]))
    return {file_id: sorted(found, key=lambda v: v.ordinal) for file_id, found in verdicts.items()}


@pytest.fixture
def collects(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The number of items each RDD.collect returns (counts and reductions collect one item a
    partition; collecting pages or pairs would return hundreds)."""
    from pyspark import RDD

    sizes: list[int] = []
    collect = RDD.collect

    def counted(self: Any) -> list[Any]:
        found = collect(self)
        sizes.append(len(found))
        return found

    monkeypatch.setattr(RDD, "collect", counted)
    yield sizes


def test_groups_kept_pages_and_verdicts_stay_on_the_cluster(spark: Any,
                                                           collects: list[int]) -> None:
    from warcdeboil.spark.dedup import find_duplicates

    rows, groups = designed_crawl(random.Random(5))
    expected = expected_verdicts(rows, groups)
    signed = spark.sparkContext.parallelize(rows, PARTITIONS)
    found = find_duplicates(signed, PARTITIONS)
    during = list(collects)
    verdicts = dict(found.verdicts.collect())
    group_ids = dict(found.groups.collect())
    found.verdicts.unpersist()
    found.groups.unpersist()

    assert verdicts == expected
    assert group_ids == {page: members[0] for members in groups for page in members}
    pages = sum(map(len, groups))
    assert found.counts["pages"] == len(rows)
    assert found.counts["groups"] == len(groups)
    kinds = [verdict.kind for found_ in expected.values() for verdict in found_]
    assert found.counts["exact"] == kinds.count(Kind.EXACT) > 0
    assert found.counts["near"] == kinds.count(Kind.NEAR) > 0
    assert found.counts["exact"] + found.counts["near"] + len(groups) == pages
    # While the stage ran, the driver got counts only: one item a partition at most.
    assert during and max(during) <= PARTITIONS < len(groups) < pages
