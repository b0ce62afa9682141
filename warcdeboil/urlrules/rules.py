"""URL rules learned per site from duplicate groups: which parameters and path variants leave a
page's content unchanged.

    rules = UrlRules()
    rules.learn(observations)          # (url, group id) of every page, grouped by site
    rules.save("rules.json")
    rules = UrlRules.load("rules.json")
    rules.canonical("http://example.com/a?id=3&utm_source=x")   # e.g. 'http://example.com/a?id=3'
    rules.duplicate_probability(url, seen_urls)                 # 0.0 … 1.0

Learning holds one site's URLs at a time; what stays are the counts of each hypothesis with
evidence. Hypotheses about a parameter or a variant in general (not about one path) are also
pooled over the run (*crawl* level, evidence from two sites at least): a rule learned there
applies to every site where it was not refuted, including sites the run never saw. The JSON
format is described in docs/url-rules.md.
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator
from itertools import groupby
from pathlib import Path
from typing import Any

from warcdeboil.errors import ConfigError
from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode

from .canonical import Key, canonical_with_trace
from .evidence import SiteEvidence, count_site, find_conflicts
from .stats import KNOWN_PRIOR, MIN_AGREE, QUANTILE, THRESHOLD, Evidence, is_known

__all__ = ["FORMAT", "SeenUrls", "UrlRules"]

FORMAT = "warcdeboil-url-rules"
VERSION = 1
# A rule is learned at the crawl level only from evidence of this many sites or more: one site's
# habits are that site's rules.
CRAWL_MIN_SITES = 2
# Values of one parameter whose p=v hypothesis a site keeps (those with the most pairs).
VALUES_KEPT = 50
# The kinds whose keys name no path: pooled over the crawl.
_GENERAL = ("param", "param_value", "variant")
_FIELDS: dict[str, tuple[str, ...]] = {
    "variant": ("variant",),
    "param": ("param",),
    "param_value": ("param", "value"),
    "path": ("path",),
    "path_param": ("path", "param"),
    "path_query_param": ("path", "query", "param"),
    "path_param_value": ("path", "param", "value"),
}
_DEFAULT_FORMS = {"scheme": "https", "www": "bare", "slash": "bare", "index": "slash"}


# Where the parameter's name is in each kind of key (variants and paths name none).
_NAME_AT = {"param": 1, "param_value": 1, "path_param": 2, "path_query_param": 3,
            "path_param_value": 2}


def _prior(key: Key) -> int:
    if key[0] == "variant":
        return KNOWN_PRIOR if is_known("variant", key[1]) else 1
    at = _NAME_AT.get(key[0])
    return KNOWN_PRIOR if at is not None and is_known("param", key[at]) else 1


def _pruned(hypotheses: dict[Key, Evidence]) -> dict[Key, Evidence]:
    """What a site keeps of its hypotheses: path-level ones only when they are rules or have
    :data:`MIN_AGREE` agreeing pairs (their pairs are counted in the site-level ones too), and
    per parameter the :data:`VALUES_KEPT` values with the most pairs (session ids would
    otherwise keep one entry per URL)."""
    kept: dict[Key, Evidence] = {}
    values: dict[str, list[tuple[bool, int, Key]]] = defaultdict(list)
    for key, ev in hypotheses.items():
        if key[0] in _GENERAL and key[0] != "param_value":
            kept[key] = ev
        elif key[0] == "param_value":
            # Refuted values first: the crawl level must hear of every disagreement it can.
            values[key[1]].append((not ev.refuted, -(ev.agree + ev.disagree + ev.conflicts),
                                   key))
        elif ev.decision(_prior(key)) == "irrelevant" or ev.agree >= MIN_AGREE:
            kept[key] = ev
    for ranked in values.values():
        for _, _, key in sorted(ranked)[:VALUES_KEPT]:
            kept[key] = hypotheses[key]
    return kept


def _overruled(key: Key, relevant: Callable[[str], bool]) -> bool:
    """A crawl-level ``p=v`` rule does not reach a site where ``p`` was shown to matter (or
    to merge different pages): which values of it change nothing there is for the site's own
    pairs to tell."""
    return key[0] == "param_value" and relevant(key[1])


class _Site:
    """The learned state of one site: its evidence, its preferred forms, and the decisions."""

    def __init__(self, name: str, urls: int, unstable: int,
                 hypotheses: dict[Key, Evidence], forms: dict[str, str]) -> None:
        self.name = name
        self.urls = urls
        self.unstable = unstable
        self.hypotheses = hypotheses
        self.forms = forms
        self.decisions: dict[Key, tuple[str, str]] = {}  # key -> (decision, "site" | "crawl")

    def relevant(self, name: str) -> bool:
        """Whether parameter ``name`` was shown to matter on the site (a pair of its URLs, or
        a conflict)."""
        known = self.hypotheses.get(("param", name))
        return known is not None and known.refuted


def _forms(evidence: SiteEvidence) -> dict[str, str]:
    f = evidence.forms
    return {
        "scheme": "https" if f["scheme:https"] > f["scheme:http"] else "http",
        "www": "www" if f["www:www"] > f["www:bare"] else "bare",
        "slash": "slash" if f["slash:slash"] > f["slash:bare"] else "bare",
        "index": "slash" if f["dir:slash"] >= f["dir:bare"] else "bare",
    }


class UrlRules:
    """URL rules per site, learned from duplicate groups (see the module's docstring)."""

    def __init__(self, site_key: SiteKeyMode | str = SiteKeyMode.HOST) -> None:
        self.site_key = SiteKeyMode(site_key)
        self._keyer = SiteKeyer(self.site_key)
        self._sites: dict[str, _Site] = {}
        self._crawl: dict[Key, Evidence] = {}
        self._crawl_sites: dict[Key, int] = {}
        self._crawl_decisions: dict[Key, str] = {}
        self._crawl_forms: dict[str, str] = dict(_DEFAULT_FORMS)

    # -- learning ---------------------------------------------------------------------------

    def learn(self, observations: Iterable[tuple[str, Hashable]]) -> UrlRules:
        """Learn from ``(url, group id)`` pairs: every page of a run, duplicates sharing a group
        id, a page without copies in a group of its own. The pairs must come grouped by site
        (:meth:`site_of`; warcdeboil's index is in that order, and ``sorted(observations,
        key=lambda o: rules.site_of(o[0]))`` will do): a site seen again after another one is
        an error, since its first part was already learned. Returns ``self``."""
        for site, items in groupby(observations, key=lambda o: self._keyer(o[0])):
            self.learn_site(site, items)
        self._decide()
        return self

    def site_of(self, url: str) -> str:
        """The site a URL's rules are learned and looked up under (``site_key``: its host
        without ``www.``, or its registered domain)."""
        return self._keyer(url)

    def learn_site(self, site: str, observations: Iterable[tuple[str, Hashable]]) -> None:
        """Count one site's evidence (decisions are made by :meth:`learn`, or :meth:`decide`
        after the last site)."""
        if site in self._sites:
            raise ConfigError(f"URL rules: observations of site {site!r} come in two runs; "
                              "give them grouped by site")
        evidence, stable = count_site(site, observations)
        forms = _forms(evidence)
        hypotheses = dict(evidence.hypotheses)

        def relevant(name: str) -> bool:
            known = hypotheses.get(("param", name))
            return known is not None and known.refuted

        def optimistic(key: Key) -> bool:
            # Every rule that could still be learned for the site: the conflict check looks
            # at all of them, so the rules finally applied (fewer) merge no different pages.
            known = hypotheses.get(key)
            if known is not None:
                return not known.refuted and known.agree > 0
            # Untested: a parameter or a variant in general (a crawl-level rule could reach
            # the site); p=v rules are covered by their parameter's (removing p only when it
            # is v merges fewer URLs than removing it always).
            return key[0] in ("param", "variant")

        def prefer(variant: str) -> str:
            return forms[variant.split(":", 1)[0]]

        for _ in range(len(hypotheses) + 1):
            blamed = find_conflicts(stable, optimistic, prefer,
                                    lambda key: key in evidence.hypotheses, relevant)
            if not blamed:
                break
            for key, count in blamed.items():
                hypotheses.setdefault(key, Evidence()).conflicts += count
        self._sites[site] = _Site(site, evidence.urls, evidence.unstable, _pruned(hypotheses),
                                  forms)

    def learned_site(self, site: str) -> _Site:
        """What :meth:`learn_site` kept of ``site`` (picklable): a process that learned one
        site hands it to the one that decides (:meth:`add_learned_site`; the Spark engine)."""
        return self._sites[site]

    def add_learned_site(self, state: _Site) -> None:
        """A site learned elsewhere (:meth:`learned_site`); decisions wait for :meth:`decide`."""
        if state.name in self._sites:
            raise ConfigError(f"URL rules: site {state.name!r} learned twice")
        self._sites[state.name] = state

    def decide(self) -> None:
        """Make the decisions from the evidence counted so far (``learn`` calls it)."""
        self._decide()

    def _decide(self) -> None:
        crawl: dict[Key, Evidence] = defaultdict(Evidence)
        sites: dict[Key, int] = defaultdict(int)
        votes: dict[str, int] = defaultdict(int)
        for site in self._sites.values():
            for key, evidence in site.hypotheses.items():
                if key[0] in _GENERAL:
                    crawl[key].merge(evidence)
                    sites[key] += 1
            for variant, form in site.forms.items():
                votes[f"{variant}:{form}"] += 1
        self._crawl, self._crawl_sites = dict(crawl), dict(sites)
        self._crawl_decisions = {
            key: ("undecided" if ev.agree and not ev.refuted and sites[key] < CRAWL_MIN_SITES
                  else ev.decision(_prior(key)))
            for key, ev in crawl.items()}
        self._crawl_forms = {
            variant: max(sorted(forms), key=lambda f: votes[f"{variant}:{f}"])
            for variant, forms in (("scheme", ("https", "http")), ("www", ("bare", "www")),
                                   ("slash", ("bare", "slash")), ("index", ("slash", "bare")))}
        for site in self._sites.values():
            site.decisions = {}
            for key, evidence in site.hypotheses.items():
                decision = evidence.decision(_prior(key))
                if (decision == "undecided" and key[0] in _GENERAL
                        and self._crawl_decisions.get(key) == "irrelevant"
                        and not _overruled(key, site.relevant)):
                    site.decisions[key] = ("irrelevant", "crawl")
                else:
                    site.decisions[key] = (decision, "site")

    # -- using ------------------------------------------------------------------------------

    def _active(self, site: _Site | None) -> Callable[[Key], bool]:
        def active(key: Key) -> bool:
            if site is not None:
                decided = site.decisions.get(key)
                if decided is not None:
                    return decided[0] == "irrelevant"
            if site is not None and _overruled(key, site.relevant):
                return False
            return key[0] in _GENERAL and self._crawl_decisions.get(key) == "irrelevant"
        return active

    def _prefer(self, site: _Site | None) -> Callable[[str], str]:
        forms = site.forms if site is not None else self._crawl_forms
        return lambda variant: forms[variant.split(":", 1)[0]]

    def _confidence(self, site: _Site | None, key: Key) -> float:
        if site is not None:
            decided = site.decisions.get(key)
            if decided is not None and decided[1] == "site":
                return site.hypotheses[key].confidence(_prior(key))
        return self._crawl[key].confidence(_prior(key))

    def _trace(self, url: str) -> tuple[str, set[Key], _Site | None]:
        site = self._sites.get(self._keyer(url))
        form, trace = canonical_with_trace(url, self._active(site), self._prefer(site))
        return form, trace, site

    def canonical(self, url: str) -> str:
        """``url`` without the parameters learned irrelevant on its site (or on its path) and
        with the learned path variants normalised to the site's usual form; everything else
        byte for byte as given (nothing re-encoded, nothing sorted)."""
        return self._trace(url)[0]

    def seen(self, urls: Iterable[str] = ()) -> SeenUrls:
        """An index of fetched URLs by their canonical form under these rules, for
        :meth:`duplicate_probability` at a cost that does not grow with the crawl."""
        index = SeenUrls(self)
        for url in urls:
            index.add(url)
        return index

    def duplicate_probability(self, url: str,
                              seen: SeenUrls | Collection[str] | Iterable[str]) -> float:
        """The probability that fetching ``url`` brings nothing new, given the URLs in ``seen``
        already fetched: 1.0 when ``url`` is among them; else, over the seen URLs with the
        same canonical form, the highest product of the confidences of the rules that took
        either URL there; 0.0 when no seen URL has its canonical form.

        ``seen`` from :meth:`seen` looks at the URLs of ``url``'s form alone; any other
        collection is read whole, each URL's form worked out again."""
        form, trace, site = self._trace(url)
        if isinstance(seen, SeenUrls) and seen.rules is self:
            candidates: Iterable[tuple[str, frozenset[Key] | set[Key], _Site | None]] = (
                seen.with_form(form))
        else:
            candidates = self._with_form(form, seen)
        best = 0.0
        for other, other_trace, other_site in candidates:
            if other == url:
                return 1.0
            probability = math.prod(self._confidence(site, key) for key in trace) * math.prod(
                self._confidence(other_site, key) for key in other_trace - trace)
            best = max(best, probability)
        return best

    def _with_form(self, form: str, urls: Iterable[str],
                   ) -> Iterator[tuple[str, set[Key], _Site | None]]:
        for other in urls:
            other_form, other_trace, other_site = self._trace(other)
            if other_form == form:
                yield other, other_trace, other_site

    def sites(self) -> list[str]:
        """The sites rules were learned for, sorted."""
        return sorted(self._sites)

    def rules(self, site: str | None = None) -> Iterator[dict[str, Any]]:
        """The hypotheses of ``site`` (or of the crawl level, for None) as the JSON writes them."""
        if site is None:
            for key in sorted(self._crawl):
                yield self._entry(key, self._crawl[key], self._crawl_decisions[key], None,
                                  self._crawl_sites[key])
            return
        state = self._sites[site]
        for key in sorted(state.hypotheses):
            decision, by = state.decisions[key]
            yield self._entry(key, state.hypotheses[key], decision, by, None)

    def irrelevant(self, site: str) -> list[Key]:
        """Keys of the rules applied on ``site`` (its own and those of the crawl level)."""
        state = self._sites.get(site)
        keys = {k for k, (d, _) in state.decisions.items() if d == "irrelevant"} if state else set()
        blocked = set(state.decisions) if state else set()
        keys |= {k for k, d in self._crawl_decisions.items() if d == "irrelevant"
                 and k not in blocked and not (state and _overruled(k, state.relevant))}
        return sorted(keys)

    def _entry(self, key: Key, ev: Evidence, decision: str, by: str | None,
               sites: int | None) -> dict[str, Any]:
        entry: dict[str, Any] = {"kind": key[0]}
        entry.update(zip(_FIELDS[key[0]], key[1:], strict=True))
        entry.update(agree=ev.agree, disagree=ev.disagree)
        if ev.joint:
            entry["joint"] = ev.joint
        if ev.conflicts:
            entry["conflicts"] = ev.conflicts
        if sites is not None:
            entry["sites"] = sites
        prior = _prior(key)
        entry["confidence"] = round(ev.confidence(prior), 4)
        if by == "crawl":
            entry["confidence"] = round(self._crawl[key].confidence(prior), 4)
        entry["decision"] = decision
        if by == "crawl":
            entry["by"] = "crawl"
        if prior != 1:
            entry["prior"] = prior
        return entry

    # -- files ------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "site_key": self.site_key.value,
            "thresholds": {"quantile": QUANTILE, "confidence": THRESHOLD,
                           "min_agree": MIN_AGREE, "known_prior": KNOWN_PRIOR,
                           "crawl_min_sites": CRAWL_MIN_SITES},
            "crawl": {"forms": self._crawl_forms, "rules": list(self.rules(None))},
            "sites": {
                name: {"urls": s.urls, "unstable_urls": s.unstable, "forms": s.forms,
                       "rules": list(self.rules(name))}
                for name, s in sorted(self._sites.items())},
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the rules as JSON (one entry per site, hypotheses with their counts)."""
        Path(path).write_text(self.dumps(), encoding="utf-8")

    def dumps(self) -> str:
        """The text :meth:`save` writes."""
        return json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> UrlRules:
        """Read rules written by :meth:`save`; a file that is not one is a :class:`ConfigError`
        naming it."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls.from_json(data)
        except OSError as error:
            raise ConfigError(f"{path}: cannot read URL rules: {error.strerror or error}") \
                from None
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise ConfigError(f"{path}: not a URL rules file ({_describe(error)})") from None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> UrlRules:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"no \"format\": \"{FORMAT}\"")
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, this warcdeboil reads {VERSION}")
        rules = cls(data["site_key"])
        for name, site in data["sites"].items():
            hypotheses: dict[Key, Evidence] = {}
            decisions: dict[Key, tuple[str, str]] = {}
            for entry in site["rules"]:
                key, evidence, decision, by = _read_entry(entry)
                hypotheses[key] = evidence
                decisions[key] = (decision, by or "site")
            state = _Site(str(name), int(site["urls"]), int(site["unstable_urls"]),
                          hypotheses, _read_forms(site["forms"]))
            state.decisions = decisions
            rules._sites[state.name] = state
        for entry in data["crawl"]["rules"]:
            key, evidence, decision, _ = _read_entry(entry)
            rules._crawl[key] = evidence
            rules._crawl_decisions[key] = decision
            rules._crawl_sites[key] = int(entry["sites"])
        rules._crawl_forms = _read_forms(data["crawl"]["forms"])
        return rules


