"""URL rules: each hypothesis learned from pairs, relevant parameters kept, byte-exact URLs."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Hashable, Iterable
from pathlib import Path

import pytest
from conftest import ROOT, load_script, shared_file
from hypothesis import given, settings
from hypothesis import strategies as st

import warcdeboil
from warcdeboil.errors import ConfigError, WarcDeboilError
from warcdeboil.urlrules import UrlRules, beta_quantile, query_chunks, split_url

Obs = list[tuple[str, Hashable]]


def learned(observations: Iterable[tuple[str, Hashable]]) -> UrlRules:
    rules = UrlRules()
    return rules.learn(sorted(observations, key=lambda o: rules.site_of(o[0])))


def articles(host: str, n: int = 6, path: str = "/a/{}") -> Obs:
    return [(f"http://{host}{path.format(i)}", f"{host}#{i}") for i in range(n)]


def decision(rules: UrlRules, site: str, **fields: str) -> dict[str, object]:
    for entry in rules.rules(site):
        if all(entry.get(k) == v for k, v in fields.items()):
            return entry
    raise AssertionError(f"no hypothesis {fields} on {site}")


# -- each hypothesis ----------------------------------------------------------------------------


def test_param_never_matters_on_site_b() -> None:
    obs = articles("ex.com") + [(f"http://ex.com/a/{i}?ref=feed{i}", f"ex.com#{i}")
                                for i in range(5)]
    rules = learned(obs)
    entry = decision(rules, "ex.com", kind="param", param="ref")
    assert (entry["agree"], entry["disagree"], entry["decision"]) == (5, 0, "irrelevant")
    assert entry["confidence"] == round(0.05 ** (1 / 6), 4)
    assert rules.canonical("http://ex.com/a/9?x=1&ref=zz") == "http://ex.com/a/9?x=1"


def test_three_pairs_without_a_prior_are_not_enough() -> None:
    obs = articles("ex.com") + [(f"http://ex.com/a/{i}?ref=f", f"ex.com#{i}") for i in range(3)]
    rules = learned(obs)
    entry = decision(rules, "ex.com", kind="param", param="ref")
    assert (entry["agree"], entry["decision"]) == (3, "undecided")
    assert rules.canonical("http://ex.com/a/1?ref=f") == "http://ex.com/a/1?ref=f"


def test_relevant_params_are_never_dropped() -> None:
    # id and page change the content: one disagreeing pair each, against many agreeing ones
    obs = [(f"http://ex.com/article.php?id={i}", f"g{i}") for i in range(8)]
    obs += [(f"http://ex.com/article.php?id={i}&page=1", f"g{i}") for i in range(8)]
    obs += [("http://ex.com/article.php?id=3&page=2", "g3-p2")]
    rules = learned(obs)
    assert decision(rules, "ex.com", kind="param", param="id")["decision"] == "relevant"
    page = decision(rules, "ex.com", kind="param", param="page")
    assert (page["agree"], page["disagree"], page["decision"]) == (8, 2, "relevant")
    assert decision(rules, "ex.com", kind="param_value", param="page",
                    value="1")["decision"] == "irrelevant"
    assert rules.canonical("http://ex.com/article.php?id=3&page=2") == \
        "http://ex.com/article.php?id=3&page=2"
    assert rules.canonical("http://ex.com/article.php?id=5&page=1") == \
        "http://ex.com/article.php?id=5"


def test_one_reliable_disagreement_outweighs_any_agreement() -> None:
    obs = [(f"http://ex.com/p{i}?utm_source=x{i}", f"g{i}") for i in range(50)]
    obs += [(f"http://ex.com/p{i}", f"g{i}") for i in range(50)]
    obs += [("http://ex.com/q?utm_source=a", "qa"), ("http://ex.com/q", "qb")]
    rules = learned(obs)
    entry = decision(rules, "ex.com", kind="param", param="utm_source")
    assert (entry["agree"], entry["disagree"], entry["decision"]) == (50, 1, "relevant")
    assert "utm_source" in rules.canonical("http://ex.com/p1?utm_source=x1")


def test_unstable_urls_are_no_evidence() -> None:
    # /q was captured twice with different content: its pair with /q?utm_source=a says nothing
    obs = [(f"http://ex.com/p{i}?utm_source=x", f"g{i}") for i in range(3)]
    obs += [(f"http://ex.com/p{i}", f"g{i}") for i in range(3)]
    obs += [("http://ex.com/q?utm_source=a", "qa"), ("http://ex.com/q", "qb"),
            ("http://ex.com/q", "qc")]
    rules = learned(obs)
    assert decision(rules, "ex.com", kind="param", param="utm_source")["decision"] == \
        "irrelevant"
    assert json.loads(json.dumps(rules.to_json()))["sites"]["ex.com"]["unstable_urls"] == 1


def test_path_hypothesis_a() -> None:
    obs = articles("ex.com") + [("http://ex.com/search", "s"), ("http://ex.com/search?q=a", "s"),
                                ("http://ex.com/search?sort=b", "s"),
                                ("http://ex.com/search?q=c&x=1", "s")]
    rules = learned(obs)
    entry = decision(rules, "ex.com", kind="path", path="/search")
    assert (entry["agree"], entry["disagree"], entry["decision"]) == (6, 0, "irrelevant")
    assert rules.canonical("http://ex.com/search?anything=1&q=2") == "http://ex.com/search"
    assert rules.canonical("http://ex.com/a/1?anything=1") == "http://ex.com/a/1?anything=1"


def test_param_on_a_path_c() -> None:
    # view changes nothing on /story, but changes /gallery: not site-wide, yet on /story
    obs = [(f"http://ex.com/story?n={n}&view={v}", f"story{n}") for v in "abc" for n in (1, 2)]
    obs += [(f"http://ex.com/gallery?view={v}", f"gal-{v}") for v in "ab"]
    rules = learned(obs)
    assert decision(rules, "ex.com", kind="param", param="view")["decision"] == "relevant"
    assert decision(rules, "ex.com", kind="path_param", path="/story",
                    param="view")["decision"] == "irrelevant"
    assert rules.canonical("http://ex.com/story?n=7&view=q") == "http://ex.com/story?n=7"
    assert rules.canonical("http://ex.com/gallery?view=q") == "http://ex.com/gallery?view=q"


def test_param_on_a_path_and_query_d() -> None:
    # color matters on /list with cat=2, not with cat=1
    obs = [(f"http://ex.com/list?cat=1&color={c}", "cat1") for c in "abcde"]
    obs += [(f"http://ex.com/list?cat=2&color={c}", f"cat2-{c}") for c in "ab"]
    rules = learned(obs)
    assert decision(rules, "ex.com", kind="path_param", path="/list",
                    param="color")["decision"] == "relevant"
    entry = decision(rules, "ex.com", kind="path_query_param", path="/list", query="cat=1",
                     param="color")
    assert (entry["agree"], entry["decision"]) == (10, "irrelevant")
    assert rules.canonical("http://ex.com/list?cat=1&color=z") == "http://ex.com/list?cat=1"
    assert rules.canonical("http://ex.com/list?cat=2&color=z") == \
        "http://ex.com/list?cat=2&color=z"


def test_added_param_value_e() -> None:
    # lang=en is the default (adding it changes nothing); lang=fr is another page
    obs = articles("ex.com") + [(f"http://ex.com/a/{i}?lang=en", f"ex.com#{i}") for i in range(6)]
    obs += [(f"http://ex.com/a/{i}?lang=fr", f"fr#{i}") for i in range(2)]
    rules = learned(obs)
    assert decision(rules, "ex.com", kind="param", param="lang")["decision"] == "relevant"
    entry = decision(rules, "ex.com", kind="param_value", param="lang", value="en")
    assert (entry["agree"], entry["disagree"], entry["decision"]) == (6, 0, "irrelevant")
    assert rules.canonical("http://ex.com/b?lang=en") == "http://ex.com/b"
    assert rules.canonical("http://ex.com/b?lang=fr") == "http://ex.com/b?lang=fr"


def test_several_params_added_at_once_are_each_credited() -> None:
    obs = articles("ex.com") + [
        (f"http://ex.com/a/{i}?utm_source=n&utm_medium=e", f"ex.com#{i}") for i in range(2)]
    rules = learned(obs)
    for name in ("utm_source", "utm_medium"):
        entry = decision(rules, "ex.com", kind="param", param=name)
        assert (entry["agree"], entry["joint"], entry["decision"]) == (2, 2, "irrelevant")
    assert rules.canonical("http://ex.com/z?utm_medium=x&k=1&utm_source=y") == \
        "http://ex.com/z?k=1"


@pytest.mark.parametrize(("variant", "make", "example", "expected"), [
    ("slash", lambda u: u + "/", "http://ex.com/a/9/", "http://ex.com/a/9"),
    ("index:index.php", lambda u: u + "/index.php", "http://ex.com/a/9/index.php",
     "http://ex.com/a/9"),
    ("www", lambda u: u.replace("://", "://www."), "http://www.ex.com/a/9", "http://ex.com/a/9"),
    ("scheme", lambda u: u.replace("http:", "https:"), "https://ex.com/a/9",
     "http://ex.com/a/9"),
    ("fragment", lambda u: u + "#top", "http://ex.com/a/9#x", "http://ex.com/a/9"),
    ("path_param:jsessionid", lambda u: u + ";jsessionid=AB12", "http://ex.com/a/9;jsessionid=Z",
     "http://ex.com/a/9"),
    ("port", lambda u: u.replace("ex.com", "ex.com:80"), "http://ex.com:80/a/9?p=1",
     "http://ex.com/a/9?p=1"),
    ("empty_query", lambda u: u + "?", "http://ex.com/a/9?#x", "http://ex.com/a/9#x"),
])
def test_path_variants(variant: str, make: object, example: str, expected: str) -> None:
    base = articles("ex.com")
    obs = base + [(make(url), group) for url, group in base[:2]]  # type: ignore[operator]
    rules = learned(obs)
    entry = decision(rules, "ex.com", kind="variant", variant=variant)
    assert (entry["agree"], entry["disagree"], entry["decision"]) == (2, 0, "irrelevant")
    assert entry["prior"] == 4
    assert rules.canonical(example) == expected


def test_parameter_order() -> None:
    obs = [(f"http://ex.com/v?x={i}&y=1", f"v{i}") for i in range(4)]
    obs += [(f"http://ex.com/v?y=1&x={i}", f"v{i}") for i in range(2)]
    rules = learned(obs)
    entry = decision(rules, "ex.com", kind="variant", variant="query_order")
    assert (entry["agree"], entry["decision"]) == (2, "irrelevant")
    assert rules.canonical("http://ex.com/v?y=1&x=7") == "http://ex.com/v?x=7&y=1"
    assert decision(rules, "ex.com", kind="param", param="x")["decision"] == "relevant"


def test_scheme_and_www_changed_at_once_credit_both() -> None:
    base = articles("ex.com")
    obs = base + [(url.replace("http://", "https://www."), g) for url, g in base[:2]]
    rules = learned(obs)
    for variant in ("scheme", "www"):
        entry = decision(rules, "ex.com", kind="variant", variant=variant)
        assert (entry["agree"], entry["joint"], entry["decision"]) == (2, 2, "irrelevant")
    assert rules.canonical("https://www.ex.com/a/7?q=1") == "http://ex.com/a/7?q=1"


def test_crawl_value_rule_does_not_reach_a_site_where_the_param_matters() -> None:
    obs: Obs = []
    for host in ("a.com", "b.com"):
        obs += articles(host) + [(f"http://{host}/a/{i}?id=7", f"{host}#{i}") for i in range(2)]
    obs += [(f"http://c.com/item?id={i}", f"c{i}") for i in range(5)]
    rules = learned(obs)
    assert rules.canonical("http://new.org/x?id=7") == "http://new.org/x"
    assert rules.canonical("http://c.com/item?id=7") == "http://c.com/item?id=7"
    assert rules.canonical("http://c.com/other?id=7") == "http://c.com/other?id=7"


def test_letter_case_needs_more_evidence_and_can_be_refuted() -> None:
    base = articles("ex.com", path="/A/{}")
    obs = base + [(url.replace("/A/", "/a/"), group) for url, group in base[:4]]
    rules = learned(obs)
    entry = decision(rules, "ex.com", kind="variant", variant="case")
    assert (entry["agree"], entry["decision"], "prior" in entry) == (4, "irrelevant", False)
    assert rules.canonical("http://ex.com/A/Q?X=1") == "http://ex.com/a/q?X=1"
    refuted = learned(obs + [("http://ex.com/Wiki", "w1"), ("http://ex.com/wiki", "w2")])
    assert decision(refuted, "ex.com", kind="variant", variant="case")["decision"] == "relevant"
    assert refuted.canonical("http://ex.com/A/Q") == "http://ex.com/A/Q"


def test_crawl_level_rule_needs_two_sites_and_applies_to_new_sites() -> None:
    one = articles("a.com") + [("http://a.com/a/1?sort=asc", "a.com#1"),
                               ("http://a.com/a/2?sort=asc", "a.com#2")]
    rules = learned(one)
    assert rules.canonical("http://new.org/x?sort=asc") == "http://new.org/x?sort=asc"
    two = one + articles("b.com") + [("http://b.com/a/1?sort=asc", "b.com#1"),
                                     ("http://b.com/a/2?sort=asc", "b.com#2")]
    rules = learned(two)
    assert [e["decision"] for e in rules.rules(None) if e.get("param") == "sort"] == \
        ["irrelevant", "irrelevant"]
    assert rules.canonical("http://new.org/x?sort=asc&k=1") == "http://new.org/x?k=1"
    # a site where sort matters keeps it, and the crawl level is refuted from then on
    three = two + [("http://c.com/list?sort=asc", "c1"), ("http://c.com/list", "c2")]
    rules = learned(three)
    assert rules.canonical("http://c.com/list?sort=asc") == "http://c.com/list?sort=asc"
    assert rules.canonical("http://new.org/x?sort=asc") == "http://new.org/x?sort=asc"


def test_rules_that_would_merge_different_pages_are_withdrawn() -> None:
    # sort and start each change nothing alone, but together they name another page
    obs = articles("ex.com")
    obs += [(f"http://ex.com/a/{i}?sort=asc", f"ex.com#{i}") for i in range(4)]
    obs += [(f"http://ex.com/a/{i}?start=0", f"ex.com#{i}") for i in range(4)]
    obs += [("http://ex.com/l?sort=asc&start=0", "l1"), ("http://ex.com/l", "l2")]
    rules = learned(obs)
    assert rules.canonical("http://ex.com/l?sort=asc&start=0") != rules.canonical(
        "http://ex.com/l")
    blamed = [e for e in rules.rules("ex.com") if e.get("conflicts")]
    assert blamed and all(e["decision"] == "relevant" for e in blamed)


def test_a_big_site_keeps_few_hypotheses() -> None:
    # session ids and per-page paths would otherwise keep one entry per URL
    obs = articles("ex.com", n=300)
    obs += [(f"http://ex.com/a/{i}?sid={i * 7919}", f"ex.com#{i}") for i in range(300)]
    obs += [(f"http://ex.com/list?page={i}", f"list{i}") for i in range(300)]
    rules = learned(obs)
    entries = list(rules.rules("ex.com"))
    assert len(entries) <= 60
    assert decision(rules, "ex.com", kind="param", param="sid")["agree"] == 300
    assert rules.canonical("http://ex.com/a/1?sid=5") == "http://ex.com/a/1"
    assert rules.canonical("http://ex.com/list?page=5") == "http://ex.com/list?page=5"


def test_observations_must_come_grouped_by_site() -> None:
    obs = [("http://a.com/1", 1), ("http://b.com/1", 2), ("http://a.com/2", 3)]
    with pytest.raises(ConfigError, match="grouped by site"):
        UrlRules().learn(obs)


# -- canonical() ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trained() -> UrlRules:
    obs: Obs = []
    for host in ("a.com", "b.com", "c.com"):
        obs += articles(host)
        obs += [(f"http://{host}/a/{i}?utm_source=n{i}", f"{host}#{i}") for i in range(2)]
        obs += [(f"http://{host}/a/{i}/", f"{host}#{i}") for i in range(2)]
    obs += [(f"http://a.com/item?id={i}", f"item{i}") for i in range(4)]
    return learned(obs)


@pytest.mark.parametrize("url", [
    "http://a.com/x?b=2&a=1",               # order kept
    "http://a.com/x?a=%7e&b=caf%C3%A9+x",   # encodings kept
    "http://a.com/x?a=1&&b=2&",             # empty pieces kept
    "http://a.com/x?",                      # an empty query stays
    "http://a.com/x#",                      # so does an empty fragment
    "HTTP://A.COM/X?Q",                     # case kept
    "http://a.com/item?id=3",
    "mailto:someone@a.com",
    "",
])
def test_canonical_leaves_unknown_things_byte_exact(trained: UrlRules, url: str) -> None:
    assert trained.canonical(url) == url


def test_canonical_removes_only_the_learned_param_in_place(trained: UrlRules) -> None:
    url = "http://a.com/x?b=%20&utm_source=q&a=1&utm_source=r#f"
    assert trained.canonical(url) == "http://a.com/x?b=%20&a=1#f"
    assert trained.canonical("http://a.com/x?utm%5Fsource=q") == "http://a.com/x"
    assert trained.canonical("http://a.com/x/?utm_source=q") == "http://a.com/x"


URL_PIECES = st.sampled_from(["a", "b", "id", "utm_source", "page", "sort", "Ä", "%41", ""])


@st.composite
def urls(draw: st.DrawFn) -> str:
    host = draw(st.sampled_from(["a.com", "www.b.com", "c.com", "new.org"]))
    scheme = draw(st.sampled_from(["http", "https"]))
    path = "/" + "/".join(draw(st.lists(st.sampled_from(
        ["a", "1", "item", "index.html", "X", "", ";jsessionid=1"]), max_size=3)))
    url = f"{scheme}://{host}{path}"
    params = draw(st.lists(st.tuples(URL_PIECES, URL_PIECES), max_size=4))
    if params or draw(st.booleans()):
        url += "?" + "&".join(f"{k}={v}" for k, v in params)
    if draw(st.booleans()):
        url += "#" + draw(URL_PIECES)
    return url


@settings(max_examples=300, deadline=None)
@given(urls())
def test_canonical_is_idempotent_and_drops_only_learned_params(trained: UrlRules,
                                                               url: str) -> None:
    form = trained.canonical(url)
    assert trained.canonical(form) == form
    before = split_url(url).query
    after = split_url(form).query
    kept = [c.raw for c in query_chunks(after)]
    irrelevant = {key[1] for site in trained.sites() for key in trained.irrelevant(site)
                  if key[0] in ("param", "param_value")}
    for chunk in query_chunks(before):
        if chunk.raw in kept:
            kept.remove(chunk.raw)
        else:
            assert chunk.name in irrelevant, (url, form)
    assert kept == []


ODD_PIECES = st.sampled_from([
    "http://", "https://", "www.", "a.com", "b.org", ":80", ":443", "/", "?", "&", "=", "#", ";",
    "x", "id", "utm_source", "index.html", "%", "[", "]", "A", " ", "é", ";jsessionid="])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(ODD_PIECES, max_size=12).map("".join), st.integers(0, 4)),
                max_size=30),
       st.lists(ODD_PIECES, max_size=12).map("".join))
def test_odd_urls_are_learned_and_canonical_without_error(observations: Obs, probe: str) -> None:
    rules = learned(observations)
    form = rules.canonical(probe)
    assert rules.canonical(form) == form
    assert 0.0 <= rules.duplicate_probability(probe, [url for url, _ in observations]) <= 1.0
    assert UrlRules.from_json(json.loads(json.dumps(rules.to_json()))).to_json() == \
        rules.to_json()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_split_url_joins_back_to_the_same_string(text: str) -> None:
    assert split_url(text).join() == text


# -- duplicate_probability() -----------------------------------------------------------------------


def test_duplicate_probability_is_monotone_in_evidence() -> None:
    probabilities = []
    for pairs in range(0, 12):
        obs = articles("ex.com", n=12) + [(f"http://ex.com/a/{i}?ref=x", f"ex.com#{i}")
                                          for i in range(pairs)]
        rules = learned(obs)
        probabilities.append(rules.duplicate_probability(
            "http://ex.com/z?ref=q", ["http://ex.com/y", "http://ex.com/z"]))
    assert probabilities == sorted(probabilities)
    assert probabilities[0] == probabilities[3] == 0.0  # below the threshold: no rule
    assert probabilities[4] == pytest.approx(0.05 ** (1 / 5))
    assert probabilities[-1] == pytest.approx(0.05 ** (1 / 12))


def test_duplicate_probability_exact_and_unrelated(trained: UrlRules) -> None:
    assert trained.duplicate_probability("http://a.com/x", ["http://a.com/x"]) == 1.0
    assert trained.duplicate_probability("http://a.com/x?id=1", ["http://a.com/x?id=2"]) == 0.0
    both = trained.duplicate_probability("http://a.com/x/?utm_source=1", ["http://a.com/x"])
    one = trained.duplicate_probability("http://a.com/x?utm_source=1", ["http://a.com/x"])
    assert 0 < both < one < 1  # two rules taken: less sure than one


def test_seen_index_gives_the_probabilities_of_a_list(trained: UrlRules) -> None:
    seen_list = [f"http://{host}/a/{i}{tail}" for host in ("a.com", "b.com", "d.com")
                 for i in range(6) for tail in ("", "/", "?utm_source=z", "?id=1")]
    seen = trained.seen(seen_list)
    assert len(seen) == len(set(seen_list)) and sorted(seen) == sorted(set(seen_list))
    seen.add(seen_list[0])  # again: no change
    assert len(seen) == len(set(seen_list)) and seen_list[5] in seen
    assert "http://a.com/a/0?utm_source=never" not in seen
    probes = [f"http://{host}/a/{i}{tail}" for host in ("a.com", "b.com", "c.com", "d.com")
              for i in (0, 3, 7) for tail in ("", "/", "?utm_source=q", "?id=2", "/?utm_source=1")]
    found = [trained.duplicate_probability(url, seen) for url in probes]
    assert found == [trained.duplicate_probability(url, seen_list) for url in probes]
    assert 1.0 in found and 0.0 in found and any(0.0 < p < 1.0 for p in found)


def test_seen_index_reads_only_urls_of_the_same_form(trained: UrlRules,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    seen = trained.seen(f"http://a.com/a/{i}" for i in range(500))
    traced: list[str] = []
    original = UrlRules._trace
    monkeypatch.setattr(UrlRules, "_trace", lambda self, url: (traced.append(url),
                                                               original(self, url))[1])
    assert 0.0 < trained.duplicate_probability("http://a.com/a/7?utm_source=x", seen) < 1.0
    assert traced == ["http://a.com/a/7?utm_source=x"]  # the seen URLs were traced when added
    traced.clear()
    trained.duplicate_probability("http://a.com/a/7?utm_source=x", list(seen))
    assert len(traced) == 501


# -- files --------------------------------------------------------------------------------------


def test_save_load_round_trip(tmp_path: Path, trained: UrlRules) -> None:
    path = tmp_path / "rules.json"
    trained.save(path)
    again = UrlRules.load(path)
    assert again.to_json() == trained.to_json()
    data = json.loads(path.read_text(encoding="utf-8"))
    assert sorted(data["sites"]) == ["a.com", "b.com", "c.com"]
    rng = random.Random(5)
    for _ in range(200):
        url = f"http://{rng.choice(['a.com', 'b.com', 'x.org'])}/a/{rng.randrange(5)}" + rng.choice(
            ["", "/", "?utm_source=1", "?id=2&utm_source=3", "/?utm_source=1"])
        assert again.canonical(url) == trained.canonical(url)
        assert again.duplicate_probability(url, ["http://a.com/a/1"]) == \
            trained.duplicate_probability(url, ["http://a.com/a/1"])


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not a URL rules file"),
    ('{"format": "other"}', "not a URL rules file"),
    ('{"format": "warcdeboil-url-rules", "version": 9}', "version 9"),
    ('{"format": "warcdeboil-url-rules", "version": 1, "site_key": "host", "sites": {}}',
     "missing 'crawl'"),
])
def test_bad_rule_files_are_one_line_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(WarcDeboilError, match=message) as info:
        UrlRules.load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_bad_entry_in_a_rule_file(tmp_path: Path, trained: UrlRules) -> None:
    data = trained.to_json()
    data["sites"]["a.com"]["rules"][0]["decision"] = "maybe"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown decision 'maybe'"):
        UrlRules.load(path)
    with pytest.raises(ConfigError, match="cannot read"):
        UrlRules.load(tmp_path / "absent.json")


def test_exported_from_the_package() -> None:
    assert warcdeboil.UrlRules is UrlRules


def test_beta_quantile_against_sampling() -> None:
    rng = random.Random(1)
    for a, b in ((3, 2), (10, 4), (1, 5), (300, 150)):  # the last: normal approximation
        draws = sorted(rng.betavariate(a, b) for _ in range(40000))
        assert beta_quantile(0.05, a, b) == pytest.approx(draws[2000], abs=0.01)


# -- the generated crawl ------------------------------------------------------------------------


@pytest.mark.slow
def test_rules_from_the_generated_crawl_find_every_variant(tmp_path: Path) -> None:
    archive = shared_file("eval", "dragnet.warc.gz")
    generator = load_script("make_dup_crawl", ROOT / "scripts" / "make_dup_crawl.py")
    generator.main([str(archive), "--out", str(tmp_path / "plain")])
    generator.main([str(archive), "--out", str(tmp_path / "more"), "--more-variants"])
    plain = json.loads((tmp_path / "plain" / "truth.json").read_text(encoding="utf-8"))["pages"]
    more = json.loads((tmp_path / "more" / "truth.json").read_text(encoding="utf-8"))["pages"]
    assert more[: len(plain)] == plain  # the extra variants come after, the rest is unchanged
    kinds = {row["kind"] for row in more[len(plain):]}
    assert {"url-variant:fbclid", "url-variant:ref", "url-variant:fragment", "url-variant:case",
            "url-variant:index.php", "url-variant:scheme+www", "p-param"} <= kinds

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        bench = load_script("urlrules_benchmark", ROOT / "benchmarks" / "urlrules.py")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    rules = bench.learn([r["url"] for r in more], [r["group"] for r in more])
    irrelevant, relevant, variants = bench.labels(more)
    scored = bench.score_urls(rules, more, variants)
    assert scored["variants_found"] == scored["variants"] == 128
    assert scored["relevant_kept"] == scored["relevant_pages"] == 90
    assert scored["wrong_merges"] == []
    sites = sorted({s for s, _ in irrelevant | relevant})
    params = bench.site_params(r["url"] for r in more)
    components = bench.score_components(bench.called_ours(rules, sites), irrelevant, relevant,
                                        params)
    assert (components["found"], components["irrelevant"]) == (130, 130)
    assert components["relevant_called_irrelevant"] == []
