"""Duplicate detection over a whole run: the library, and the stage a run runs.

Near duplicates are found on each page's text *after* its site's template is removed
(:mod:`.text`: :func:`signature_text`, and the lead paragraph the confirmation looks at):

- :mod:`.shingles` turns text into 64-bit shingle hashes (word 5-grams; each character of a
  script written without spaces — Chinese, Japanese, Thai… — counts as one word);
- :mod:`.minhash` reduces the shingles to a fixed-length MinHash signature (numpy, vectorised);
- :mod:`.lsh` bands the signatures and finds candidate pairs with an external sort of the band
  keys (sorted runs on disk, k-way merge, as :mod:`warcdeboil.site.index` does), then confirms each
  pair by its estimated Jaccard similarity, its containment and its lead paragraph;
- :mod:`.groups` joins confirmed pairs (and exact duplicates: equal payload digests) with a
  union-find and picks the page each group keeps;
- :mod:`.detect` runs the whole search over pages given one at a time, signatures on disk
  (:func:`duplicate_groups`);
- :mod:`.stage` is the pipeline's stage (signatures from pass 1's page stores, the verdicts
  pass 2 reads: :mod:`.verdicts`, and what each page's template removes: :mod:`.doomed`), and
  :func:`iter_url_groups` the groups it found, per site.

The names below are imported when first used: :mod:`.verdicts`, which every run reads, needs
no numpy, and importing it must not load the rest.
"""
from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# name -> the module that defines it
_LAZY = {
    "DedupStats": "detect",
    "PageSignatures": "detect",
    "PageText": "detect",
    "SignatureWriter": "detect",
    "duplicate_groups": "detect",
    "search": "detect",
    "Copy": "groups",
    "DuplicateGroup": "groups",
    "UnionFind": "groups",
    "choose_keeper": "groups",
    "exact_groups": "groups",
    "group_members": "groups",
    "keep_order": "groups",
    "BANDS": "lsh",
    "CONFIRM_THRESHOLD": "lsh",
    "CONTAINED_JACCARD": "lsh",
    "CONTAINMENT": "lsh",
    "LEAD_CONTAINMENT": "lsh",
    "MAX_BUCKET_KEPT": "lsh",
    "ROWS": "lsh",
    "LshParams": "lsh",
    "candidate_pairs": "lsh",
    "candidate_pairs_in_memory": "lsh",
    "confirmed_pairs": "lsh",
    "confirms": "lsh",
    "detection_probability": "lsh",
    "error_rates": "lsh",
    "NUM_PERM": "minhash",
    "MinHasher": "minhash",
    "estimate_jaccard": "minhash",
    "SHINGLE_WORDS": "shingles",
    "shingle_hashes": "shingles",
    "tokens": "shingles",
    "lead_digest": "text",
    "signature_text": "text",
}

__all__ = [
    "BANDS",
    "CONFIRM_THRESHOLD",
    "CONTAINED_JACCARD",
    "CONTAINMENT",
    "Copy",
    "DedupStats",
    "DuplicateGroup",
    "LEAD_CONTAINMENT",
    "LshParams",
    "MAX_BUCKET_KEPT",
    "MinHasher",
    "NUM_PERM",
    "PageSignatures",
    "PageText",
    "ROWS",
    "SHINGLE_WORDS",
    "SignatureWriter",
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


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def iter_url_groups(work_dir: str | os.PathLike[str], *, evidence_only: bool = False
                    ) -> Iterator[tuple[str, str, int]]:
    """``(site, url, group_id)`` of every page of a run, sorted by site: see
    :func:`.stage.iter_url_groups` (the stage is imported when this is called)."""
    from .stage import iter_url_groups as rows

    return rows(work_dir, evidence_only=evidence_only)
