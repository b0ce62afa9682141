"""Duplicate detection over a whole run (library; the pipeline stage is to come).

Near duplicates are found on each page's text *after* its site's template is removed
(:mod:`.text`: :func:`signature_text`, and the lead paragraph the confirmation looks at):

- :mod:`.shingles` turns text into 64-bit shingle hashes (word 5-grams; each character of a
  script written without spaces — Chinese, Japanese, Thai… — counts as one word);
- :mod:`.minhash` reduces the shingles to a fixed-length MinHash signature (numpy, vectorised);
- :mod:`.lsh` bands the signatures and finds candidate pairs with an external sort of the band
  keys (sorted runs on disk, k-way merge, as :mod:`warcdeboil.index` does), then confirms each
  pair by its estimated Jaccard similarity, its containment and its lead paragraph;
- :mod:`.groups` joins confirmed pairs (and exact duplicates: equal payload digests) with a
  union-find and picks the page each group keeps;
- :mod:`.detect` runs the whole search over pages given one at a time, signatures on disk
  (:func:`duplicate_groups`);
- :mod:`.stage` is the pipeline's stage (signatures from pass 1's page stores, the verdicts
  pass 2 reads: :mod:`warcdeboil.duplicates`), and :func:`iter_url_groups` the groups it
  found, per site.
"""

from collections.abc import Iterator
from pathlib import Path

from .detect import (
    DedupStats,
    PageSignatures,
    PageText,
    SignatureWriter,
    duplicate_groups,
    search,
)
from .groups import (
    Copy,
    DuplicateGroup,
    UnionFind,
    choose_keeper,
    exact_groups,
    group_members,
    keep_order,
)
from .lsh import (
    BANDS,
    CONFIRM_THRESHOLD,
    CONTAINED_JACCARD,
    CONTAINMENT,
    LEAD_CONTAINMENT,
    MAX_BUCKET_KEPT,
    ROWS,
    LshParams,
    candidate_pairs,
    candidate_pairs_in_memory,
    confirmed_pairs,
    confirms,
    detection_probability,
    error_rates,
)
from .minhash import NUM_PERM, MinHasher, estimate_jaccard
from .shingles import SHINGLE_WORDS, shingle_hashes, tokens
from .text import lead_digest, signature_text

__all__ = [
    "BANDS",
    "CONFIRM_THRESHOLD",
    "CONTAINED_JACCARD",
    "CONTAINMENT",
    "LEAD_CONTAINMENT",
    "MAX_BUCKET_KEPT",
    "NUM_PERM",
    "PageSignatures",
    "SignatureWriter",
    "ROWS",
    "SHINGLE_WORDS",
    "Copy",
    "DedupStats",
    "DuplicateGroup",
    "LshParams",
    "MinHasher",
    "PageText",
    "UnionFind",
    "candidate_pairs",
    "candidate_pairs_in_memory",
    "choose_keeper",
    "confirmed_pairs",
    "confirms",
    "detection_probability",
    "duplicate_groups",
    "error_rates",
    "estimate_jaccard",
    "exact_groups",
    "group_members",
    "iter_url_groups",
    "keep_order",
    "lead_digest",
    "search",
    "shingle_hashes",
    "signature_text",
    "tokens",
]


def iter_url_groups(work_dir: Path, *, evidence_only: bool = False
                    ) -> Iterator[tuple[str, str, int]]:
    """``(site, url, group_id)`` of every page of a run, sorted by site: see
    :func:`.stage.iter_url_groups` (imported when called: the stage needs the apply module,
    which needs this package)."""
    from .stage import iter_url_groups as rows

    return rows(work_dir, evidence_only=evidence_only)
