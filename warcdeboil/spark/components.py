"""Connected components of a graph held as an RDD of edges, computed on the cluster.

The alternating *large-star* / *small-star* algorithm of Kiveris et al. ("Connected Components
in MapReduce and Beyond", SoCC 2014), which converges in O(log² n) rounds whatever the graph's
diameter (a path of n pages takes a handful of rounds, not n). A round is one job of two
shuffles; the large-star step's grouping also tells (an accumulator) whether the graph it was
given is a forest of stars, each around the smallest node of its component: then its output is
every node's label, and the loop ends. Each round's large-star output is persisted, and
checkpointed when the context has a checkpoint directory, so that the lineage stays one round
long; without one the lineage grows by a round at a time (tens of rounds at most), and a lost
executor's part is computed again from it. The driver holds nothing but counts.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any, NamedTuple

__all__ = ["Components", "component_labels"]

log = logging.getLogger(__name__)

Edge = tuple[int, int]
"""``(child, parent)``: an edge of the graph with its larger node first."""


class Components(NamedTuple):
    """Each node's component: ``labels`` is an RDD of ``(node, smallest node of its component)``
    over every node of an edge (persisted and checkpointed: the caller unpersists it), and
    ``rounds`` the large-star/small-star rounds it took."""

    labels: Any
    rounds: int


def component_labels(edges: Any, partitions: int) -> Components:
    """The components of the graph whose edges are ``edges``, an RDD of ``(a, b)`` pairs of
    integer nodes (in either order; a loop joins nothing; repeated edges are allowed)."""
    graph = edges.filter(lambda edge: edge[0] != edge[1]).map(_oriented)
    rounds, previous = 0, None
    while True:
        # One job a round: a large-star step whose grouping also finds whether its input
        # was a star forest already, and then its output is every node's label.
        not_stars = edges.context.accumulator(0)
        starred = _settled(graph.flatMap(_both_ways).groupByKey(partitions).flatMap(
            partial(_large_star_node, not_stars)))
        starred.count()
        if previous is not None:
            previous.unpersist()  # ``starred`` is cached: the next round reads it, not this one
        if not not_stars.value:
            log.info("spark: connected components in %d rounds", rounds)
            return Components(starred, rounds)
        rounds += 1
        previous = starred
        graph = starred.filter(lambda edge: edge[0] != edge[1]).groupByKey(partitions).flatMap(
            _small_star_node)


def _oriented(edge: tuple[int, int]) -> Edge:
    first, second = edge
    return (first, second) if first > second else (second, first)


def _settled(rdd: Any) -> Any:
    """``rdd`` persisted and, when the context has a checkpoint directory, marked for a
    checkpoint (done by its first action), which cuts its lineage: the next round is computed
    from it, not from every round before. No local checkpoint: it would cut the lineage by
    keeping the only copy on the executors, and a lost executor would fail the run."""
    from pyspark import StorageLevel

    rdd.persist(StorageLevel.MEMORY_AND_DISK)
    if rdd.context.getCheckpointDir():
        rdd.checkpoint()
    return rdd


def _both_ways(edge: Edge) -> Iterator[Edge]:
    yield edge
    yield edge[1], edge[0]


def _large_star_node(not_stars: Any, item: tuple[int, Iterable[int]]) -> Iterator[Edge]:
    """Large-star at one node: its larger neighbours joined to the smallest node of its
    neighbourhood (itself included); an edge is handled by its smaller node, so each is replaced
    once. A node with no smaller neighbour is also its own label (a loop, dropped before the
    small-star step). ``not_stars`` counts the nodes that show the graph is not yet a star
    forest: those with two smaller neighbours, or one and a larger one."""
    node, neighbours = item
    unique = set(neighbours)
    smallest = min(min(unique), node)
    smaller = sum(1 for other in unique if other < node)
    if smaller > 1 or (smaller and smaller < len(unique)):
        not_stars.add(1)
    if smallest == node:
        yield node, node
    yield from ((other, smallest) for other in unique if other > node)


def _small_star_node(item: tuple[int, Iterable[int]]) -> Iterator[Edge]:
    node, smaller = item
    unique = set(smaller)
    smallest = min(unique)
    yield node, smallest
    yield from ((other, smallest) for other in unique if other != smallest)
