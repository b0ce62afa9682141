"""MinHash signatures of shingle sets, vectorised with numpy.

Each of ``num_perm`` hash functions is a multiply-add modulo 2**32 with an odd multiplier (a
permutation of 32-bit values) applied to the high 32 bits of each shingle hash; the signature
keeps, per function, the smallest value over the shingles. The shingle hashes are already
well mixed (see :mod:`.shingles`), which is what lets 32-bit arithmetic do: it costs 70 µs a
dragnet page where 64-bit products cost 107 (numpy, 128 functions). Two sets agree in one
position with probability equal to their Jaccard similarity, so the fraction of equal
positions estimates it with standard error ``sqrt(J(1-J)/num_perm)``.

>>> hasher = MinHasher(seed=1)
>>> a = hasher.signature(shingle_hashes("the quick brown fox jumps over the lazy dog again"))
>>> estimate_jaccard(a, a)
1.0
"""

from __future__ import annotations

import numpy as np

from .shingles import shingle_hashes

__all__ = ["EMPTY_SLOT", "NUM_PERM", "MinHasher", "estimate_jaccard", "shingle_hashes"]

# Hash functions per signature: 128 = 16 bands of 8 rows (see lsh.py). The estimate's standard
# error at J = 0.8 is 0.035; 64 would double the error, 256 would double the time.
NUM_PERM = 128
# The signature of an empty shingle set: all positions at the maximum, so it matches only another
# empty text (which the callers leave out of near-duplicate search: there is nothing to compare).
EMPTY_SLOT = np.uint32(0xFFFFFFFF)
# Shingles hashed per numpy block: keeps the (block x num_perm) product within the CPU cache.
_BLOCK = 256
_HIGH = np.uint64(32)


class MinHasher:
    """MinHash with ``num_perm`` hash functions drawn from ``seed`` (same seed, same signatures)."""

    def __init__(self, num_perm: int = NUM_PERM, seed: int = 1) -> None:
        if num_perm < 1:
            raise ValueError(f"num_perm must be at least 1, not {num_perm}")
        rng = np.random.Generator(np.random.PCG64(seed))
        self.num_perm = num_perm
        self.seed = seed
        # Odd multipliers: a multiply by an even number would not be a permutation.
        self._mul = rng.integers(0, 2**32, size=num_perm, dtype=np.uint32) | np.uint32(1)
        self._add = rng.integers(0, 2**32, size=num_perm, dtype=np.uint32)

    def signature(self, shingles: np.ndarray) -> np.ndarray:
        """The MinHash signature (``num_perm`` uint32) of a uint64 array of shingle hashes."""
        best = np.full(self.num_perm, EMPTY_SLOT, dtype=np.uint32)
        keys = (shingles >> _HIGH).astype(np.uint32)
        buffer = np.empty((min(_BLOCK, len(keys)), self.num_perm), dtype=np.uint32)
        for start in range(0, len(keys), _BLOCK):
            block = keys[start : start + _BLOCK, None]
            values = buffer[: len(block)]
            np.multiply(block, self._mul, out=values)
            np.add(values, self._add, out=values)
            np.minimum(best, values.min(axis=0), out=best)
        return best

    def text_signature(self, text: str) -> np.ndarray:
        """Shingles then signature, in one call."""
        return self.signature(shingle_hashes(text))


def estimate_jaccard(first: np.ndarray, second: np.ndarray) -> float:
    """The fraction of positions where two signatures agree: an estimate of Jaccard similarity."""
    if first.shape != second.shape:
        raise ValueError(f"signatures differ in length: {first.shape} and {second.shape}")
    return float(np.count_nonzero(first == second)) / len(first)
