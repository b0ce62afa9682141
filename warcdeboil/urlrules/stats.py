"""How much a hypothesis is believed: a Beta posterior over "a pair of URLs differing this way
is a duplicate", its lower bound as the confidence, and the decision taken from it.

Each hypothesis counts pairs of observed URLs that differ only in what it names: ``agree`` pairs
had the same content, ``disagree`` pairs did not. The posterior is
Beta(agree + prior, disagree + 1); the *confidence* is its 5 % quantile (we are 95 % sure that at
least that share of such pairs are duplicates). A hypothesis becomes a rule
(``irrelevant``) when no reliable pair disagrees, at least :data:`MIN_AGREE` pairs agree and the
confidence reaches :data:`THRESHOLD`; one disagreeing pair makes it ``relevant`` for good.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from statistics import NormalDist

__all__ = [
    "KNOWN_PRIOR",
    "MIN_AGREE",
    "QUANTILE",
    "THRESHOLD",
    "Evidence",
    "beta_quantile",
    "is_known",
]

# The one-sided credible level of the confidence: the 5 % quantile of the posterior.
QUANTILE = 0.05
# A rule needs 95 % belief that most pairs differing its way are duplicates. With the uniform
# prior and no disagreement that takes 4 agreeing pairs (0.05^(1/5) = 0.55; 3 give 0.47).
THRESHOLD = 0.5
# Never fewer agreeing pairs than this, whatever the prior: a prior lowers the evidence needed,
# it never replaces it.
MIN_AGREE = 2
# Prior successes (Beta(KNOWN_PRIOR, 1)) for parameters and variants known to change nothing
# almost everywhere — tracking and session parameters, http/https, www., the default port, a
# trailing slash, default documents, fragments, an empty query, the order of the parameters
# (the most common DUST rules, Bar-Yossef et al. 2007): worth 3
# agreeing pairs, so 2 observed ones make a rule (0.05^(1/6) = 0.61). Letter case, other
# parameters and other path parameters get the uniform prior.
KNOWN_PRIOR = 4

_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "hsa_", "_hs")
_TRACKING = frozenset({
    "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "igshid", "twclid",
    "ttclid", "mc_cid", "mc_eid", "_ga", "_gl", "oly_enc_id", "oly_anon_id", "vero_id",
    "mkt_tok", "wickedid", "rb_clickid", "s_cid", "ncid",
})
_SESSION = frozenset({
    "jsessionid", "phpsessid", "sid", "sessionid", "session_id", "sessid", "aspsessionid",
    "cfid", "cftoken", "zenid", "oscsid",
})
_KNOWN_VARIANTS = ("scheme", "www", "port", "slash", "fragment", "index:", "empty_query",
                   "query_order")


def is_known(kind: str, name: str) -> bool:
    """Whether a parameter (``kind`` 'param') or a variant (``kind`` 'variant', e.g. 'scheme',
    'index:index.html', 'path_param:jsessionid') gets the :data:`KNOWN_PRIOR`."""
    if kind == "variant":
        if name.startswith("path_param:"):
            return name.split(":", 1)[1] in _SESSION
        return name.startswith(_KNOWN_VARIANTS)
    low = name.lower()
    return low in _TRACKING or low in _SESSION or low.startswith(_TRACKING_PREFIXES)


def _log_binomial_tail(n: int, k: int, x: float) -> float:
    """log P(Binomial(n, x) >= k)."""
    if k <= 0:
        return 0.0
    if k > n:
        return -math.inf
    lx, l1x = math.log(x), math.log1p(-x)
    terms = [math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lx
             + (n - j) * l1x for j in range(k, n + 1)]
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms))


@functools.lru_cache(maxsize=4096)
def beta_quantile(q: float, a: int, b: int) -> float:
    """The ``q`` quantile of Beta(a, b) for whole a, b ≥ 1 (bisection on its distribution
    function, which for whole parameters is a binomial tail: I_x(a, b) = P(Bin(a+b-1, x) ≥ a)).
    Beyond 400 counts in all, the normal approximation of the Beta is used (within 0.005 of
    the exact quantile there).

    >>> round(beta_quantile(0.05, 5, 1), 4)
    0.5493
    """
    if b == 1:
        return float(q ** (1.0 / a))
    total = a + b
    if total > 400:
        mean = a / total
        sd = math.sqrt(a * b / (total * total * (total + 1)))
        return min(1.0, max(0.0, mean + NormalDist().inv_cdf(q) * sd))
    low, high = 0.0, 1.0
    for _ in range(50):
        mid = (low + high) / 2
        cdf = math.exp(_log_binomial_tail(a + b - 1, a, mid)) if 0 < mid < 1 else mid
        if cdf < q:
            low = mid
        else:
            high = mid
    return (low + high) / 2


@dataclass
class Evidence:
    """Pair counts of one hypothesis: ``agree`` pairs were duplicates (``joint`` of them differed
    in more than one parameter at once), ``disagree`` were not; ``conflicts`` are pairs of
    different content that the rules learned together would have merged."""

    agree: int = 0
    disagree: int = 0
    joint: int = 0
    conflicts: int = 0

    def add(self, agree: int, disagree: int, joint: int = 0) -> None:
        self.agree += agree
        self.disagree += disagree
        self.joint += joint

    def merge(self, other: Evidence) -> None:
        self.agree += other.agree
        self.disagree += other.disagree
        self.joint += other.joint
        self.conflicts += other.conflicts

    @property
    def refuted(self) -> bool:
        return self.disagree > 0 or self.conflicts > 0

    def confidence(self, prior: int) -> float:
        return beta_quantile(QUANTILE, self.agree + prior, self.disagree + self.conflicts + 1)

    def decision(self, prior: int) -> str:
        """'relevant' (refuted), 'irrelevant' (a rule) or 'undecided' (too little evidence)."""
        if self.refuted:
            return "relevant"
        if self.agree >= MIN_AGREE and self.confidence(prior) >= THRESHOLD:
            return "irrelevant"
        return "undecided"