def _read_forms(forms: dict[str, str]) -> dict[str, str]:
    allowed = {"scheme": ("http", "https"), "www": ("www", "bare"), "slash": ("slash", "bare"),
               "index": ("slash", "bare")}
    out = {}
    for variant, choices in allowed.items():
        if forms[variant] not in choices:
            raise ValueError(f"form {variant}: {forms[variant]!r} is not one of {choices}")
        out[variant] = forms[variant]
    return out


def _read_entry(entry: dict[str, Any]) -> tuple[Key, Evidence, str, str | None]:
    kind = entry["kind"]
    if kind not in _FIELDS:
        raise ValueError(f"unknown rule kind {kind!r}")
    key: Key = (kind, *(_text(entry[f]) for f in _FIELDS[kind]))
    evidence = Evidence(int(entry["agree"]), int(entry["disagree"]), int(entry.get("joint", 0)),
                        int(entry.get("conflicts", 0)))
    decision = entry["decision"]
    if decision not in ("irrelevant", "relevant", "undecided"):
        raise ValueError(f"unknown decision {decision!r}")
    by = entry.get("by")
    if by not in (None, "crawl"):
        raise ValueError(f"unknown \"by\" {by!r}")
    return key, evidence, decision, by


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not a string")
    return value


def _describe(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f"missing {error.args[0]!r}"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


class SeenUrls:
    """The URLs a crawler has fetched, grouped by their canonical form under one
    :class:`UrlRules` (made by :meth:`UrlRules.seen`), each with the rules that took it there:
    a duplicate probability then reads only the URLs of one form. One entry a distinct URL."""

    def __init__(self, rules: UrlRules) -> None:
        self.rules = rules
        self._by_form: dict[str, dict[str, tuple[frozenset[Key], _Site | None]]] = {}

    def add(self, url: str) -> None:
        """Note ``url`` as fetched (again: no change)."""
        form, trace, site = self.rules._trace(url)
        self._by_form.setdefault(form, {}).setdefault(url, (frozenset(trace), site))

    def with_form(self, form: str) -> Iterator[tuple[str, frozenset[Key], _Site | None]]:
        """The seen URLs whose canonical form is ``form``, in the order they were added, each
        with the rules that took it there and its site."""
        for url, (trace, site) in self._by_form.get(form, {}).items():
            yield url, trace, site

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and url in self._by_form.get(self.rules.canonical(url), {})

    def __iter__(self) -> Iterator[str]:
        for same in self._by_form.values():
            yield from same

    def __len__(self) -> int:
        return sum(map(len, self._by_form.values()))
