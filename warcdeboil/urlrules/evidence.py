"""Counting, on one site, the pairs of URLs that agree or disagree with each hypothesis.

URLs are put in *classes*: the URLs a rule would make equal (for "``p`` does not matter", those
equal once ``p`` is removed). Every pair of a class is evidence for the rule: a duplicate pair
(same group) agrees, any other disagrees. Pairs are counted from the groups' sizes within the
class, never listed, so a class of a million session ids costs one pass.

A URL captured more than once with different content (two groups) is *unstable*: its content
depends on when it was fetched, not on its URL, so it is left out of every count (and counted
as such). Only stable URLs give the reliable disagreements that refute a rule.

Pairs differing in several parameters at once (``?utm_source=…&utm_medium=…`` added together)
are found within the URLs of one path: each pair that is a duplicate credits every parameter it
differs in (``joint``); the pairs that are not are left to the conflict check
(:func:`find_conflicts`), which refutes the rules that would have merged them.

Cost of one site: its distinct URLs with their group (a dict), each URL's query parsed once, one
counter per class of two URLs or more (at most one per URL and parameter, plus one per URL and
variant), and pairs within a path only up to :data:`PATH_PAIRS_LIMIT` URLs per path. About
4 KiB per URL in CPython (measured: one site of 134,000 URLs peaks at 540 MiB and takes 18
CPU-s); only its counters stay afterwards (pruned: see ``rules._pruned``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from itertools import combinations

from .canonical import Key, canonical_with_trace
from .stats import Evidence
from .urls import (
    UrlParts,
    path_params,
    query_chunks,
    split_url,
    strip_default_document,
    without_default_port,
    without_path_params,
)

__all__ = ["PATH_PAIRS_LIMIT", "SiteEvidence", "count_site", "find_conflicts"]

# URLs of one path whose pairs are compared one by one for multi-parameter differences: beyond
# this, the path's pairs are only counted in bulk (hypothesis (a) and single parameters).
PATH_PAIRS_LIMIT = 64


@dataclass
class SiteEvidence:
    """What one site's observations say: pair counts per hypothesis, and the tallies the
    preferred form of each variant is chosen by."""

    site: str
    urls: int = 0
    unstable: int = 0
    hypotheses: dict[Key, Evidence] = field(default_factory=lambda: defaultdict(Evidence))
    forms: Counter[str] = field(default_factory=Counter)

    def add(self, key: Key, agree: int, disagree: int, joint: int = 0) -> None:
        if agree or disagree:
            self.hypotheses[key].add(agree, disagree, joint)


def _pairs(groups: Iterable[Hashable]) -> tuple[int, int]:
    """(duplicate pairs, other pairs) among members of the given groups."""
    sizes = Counter(groups)
    n = sum(sizes.values())
    dup = sum(c * (c - 1) // 2 for c in sizes.values())
    return dup, n * (n - 1) // 2 - dup


def _cross(left: Iterable[Hashable], right: Iterable[Hashable]) -> tuple[int, int]:
    """(duplicate pairs, other pairs) between two disjoint sets of members."""
    a, b = Counter(left), Counter(right)
    dup = sum(c * b[g] for g, c in a.items())
    return dup, sum(a.values()) * sum(b.values()) - dup


def _count_params(evidence: SiteEvidence, stable: dict[str, Hashable],
                  parts: dict[str, UrlParts]) -> None:
    """Hypotheses (b)-(e): classes of URLs equal once one parameter is removed."""
    by_query: dict[tuple[str, str | None], Hashable] = {}
    classes: dict[tuple[str, str, str, str], list[tuple[str, Hashable]]] = defaultdict(list)
    for url, group in stable.items():
        p = parts[url]
        by_query[p.base, p.query] = group
        chunks = query_chunks(p.query)
        for name in dict.fromkeys(c.name for c in chunks):
            if not name:
                continue
            rest = "&".join(c.raw for c in chunks if c.name != name)
            values = [c.value for c in chunks if c.name == name]
            classes[p.base, p.path, rest, name].append(
                (values[0] if len(values) == 1 else "\0".join(values), group))
    for (base, path, rest, name), present in classes.items():
        absent = by_query.get((base, rest or None), by_query.get((base, rest)))
        members = [g for _, g in present] + ([absent] if absent is not None else [])
        if len(members) < 2:
            continue
        dup, other = _pairs(members)
        for key in (("param", name), ("path_param", path, name),
                    ("path_query_param", path, rest, name)):
            evidence.add(key, dup, other)
        if absent is None:
            continue
        by_value: dict[str, list[Hashable]] = defaultdict(list)
        for value, group in present:
            if "\0" not in value:
                by_value[value].append(group)
        for value, groups in by_value.items():
            dup, other = _cross(groups, [absent])
            evidence.add(("param_value", name, value), dup, other)
            evidence.add(("path_param_value", path, name, value), dup, other)


def _count_paths(evidence: SiteEvidence, stable: dict[str, Hashable],
                 parts: dict[str, UrlParts]) -> None:
    """Hypothesis (a), and duplicate pairs differing in several parameters at once."""
    by_base: dict[tuple[str, str], list[str]] = defaultdict(list)
    for url in stable:
        by_base[parts[url].base, parts[url].path].append(url)
    for (_, path), urls in by_base.items():
        if len(urls) < 2:
            continue
        dup, other = _pairs(stable[u] for u in urls)
        evidence.add(("path", path), dup, other)
        if len(urls) > PATH_PAIRS_LIMIT:
            continue
        params = {u: _param_map(parts[u].query) for u in urls}
        for u, v in combinations(urls, 2):
            if stable[u] != stable[v]:
                continue
            pu, pv = params[u], params[v]
            differ = [n for n in pu.keys() | pv.keys() if pu.get(n) != pv.get(n)]
            if len(differ) < 2:
                continue
            for name in differ:
                evidence.add(("param", name), 1, 0, joint=1)
                evidence.add(("path_param", path, name), 1, 0, joint=1)
            # When one URL is the other plus the parameters, each ``p=v`` added is credited.
            small, large = (pu, pv) if len(pu) < len(pv) else (pv, pu)
            if all(n not in small and len(large[n]) == 1 for n in differ):
                for name in differ:
                    value = large[name][0]
                    evidence.add(("param_value", name, value), 1, 0, joint=1)
                    evidence.add(("path_param_value", path, name, value), 1, 0, joint=1)


def _param_map(query: str | None) -> dict[str, tuple[str, ...]]:
    values: dict[str, list[str]] = defaultdict(list)
    for chunk in query_chunks(query):
        if chunk.name:
            values[chunk.name].append(chunk.value)
    return {name: tuple(v) for name, v in values.items()}


def _variant_images(p: UrlParts) -> list[tuple[str, str, str | None]]:
    """(variant, image, tag) for each variant that applies to a URL: URLs of one image differ in
    that variant only. ``tag`` is None when every pair of the class counts, else pairs count only
    between a tagged member and an untagged one (e.g. ``/d/index.html`` and ``/d/``), each
    tagged with its name."""
    images: list[tuple[str, str, str | None]] = []
    if p.fragment is not None:
        images.append(("fragment", p.with_(fragment=None).join(), None))
    else:
        images.append(("fragment", p.join(), None))
    images.append(("empty_query", p.with_(query=None if p.query == "" else p.query).join(),
                   None))
    chunks = p.query.split("&") if p.query else []
    images.append(("query_order", p.with_(query="&".join(sorted(chunks)) if chunks else
                                          p.query).join(), None))
    if not p.authority:
        return images
    images.append(("port", p.with_(netloc=without_default_port(p.scheme, p.netloc)).join(),
                   None))
    has_www = p.netloc[:4].lower() == "www."
    bare = p.netloc[4:] if has_www else p.netloc
    images.append(("www", p.with_(netloc=bare.lower()).join(), None))
    if p.scheme.lower() in ("http", "https"):
        images.append(("scheme", p.with_(scheme="").join(), None))
        # Scheme and www. changed at once (``https://www.`` for ``http://``): tagged with both.
        images.append(("scheme+www", p.with_(scheme="", netloc=bare.lower()).join(),
                       f"{p.scheme.lower()}|{has_www}"))
    images.append(("case", p.with_(path=p.path.lower()).join(), None))
    if p.path not in ("", "/"):
        images.append(("slash", p.with_(path=p.path.rstrip("/") or "/").join(), None))
    directory, document = strip_default_document(p.path)
    trimmed = directory.rstrip("/") or "/"
    images.append(("index", p.with_(path=trimmed).join(), document and f"index:{document}"))
    names = path_params(p.path)
    image = p.with_(path=without_path_params(p.path)).join()
    for name in names or [None]:  # type: ignore[list-item]
        images.append(("path_param", image, name and f"path_param:{name}"))
    return images


def _count_variants(evidence: SiteEvidence, stable: dict[str, Hashable],
                    parts: dict[str, UrlParts]) -> None:
    classes: dict[tuple[str, str], list[tuple[str | None, Hashable]]] = defaultdict(list)
    for url, group in stable.items():
        for variant, image, tag in _variant_images(parts[url]):
            classes[variant, image].append((tag, group))
    for (variant, _), members in classes.items():
        if len(members) < 2:
            continue
        if variant == "scheme+www":
            by_tag: dict[str | None, list[Hashable]] = defaultdict(list)
            for tag, group in members:
                by_tag[tag].append(group)
            for left, right in combinations(sorted(by_tag, key=str), 2):
                (ls, lw), (rs, rw) = str(left).split("|"), str(right).split("|")
                if ls != rs and lw != rw:
                    dup, other = _cross(by_tag[left], by_tag[right])
                    evidence.add(("variant", "scheme"), dup, other, joint=dup)
                    evidence.add(("variant", "www"), dup, other, joint=dup)
        elif variant in ("index", "path_param"):
            untagged = [g for t, g in members if t is None]
            if not untagged:
                continue
            tags = sorted({t for t, _ in members if t is not None})
            for tag in tags:
                dup, other = _cross([g for t, g in members if t == tag], untagged)
                evidence.add(("variant", tag), dup, other)
        else:
            dup, other = _pairs(g for _, g in members)
            evidence.add(("variant", variant), dup, other)


def _count_forms(evidence: SiteEvidence, urls: Iterable[UrlParts]) -> None:
    """How the site writes its URLs: the preferred form of a variant is the commoner one."""
    for p in urls:
        if not p.authority:
            continue
        evidence.forms[f"scheme:{p.scheme.lower()}"] += 1
        evidence.forms["www:www" if p.netloc[:4].lower() == "www." else "www:bare"] += 1
        if p.path not in ("", "/"):
            evidence.forms["slash:slash" if p.path.endswith("/") else "slash:bare"] += 1
        if strip_default_document(p.path)[1] is None and p.path not in ("", "/"):
            evidence.forms["dir:slash" if p.path.endswith("/") else "dir:bare"] += 1


def count_site(site: str, observations: Iterable[tuple[str, Hashable]]) -> tuple[
        SiteEvidence, dict[str, Hashable]]:
    """The evidence of one site's ``(url, group)`` observations, and its stable URLs with their
    group (for :func:`find_conflicts`)."""
    groups: dict[str, set[Hashable]] = defaultdict(set)
    for url, group in observations:
        groups[url].add(group)
    evidence = SiteEvidence(site, urls=len(groups))
    stable = {url: next(iter(g)) for url, g in groups.items() if len(g) == 1}
    evidence.unstable = len(groups) - len(stable)
    parts = {url: split_url(url) for url in stable}
    _count_params(evidence, stable, parts)
    _count_paths(evidence, stable, parts)
    _count_variants(evidence, stable, parts)
    _count_forms(evidence, parts.values())
    return evidence, stable


def _suspects(keys: set[Key], tested: Callable[[Key], bool],
              relevant: Callable[[str], bool]) -> set[Key]:
    """Of the rules that took two different pages to one form, those to blame: rules about a
    parameter the site showed to matter, else rules the site never tested (no pair of its URLs
    for or against), else all. A rule its own pairs support is not refuted by one assumed."""
    about_relevant = {k for k in keys if k[0] in _NAME_AT and relevant(k[_NAME_AT[k[0]]])}
    return about_relevant or {k for k in keys if not tested(k)} or keys


_NAME_AT = {"param": 1, "param_value": 1, "path_param": 2, "path_query_param": 3,
            "path_param_value": 2}


def find_conflicts(stable: dict[str, Hashable], active: Callable[[Key], bool],
                   prefer: Callable[[str], str], tested: Callable[[Key], bool],
                   relevant: Callable[[str], bool]) -> Counter[Key]:
    """Rules (of those ``active`` accepts) that merge URLs of different content: for every two
    stable URLs of different groups with one canonical form, the rules applied to either of
    them that :func:`_suspects` picks, counted once per such pair (each URL of a form with
    several groups is paired with one URL of another group). ``relevant(name)``: the site
    showed parameter ``name`` to matter."""
    by_form: dict[str, list[tuple[Hashable, set[Key]]]] = defaultdict(list)
    for url, group in stable.items():
        form, trace = canonical_with_trace(url, active, prefer)
        by_form[form].append((group, trace))
    blamed: Counter[Key] = Counter()
    for members in by_form.values():
        if len(members) < 2:
            continue
        # Each URL against the first URL of another group: linear in the form's URLs, and
        # every URL of a mixed form is in a pair.
        first = members[0][0]
        other = next((m for m in members if m[0] != first), None)
        if other is None:
            continue
        for group, trace in members:
            partner = other if group == first else members[0]
            # The rules that fired on one URL only are what told them apart; when both went
            # through the same rules, every one of them is suspect.
            suspects = (trace ^ partner[1]) or (trace | partner[1])
            for key in _suspects(suspects, tested, relevant):
                blamed[key] += 1
    return blamed
