"""Content mode's side of the precision/recall trade (``--favor``).

Each setting is an operating point of the content model: the probability a block must reach, on
pages with prose and on pages without (listings), and which of the page-level rules that add
blocks back run. The points themselves (``content.OPERATING_POINTS``) were chosen on the
calibration sites only, with ``benchmarks/favor.py``; their precision, recall and F1 on every set
are in ``docs/modes.md``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from warcdeboil.errors import ConfigError

__all__ = ["Favor", "OperatingPoint", "as_favor"]


class Favor(str, enum.Enum):
    """Which side of the trade content mode takes: less boilerplate, or less content lost."""

    PRECISION = "precision"
    BALANCED = "balanced"
    RECALL = "recall"


@dataclass(frozen=True, slots=True)
class OperatingPoint:
    """The thresholds and rules of one setting of :class:`Favor`."""

    threshold: float  # the probability a block of a page with prose must reach
    listing_threshold: float  # the same on a page without prose (content.is_listing)
    fill_gaps: bool  # keep the text between the kept blocks of the core (content.fill_core_gaps)
    # The switches no setting uses (threads off, asides dropped) are points benchmarks/favor.py
    # measures, so that the choice can be made again.
    threads: bool = True  # a thread keeps its posts (content.is_thread)
    # What goes after the rules (content.tightened), on a page with prose: kept blocks of half
    # their characters or more in links, kept blocks inside an aside and not the article, and
    # blocks of fewer than edge_chars characters before the first and after the last kept block
    # of prose (headings stay).
    drop_link_dense: bool = False
    drop_asides: bool = False
    edge_chars: int = 0


def as_favor(value: Favor | str) -> Favor:
    """``value`` as a :class:`Favor`; a name that is none of them is a :class:`ConfigError`."""
    try:
        return Favor(value)
    except ValueError:
        names = ", ".join(favor.value for favor in Favor)
        raise ConfigError(f"favor {value!r} is none of {names}") from None
