"""URL rules learned per site from duplicate groups (issue 18): which query parameters and path
variants leave a page's content unchanged, tested as MaybeDont's hypotheses with pair counts.

- :mod:`.urls` cuts URLs into parts and glues them back byte for byte;
- :mod:`.stats` turns pair counts into a confidence (a Beta posterior's lower bound) and a
  decision;
- :mod:`.evidence` counts, on one site, the pairs for and against each hypothesis;
- :mod:`.canonical` applies a set of rules to a URL, remembering which fired;
- :mod:`.rules` holds :class:`UrlRules`: learn, save, load, canonical, duplicate_probability
  (with :class:`SeenUrls`, the fetched URLs indexed by canonical form).
"""

from .canonical import canonical_with_trace
from .evidence import PATH_PAIRS_LIMIT, SiteEvidence, count_site, find_conflicts
from .rules import CRAWL_MIN_SITES, FORMAT, SeenUrls, UrlRules
from .stats import KNOWN_PRIOR, MIN_AGREE, QUANTILE, THRESHOLD, Evidence, beta_quantile, is_known
from .urls import DEFAULT_DOCUMENTS, UrlParts, query_chunks, split_url

__all__ = [
    "CRAWL_MIN_SITES",
    "DEFAULT_DOCUMENTS",
    "FORMAT",
    "KNOWN_PRIOR",
    "MIN_AGREE",
    "PATH_PAIRS_LIMIT",
    "QUANTILE",
    "THRESHOLD",
    "Evidence",
    "SeenUrls",
    "SiteEvidence",
    "UrlParts",
    "UrlRules",
    "beta_quantile",
    "canonical_with_trace",
    "count_site",
    "find_conflicts",
    "is_known",
    "query_chunks",
    "split_url",
]
