"""Connected components of a graph held as an RDD of edges, computed on the cluster.

The alternating *large-star* / *small-star* algorithm of Kiveris et al. ("Connected Components
in MapReduce and Beyond", SoCC 2014), which converges in O(log² n) rounds whatever the graph's
diameter (a chain of n pages takes a handful of rounds, not n). Each round is two shuffles; a
third checks whether the graph has become a forest of stars, each centred on the smallest node
of its component, which is then every node's label. Each round's edges are checkpointed (a
reliable checkpoint when the context has a checkpoint directory, else a local one), so the
lineage stays one round long however many rounds run. The driver holds nothing but counts.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
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
    integer nodes (in either order; loops and repeated edges are allowed)."""
    graph = _settled(edges.filter(lambda edge: edge[0] != edge[1]).map(_oriented))
    rounds, previous = 0, None
    while True:
        settled = _is_star_forest(graph, partitions)  # computes (and checkpoints) ``graph``
        if previous is not None:
            previous.unpersist()  # ``graph`` no longer needs it
        if settled:
            break
        rounds += 1
        previous, graph = graph, _settled(_small_star(_large_star(graph, partitions), partitions))
    labels = _settled(graph.flatMap(_label_candidates).reduceByKey(min, partitions))
    labels.count()
    graph.unpersist()
    log.info("spark: connected components in %d rounds", rounds)
    return Components(labels, rounds)


def _oriented(edge: tuple[int, int]) -> Edge:
    first, second = edge
    return (first, second) if first > second else (second, first)


def _settled(rdd: Any) -> Any:
    """``rdd`` persisted and marked for a checkpoint (done by its first action), which cuts
    its lineage: the next round is computed from it, not from every round before."""
    from pyspark import StorageLevel

    rdd.persist(StorageLevel.MEMORY_AND_DISK)
    if rdd.context.getCheckpointDir():
        rdd.checkpoint()
    else:
        rdd.localCheckpoint()
    return rdd


def _both_ways(edge: Edge) -> Iterator[Edge]:
    yield edge
    yield edge[1], edge[0]


def _large_star(graph: Any, partitions: int) -> Any:
    """Each node's larger neighbours joined to the smallest of its neighbourhood (itself
    included); an edge is handled by its smaller node, so each is replaced once."""
    return graph.flatMap(_both_ways).groupByKey(partitions).flatMap(_large_star_node)


def _large_star_node(item: tuple[int, Iterable[int]]) -> Iterator[Edge]:
    node, neighbours = item
    unique = set(neighbours)
    smallest = min(min(unique), node)
    return ((other, smallest) for other in unique if other > node)


def _small_star(graph: Any, partitions: int) -> Any:
    """Each node and its smaller neighbours joined to the smallest of them (edges grouped by
    their larger node, which is first already)."""
    return graph.groupByKey(partitions).flatMap(_small_star_node)


def _small_star_node(item: tuple[int, Iterable[int]]) -> Iterator[Edge]:
    node, smaller = item
    unique = set(smaller)
    smallest = min(unique)
    yield node, smallest
    yield from ((other, smallest) for other in unique if other != smallest)


def _is_star_forest(graph: Any, partitions: int) -> bool:
    """True when every node has at most one parent (a smaller neighbour) and no parent has a
    parent: each component is then a star around its smallest node."""
    summaries = graph.flatMap(_node_facts).reduceByKey(_merge_facts, partitions)
    return summaries.filter(_is_not_star_node).isEmpty()


NodeFacts = tuple[int | None, int | None, bool]
"""A node's smallest and largest parent (None: none) and whether it is some node's parent."""


def _node_facts(edge: Edge) -> Iterator[tuple[int, NodeFacts]]:
    child, parent = edge
    yield child, (parent, parent, False)
    yield parent, (None, None, True)


def _merge_facts(first: NodeFacts, second: NodeFacts) -> NodeFacts:
    low = [value for value in (first[0], second[0]) if value is not None]
    high = [value for value in (first[1], second[1]) if value is not None]
    return (min(low) if low else None, max(high) if high else None, first[2] or second[2])


def _is_not_star_node(item: tuple[int, NodeFacts]) -> bool:
    lowest, highest, is_parent = item[1]
    return lowest is not None and (lowest != highest or is_parent)


def _label_candidates(edge: Edge) -> Iterator[Edge]:
    """A child's centre, and the centre its own label (in a star forest)."""
    yield edge
    yield edge[1], edge[1]
