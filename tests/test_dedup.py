"""Duplicate detection (warcdeboil.dedup): signatures, LSH over an external sort, groups, the
keep rule, the exact path, unspaced scripts on real pages, and the generated evaluation crawl."""

from __future__ import annotations

import hashlib
import itertools
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import ROOT, load_script, shared_file

from warcdeboil.dedup import (
    BANDS,
    CONFIRM_THRESHOLD,
    CONTAINED_JACCARD,
    MAX_BUCKET_KEPT,
    ROWS,
    Copy,
    DedupStats,
    LshParams,
    MinHasher,
    PageText,
    UnionFind,
    candidate_pairs,
    candidate_pairs_in_memory,
    choose_keeper,
    confirms,
    detection_probability,
    duplicate_groups,
    error_rates,
    estimate_jaccard,
    exact_groups,
    group_members,
    keep_order,
    shingle_hashes,
    tokens,
)
from warcdeboil.dedup.lsh import bucket_keys
from warcdeboil.dedup.spill import SortedSpill


def _words(rng: np.random.Generator, count: int) -> list[str]:
    return [f"w{n}" for n in rng.integers(0, 50_000, size=count)]


def _jaccard(first: str, second: str) -> float:
    a, b = set(shingle_hashes(first).tolist()), set(shingle_hashes(second).tolist())
    return len(a & b) / len(a | b)


# --- signatures -------------------------------------------------------------------------------

def test_signatures_are_the_same_in_another_process() -> None:
    text = "Der schnelle braune Fuchs springt über den faulen Hund, 你好世界 " * 7
    here = MinHasher(seed=7).text_signature(text).tobytes().hex()
    code = ("import sys; from warcdeboil.dedup import MinHasher; "
            "sys.stdout.write(MinHasher(seed=7).text_signature(sys.argv[1]).tobytes().hex())")
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    there = subprocess.run([sys.executable, "-c", code, text], env=env, check=True,
                           capture_output=True, text=True).stdout
    assert there == here
    assert MinHasher(seed=8).text_signature(text).tobytes().hex() != here


def test_shingles_follow_word_order_and_lower_case() -> None:
    assert np.array_equal(np.unique(shingle_hashes("A b c d e f")),
                          np.unique(shingle_hashes("a B C D E F")))
    assert not set(shingle_hashes("a b c d e f").tolist()) & set(
        shingle_hashes("f e d c b a").tolist())
    assert len(shingle_hashes("")) == 0 and len(shingle_hashes(" \n\t")) == 0
    assert len(shingle_hashes("one two")) == 1  # shorter than a shingle: one of all its words


@pytest.mark.parametrize("target", [0.2, 0.5, 0.7, 0.9])
def test_estimated_jaccard_is_within_its_standard_error(target: float) -> None:
    """Pairs of known true Jaccard: the mean estimate within 3 standard errors of the mean, and
    every single estimate within 5 of its own (fixed seeds: the test is deterministic)."""
    rng = np.random.default_rng(int(target * 100))
    hasher = MinHasher(seed=3)
    errors = []
    for _ in range(40):
        base = _words(rng, 400)
        # Replace a run of words so that shingle Jaccard lands near the target.
        cut = int(len(base) * (1 - target) / (1 + target))
        start = int(rng.integers(0, len(base) - cut))
        other = base[:start] + _words(rng, cut) + base[start + cut :]
        first, second = " ".join(base), " ".join(other)
        true = _jaccard(first, second)
        estimate = estimate_jaccard(hasher.text_signature(first), hasher.text_signature(second))
        sigma = np.sqrt(true * (1 - true) / hasher.num_perm)
        assert abs(estimate - true) <= 5 * sigma + 1e-9
        errors.append(estimate - true)
    assert abs(np.mean(errors)) <= 3 * np.sqrt(target * (1 - target) / 128 / 40) + 0.01


# --- unspaced scripts, on real pages ------------------------------------------------------

def _chinese_texts() -> list[str]:
    """The text of the Chinese pages of a real crawl in ../shared/warcs (chatnoir's sample)."""
    from warcio.archiveiterator import ArchiveIterator

    from warcdeboil.api import Deboiler

    path = shared_file("warcs", "chatnoir-eu__chatnoir-resiliparse__warcfile.warc.gz")
    pages = []
    with open(path, "rb") as fh:
        for record in ArchiveIterator(fh):
            if record.rec_type == "response":
                url = record.rec_headers.get_header("WARC-Target-URI")
                pages.append((url, record.content_stream().read()))
    texts = [page.text for page in Deboiler().transform(pages)]
    return [t for t in texts if sum("\u4e00" <= c <= "\u9fff" for c in t) > 300]


def test_chinese_pages_are_shingled_by_character() -> None:
    texts = _chinese_texts()
    assert len(texts) >= 2
    first, second = texts[0], texts[1]
    words = tokens(first)
    han = [w for w in words if len(w) == 1 and "\u4e00" <= w <= "\u9fff"]
    assert len(han) > 300  # each Han character a word of its own
    assert len(shingle_hashes(first)) > 5 * len(first.split())  # splitting on spaces alone: few
    # The page with one sentence of it changed is still a near duplicate; the other page is not.
    hasher = MinHasher()
    cut = len(first) // 2
    edited = first[:cut] + "这是一个完全不同的新句子。" + first[cut + 10 :]
    assert estimate_jaccard(hasher.text_signature(first),
                            hasher.text_signature(edited)) >= CONFIRM_THRESHOLD
    assert _jaccard(first, edited) >= CONFIRM_THRESHOLD
    assert estimate_jaccard(hasher.text_signature(first), hasher.text_signature(second)) < 0.2


# --- banding ------------------------------------------------------------------------------

def test_error_rates_are_the_documented_ones() -> None:
    from warcdeboil.dedup import lsh

    false_positive, false_negative = error_rates()
    assert round(false_positive, 3) == 0.458 and f"{false_negative:.1e}" == "8.0e-06"
    assert "0.458" in (lsh.__doc__ or "") and "8.0e-6" in (lsh.__doc__ or "")
    # Against a plain trapezoid integral of the S-curve.
    grid = np.linspace(0, CONFIRM_THRESHOLD, 200_001)
    curve = 1 - (1 - grid**ROWS) ** BANDS
    trapezoid = float(np.sum((curve[1:] + curve[:-1]) / 2) * (grid[1] - grid[0]))
    assert false_positive == pytest.approx(trapezoid / CONFIRM_THRESHOLD, rel=1e-6)
    assert error_rates(0.9, bands=16, rows=8)[1] > false_negative  # fewer bands miss more


@pytest.mark.parametrize("similarity", [0.3, 0.5, 0.7])
def test_s_curve_matches_simulated_banding(similarity: float) -> None:
    """Signatures agreeing in each position with probability s collide in some band as often
    as 1-(1-s^r)^b says (4 standard errors, 20 000 trials, fixed seed)."""
    rng = np.random.default_rng(5)
    trials = 20_000
    agree = rng.random((trials, BANDS, ROWS)) < similarity
    observed = float(np.mean(agree.all(axis=2).any(axis=1)))
    expected = detection_probability(similarity)
    assert abs(observed - expected) <= 4 * np.sqrt(expected * (1 - expected) / trials) + 1e-4


def _planted_signatures(seed: int) -> list[tuple[int, np.ndarray]]:
    """Random signatures, some near copies of others, and one bucket larger than the cap."""
    rng = np.random.default_rng(seed)
    signatures = [rng.integers(0, 2**32, size=128, dtype=np.uint32) for _ in range(300)]
    for page in range(100, 200):
        copy = signatures[int(rng.integers(0, 100))].copy()
        changed = rng.integers(0, 128, size=int(rng.integers(0, 60)))
        copy[changed] = rng.integers(0, 2**32, size=len(changed), dtype=np.uint32)
        signatures[page] = copy
    for page in range(200, 200 + MAX_BUCKET_KEPT + 8):
        signatures[page] = signatures[0].copy()
    order = rng.permutation(len(signatures))  # pages arrive in no particular order
    return [(int(page), signatures[page]) for page in order]


@pytest.mark.parametrize("run_items", [1, 97, 1_000_000])
def test_external_sort_lsh_gives_the_in_memory_pairs(tmp_path: Path, run_items: int) -> None:
    signatures = _planted_signatures(11)
    stats: dict[str, int] = {}
    found = list(candidate_pairs(signatures, tmp_path, run_items=run_items, stats=stats))
    reference = candidate_pairs_in_memory(signatures)
    assert set(found) == reference
    assert all(a < b for a, b in found)
    assert len(reference) > 100  # the planted copies are found
    assert stats["peak_items"] <= run_items
    # Full runs are written as they fill, the rest too once one was: all in memory, none.
    full, rest = divmod(len(signatures) * BANDS, run_items)
    assert stats["runs"] == full + bool(full and rest)
    assert list(tmp_path.iterdir()) == []  # run files removed once merged


@pytest.mark.parametrize("run_items", [7, 3_000, 1_000_000])
def test_lsh_pairs_come_in_the_order_of_the_sorted_key_bytes(tmp_path: Path,
                                                             run_items: int) -> None:
    """Sorted in memory or merged from runs, the candidate pairs come as a sort of every
    bucket key's bytes (band, digest, page) gives them: the order the union-find sees them in,
    and so the stage's counts, do not depend on how the keys were sorted."""
    signatures = _planted_signatures(5)
    leads = np.zeros(len(signatures), dtype=np.uint64)
    leads[[3, 40, 150, 201]] = 77  # a lead bucket too
    records = sorted(key + page.to_bytes(8, "big") for page, signature in signatures
                     for key in bucket_keys(signature, lead=int(leads[page])))
    expected: list[tuple[int, int]] = []
    members: list[int] = []
    for at, record in enumerate(records):
        if at and record[:10] != records[at - 1][:10]:
            members = []
        page = int.from_bytes(record[10:], "big")
        expected += [(other, page) for other in members]
        if len(members) < MAX_BUCKET_KEPT:
            members.append(page)
    stats: dict[str, int] = {}
    assert list(candidate_pairs(signatures, tmp_path, run_items=run_items, stats=stats,
                                leads=leads)) == expected
    assert stats["runs"] == (0 if run_items > len(records) else -(-len(records) // run_items))
    assert list(tmp_path.iterdir()) == []


def test_spill_never_holds_more_than_its_run(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    keys = [bytes(rng.integers(0, 256, size=6, dtype=np.uint8)) for _ in range(1000)]
    spill = SortedSpill(tmp_path, run_items=64, fan_in=4)  # intermediate merges too
    for key in keys:
        spill.add(key, key)
    assert list(spill.sorted()) == sorted(keys)
    assert spill.peak_items == 64 and spill.runs == 16
    assert not any(tmp_path.rglob("*.run")) and not any(tmp_path.rglob("*.merge"))


def test_lsh_params_are_checked() -> None:
    with pytest.raises(ValueError, match="threshold"):
        LshParams(threshold=0.0)
    with pytest.raises(ValueError, match="banding needs"):
        list(candidate_pairs([(0, np.zeros(64, dtype=np.uint32))], Path("unused")))


# --- groups, keep rule, exact path --------------------------------------------------------

def test_keep_rule_most_text_then_earliest_then_shortest_url() -> None:
    copies = [
        Copy(0, "http://a.com/story?utm_source=feed", 2000, "2024-03-01T00:00:00Z"),
        Copy(1, "https://www.a.com/story/", 2000, "2024-03-01T00:00:00Z"),
        Copy(2, "http://a.com/story", 2000, "2024-03-01T00:00:00Z"),
        Copy(3, "http://a.com/print/story", 1500, "2023-01-01T00:00:00Z"),  # less text
        Copy(4, "http://mirror.net/a.com/story", 2000, ""),  # date unknown: after known ones
    ]
    by_page = {c.page: c for c in copies}
    for order in itertools.permutations(copies):
        group = choose_keeper([c.page for c in order], by_page.__getitem__)
        assert group.keep == 2 and group.drop == (0, 1, 3, 4)
    earlier = Copy(5, "http://z.org/a/very/long/url/of/the/original", 2000, "2024-02-01")
    assert min([*copies, earlier], key=keep_order) == earlier


def test_union_find_on_disk_and_its_groups(tmp_path: Path) -> None:
    union = UnionFind(12, tmp_path / "parents.npy")
    for a, b in [(3, 7), (7, 9), (10, 2), (5, 5), (9, 3)]:
        union.union(a, b)
    assert union.find(9) == 3 and union.find(10) == 2
    groups = list(group_members(union, tmp_path / "g", run_items=2))
    assert groups == [[2, 10], [3, 7, 9]]


def test_exact_groups_by_payload_digest(tmp_path: Path) -> None:
    bodies = [b"<p>a</p>", b"<p>b</p>", b"<p>a</p>", b"<p>c</p>", b"<p>b</p>", b"<p>a</p>"]
    digests = [(page, hashlib.sha1(body).digest()) for page, body in enumerate(bodies)]
    # Groups come in digest order; each lists its pages ascending.
    assert sorted(exact_groups(digests, tmp_path, run_items=2)) == [[0, 2, 5], [1, 4]]
    with pytest.raises(ValueError, match="digest of 3 bytes"):
        list(exact_groups([(0, b"abcd"), (1, b"abc")], tmp_path))


def test_duplicate_groups_end_to_end(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    story = " ".join(_words(rng, 300))
    updated = story + " " + " ".join(_words(rng, 20))  # one paragraph added
    other = " ".join(_words(rng, 300))
    pages = [
        PageText(0, "http://a.com/s?utm_source=x", story, "2024-05-01", b"d1"),
        PageText(1, "http://a.com/s", story, "2024-05-01", b"d1"),
        PageText(2, "http://a.com/other", other, "2024-05-01", b"d2"),
        PageText(3, "http://b.org/copy", updated, "2024-06-01", b"d3"),
        PageText(4, "http://a.com/empty1", "", "", b"e1"),
        PageText(5, "http://a.com/empty2", "", "", b"e2"),  # empty texts are not near copies
        PageText(6, "http://a.com/same-bytes", "", "", b"e1"),  # but equal payloads are copies
    ]
    stats = DedupStats()
    groups = list(duplicate_groups(pages, tmp_path, stats=stats, run_items=5))
    assert [(g.keep, g.drop) for g in groups] == [(3, (0, 1)), (4, (6,))]
    assert stats.exact_pairs == 2 and stats.skipped_empty == 3 and stats.confirmed == 1
    assert list(tmp_path.iterdir()) == []


# --- the generated evaluation crawl --------------------------------------------------------


@pytest.mark.slow
def test_generated_crawl_truth_is_what_the_benchmark_reads(tmp_path: Path) -> None:
    archive = shared_file("eval", "dragnet.warc.gz")
    generator = load_script("make_dup_crawl", ROOT / "scripts" / "make_dup_crawl.py")
    benchmark = load_script("dedup_benchmark", ROOT / "benchmarks" / "dedup.py")
    generator.main([str(archive), "--out", str(tmp_path)])
    first = (tmp_path / "dup-crawl.warc.gz").read_bytes()
    generator.main([str(archive), "--out", str(tmp_path)])
    assert (tmp_path / "dup-crawl.warc.gz").read_bytes() == first  # reproducible

    pages = benchmark.read_crawl(tmp_path / "dup-crawl.warc.gz")
    truth, kinds = benchmark.truth_pairs(tmp_path / "truth.json", pages)
    import json

    rows = json.loads((tmp_path / "truth.json").read_text(encoding="utf-8"))
    assert [p["record_id"] for p in rows["pages"]] == [p.record_id for p in pages]
    by_group: dict[str, list[int]] = {}
    for number, row in enumerate(rows["pages"]):
        by_group.setdefault(row["group"], []).append(number)
        assert pages[number].url == row["url"] and pages[number].date == row["date"]
    expected = {pair for members in by_group.values()
                for pair in itertools.combinations(members, 2)}
    assert truth == expected
    every_kind = {row["kind"].split(":")[0] for row in rows["pages"]}
    assert every_kind == {"original", "id-param", "url-variant", "print", "mirror", "syndicated",
                          "updated", "index", "page-2"}
    # Positives are in a group with their original; negatives are alone.
    for row in rows["pages"]:
        size = len(by_group[row["group"]])
        if row["kind"] in ("index", "page-2"):
            assert size == 1
        elif row["kind"] not in ("original", "id-param"):
            assert size >= 2
    # URL variants without a session id are byte-for-byte copies: the exact path's case.
    for number, row in enumerate(rows["pages"]):
        if row["kind"] in ("url-variant:utm", "url-variant:www"):
            original = by_group[row["group"]][0]
            assert pages[number].digest == pages[original].digest
        if row["kind"] == "url-variant:sid":
            original = by_group[row["group"]][0]
            assert pages[number].digest != pages[original].digest
    assert all(kinds[pair] for pair in truth)


def test_contained_copy_is_a_duplicate_and_half_an_article_is_not(tmp_path: Path) -> None:
    """A print copy (the article without the comments the original keeps) is confirmed by
    containment below the Jaccard threshold; page 2 (the second half) is contained but too small."""
    rng = np.random.default_rng(9)
    article = _words(rng, 600)
    comments = _words(rng, 260)
    original = " ".join(article + comments)
    printed = " ".join(article)
    page_two = " ".join(article[300:])
    assert CONTAINED_JACCARD < _jaccard(original, printed) < CONFIRM_THRESHOLD
    pages = [PageText(0, "http://a.com/s", original), PageText(1, "http://a.com/s/print", printed),
             PageText(2, "http://a.com/s?page=2", page_two)]
    groups = list(duplicate_groups(pages, tmp_path))
    assert [(g.keep, g.drop) for g in groups] == [(0, (1,))]
    assert confirms(0.6, 700, 1000) and not confirms(0.6, 1000, 1000)
    assert not confirms(0.45, 300, 600)  # wholly contained, but only half the size


def test_signature_text_leaves_out_the_sites_template() -> None:
    from warcdeboil.api import Deboiler
    from warcdeboil.dedup.text import signature_text
    from warcdeboil.page.dom import analyse

    chrome = "<div id=nav><a href=/a>Home</a> <a href=/b>Sections and more sections</a></div>"
    pages = [(f"http://a.com/{i}", f"<html><body>{chrome}<p>Story number {i} says "
              f"something of its own, {i * 7} times over.</p></body></html>") for i in range(6)]
    model = Deboiler().fit(pages)
    profile = model.profiles_[model._keyer(pages[0][0])]
    text = signature_text(analyse(pages[0][1]), profile)
    assert "Story number 0" in text
    assert "Sections and more sections" not in text
    assert "Sections and more sections" in signature_text(analyse(pages[0][1]), None)


# --- what the signature text leaves out, and the rules of 2026-11-25 ------------------------

def test_punctuation_does_not_make_other_words() -> None:
    """A copy without the original's links reads "2012." where the original's text, its link
    marks turned to spaces, reads "2012 .": the same words, the same shingles."""
    linked = "the keynote of BUILD 2012 . It was ( mostly ) about Azure , said Long"
    plain = "The keynote of BUILD 2012. It was (mostly) about Azure, said Long"
    assert np.array_equal(shingle_hashes(linked), shingle_hashes(plain))
    assert tokens(plain)[:5] == ["the", "keynote", "of", "build", "2012"]
    # Words are what tokens() says they are, in unspaced scripts too.
    from warcdeboil.dedup.shingles import word_hashes

    mixed = "Hello, World! 你好，世界 (twice)."
    assert np.array_equal(word_hashes(mixed), word_hashes(" ".join(tokens(mixed))))
    assert not np.array_equal(shingle_hashes("a b c d e"), shingle_hashes("a b c d f"))


def test_word_hashes_do_not_depend_on_where_the_word_is() -> None:
    """The powers of the word hash come from a table for texts up to 64 KiB and are computed
    beyond: a word hashes alike anywhere, in a short text or past the table's end."""
    from warcdeboil.dedup.shingles import word_hashes

    tail = word_hashes("closing words here")
    for filler in (0, 1000, 40_000):  # 0, 2 KB, 80 KB of words before
        text = "ab " * filler + "closing words here"
        assert np.array_equal(word_hashes(text)[-3:], tail)


def _reference_word_hashes(text: str) -> list[int]:
    """word_hashes as its docstring defines it, one word at a time in plain Python: the words
    of the lower-cased text between ASCII whitespace and punctuation (unspaced scripts cut by
    tokens()), each the polynomial sum((byte + 1) * M**j) modulo 2**64, then splitmix64's mix."""
    import re

    from warcdeboil.dedup.shingles import _SEPARATORS

    lowered = text.lower()
    if re.search("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf"
                 "\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]", lowered):
        lowered = " ".join(tokens(lowered))
    data = lowered.encode("utf-8", "surrogatepass")
    words = re.split(b"[" + re.escape(_SEPARATORS) + b"]+", data)
    mask, base = 2**64 - 1, 0x100000001B3
    hashes = []
    for word in filter(None, words):
        value = sum((byte + 1) * pow(base, j, 2**64) for j, byte in enumerate(word)) & mask
        value ^= value >> 30
        value = value * 0xBF58476D1CE4E5B9 & mask
        value ^= value >> 27
        value = value * 0x94D049BB133111EB & mask
        hashes.append(value ^ value >> 31)
    return hashes


def test_word_hashes_are_the_reference_words_hashes() -> None:
    """The vectorised hashes against the definition: mixed scripts (the unspaced ones at the
    edges of their ranges, outside them, in 3 and 4 UTF-8 bytes), punctuation, no-break
    spaces, marks, surrogates, upper case, a real page's text."""
    import random

    from warcdeboil.dedup.shingles import word_hashes

    alphabet = [*"aBz Z09.,!?-\n\t\xa0éÉ–“”中文日本語ไทยカナ한국İ", "\U00020000", "\U0002fa1f",
                "\U0002fa20", "\U0001f600", "\u0e00", "\u0dff", "\u0eff", "\u0f00", "\ufaff",
                "\ufb00", "\u3040", "\u303f", "\ud800", "\ufdd0", "\ufde1"]
    rng = random.Random(11)
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 50)))
             for _ in range(2000)]
    texts.append(Path(__file__).read_text(encoding="utf-8"))
    for text in texts:
        assert word_hashes(text).tolist() == _reference_word_hashes(text), repr(text)
    assert sum(len(_reference_word_hashes(text)) for text in texts) > 10_000


def test_shingles_of_a_batch_are_each_texts_shingles() -> None:
    """The stage shingles 64 pages at once: the same hashes as one text at a time, for texts
    shorter than a shingle, empty, all punctuation, in unspaced scripts (cut by tokens()), and
    the real text of a file, at every shingle width."""
    import random

    from warcdeboil.dedup.shingles import shingle_hashes_batch

    rng = random.Random(5)
    alphabet = [*"ab Cd. ,\n\xa0é“中文ไทย", "\U00020000"]
    texts = ["", "one", "one two", " ,. ", "你好世界", Path(__file__).read_text(encoding="utf-8"),
             "many words " * 9000]  # 99 KB: a batch of its own, past the table of powers
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60)))
              for _ in range(500)]
    for width in (1, 3, 5, 8):
        expected = [shingle_hashes(text, width).tolist() for text in texts]
        assert sum(map(len, expected)) > 5000
        for size in (1, 7, 64, len(texts)):
            found = []
            for start in range(0, len(texts), size):
                found += shingle_hashes_batch(texts[start : start + size], width)
            assert [hashes.tolist() for hashes in found] == expected
    with pytest.raises(ValueError):
        shingle_hashes_batch(["a"], 9)


def test_lead_bucket_makes_candidates_of_dissimilar_signatures(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    signatures = [(page, rng.integers(0, 2**32, size=128, dtype=np.uint32)) for page in range(6)]
    leads = np.array([0, 77, 0, 77, 5, 0], dtype=np.uint64)  # 0: no lead
    assert set(candidate_pairs(signatures, tmp_path)) == set()
    with_leads = set(candidate_pairs(signatures, tmp_path, leads=leads))
    assert with_leads == {(1, 3)} == candidate_pairs_in_memory(signatures, leads=leads)


def test_link_dense_blocks_are_left_out_of_the_signature() -> None:
    from warcdeboil.dedup.text import lead_digest, signature_text
    from warcdeboil.page.dom import analyse

    story = ("The council voted on Tuesday to close the old bridge to traffic for the winter, "
             "after engineers found cracks in two of its piers.")
    page = (f"<html><body><p>{story} It reopens in <a href=/may>May</a>.</p>"
            "<ul><li><a href=/a>Council to meet on budget</a></li>"
            "<li><a href=/b>New school opens in the north</a></li></ul></body></html>")
    structured = signature_text(analyse(page, structure=True), None)
    assert story in structured and "It reopens in May ." in structured  # a link in a sentence
    assert "Council to meet" not in structured and "New school" not in structured
    # Without structure marks the links are not known: the list stays.
    plain = signature_text(analyse(page), None)
    assert "Council to meet" in plain and story in plain
    assert lead_digest(structured) == lead_digest(plain) != 0


def test_confirmation_by_lead_needs_containment() -> None:
    from warcdeboil.dedup import LEAD_CONTAINMENT

    # A copy a quarter of its original, J 0.25: contained whole, the same lead.
    assert confirms(0.25, 250, 1000, same_lead=True) and not confirms(0.25, 250, 1000)
    # Two pages that begin alike and then differ are not copies.
    assert not confirms(0.3, 1000, 1000, same_lead=True)
    shared = 0.3 * 2000 / 1.3 / 1000
    assert shared < LEAD_CONTAINMENT


_ORIGINALS: dict[str, object] = {}


def _dragnet_originals(generator: ModuleType) -> dict[str, list[object]]:
    """Dragnet's pages with their gold text, by site (read once for the tests below)."""
    if "dragnet" not in _ORIGINALS:
        _ORIGINALS["dragnet"] = generator.read_originals(shared_file("eval", "dragnet.warc.gz"))
    return _ORIGINALS["dragnet"]  # type: ignore[return-value]


def _groups_of(pages: list[tuple[str, str]], tmp_path: Path) -> list[set[str]]:
    """The duplicate groups of ``pages`` (url, html) as sets of URLs, by the benchmark's path:
    the Deboiler fitted on the pages themselves, dedup.signature_text, duplicate_groups."""
    benchmark = load_script("dedup_benchmark", ROOT / "benchmarks" / "dedup.py")
    texts = benchmark.signature_texts(pages)
    items = [PageText(i, url, texts[i]) for i, (url, _) in enumerate(pages)]
    groups = duplicate_groups(items, tmp_path)
    return [{pages[p][0] for p in (g.keep, *g.drop)} for g in groups]


@pytest.mark.slow
def test_print_copy_of_a_real_page_is_found_and_its_page_two_is_not(tmp_path: Path) -> None:
    """CNN's article keeps a photo gallery's captions, four times its article: its print copy
    (the article alone) has J 0.26 with it, found by the lead rule; page 2 of a long CNN
    article (its second half, contained whole) is not joined to it, nor are distinct pages."""
    generator = load_script("make_dup_crawl", ROOT / "scripts" / "make_dup_crawl.py")
    site = _dragnet_originals(generator)["cnn.com"]
    article = next(p for p in site if p.url.endswith("/romney-sidebar/index.html"))
    long = next(p for p in site if len(p.paragraphs) >= 6 and len(p.gold.split()) >= 300)
    second = generator.paragraphs_html(generator.second_half(long.paragraphs))
    page_two = generator.with_content(long, second) or f"<html><body>{second}</body></html>"
    pages = [(p.url, p.html) for p in site]
    pages += [(article.url + "print", generator.print_page(article)),
              (long.url + "?page=2", page_two)]
    assert _groups_of(pages, tmp_path) == [{article.url, article.url + "print"}]


@pytest.mark.slow
def test_article_in_a_blogger_post_slot_keeps_its_signature(tmp_path: Path) -> None:
    """A zephoria article syndicated into a Blogger page's post: the post is a template slot,
    and the page's longest block is in the sidebar, itself template; the signature text keeps
    the article, and the copy is found."""
    generator = load_script("make_dup_crawl", ROOT / "scripts" / "make_dup_crawl.py")
    originals = _dragnet_originals(generator)
    story = next(p for p in originals["zephoria.org"] if "parenting" in p.url)
    blog = originals["10qdetective.blogspot.com"]
    inner = f"<h1>{story.paragraphs[0]}</h1>" + generator.paragraphs_html(story.paragraphs[1:])
    body = generator.with_content(blog[-1], inner)
    assert body is not None
    copy_url = "http://10qdetective.blogspot.com/syndicated/1"
    pages = [(p.url, p.html) for p in blog] + [(copy_url, body)]
    benchmark = load_script("dedup_benchmark", ROOT / "benchmarks" / "dedup.py")
    texts = dict(zip([u for u, _ in pages], benchmark.signature_texts(pages), strict=True))
    assert story.paragraphs[2][:60] in texts[copy_url]
    home = [(p.url, p.html) for p in originals["zephoria.org"]]
    assert _groups_of([*pages, *home], tmp_path) == [{copy_url, story.url}]


def test_generator_article_paragraphs_once_and_without_comments() -> None:
    generator = load_script("make_dup_crawl", ROOT / "scripts" / "make_dup_crawl.py")
    gold = ("Headline\nFirst paragraph.\nSecond paragraph.\nFirst paragraph.\n\n"
            "!@#$%^&*() COMMENTS\n\nA reader wrote this.")
    page = generator.Original("http://a.com/x", "a.com", "<html></html>", gold)
    assert page.paragraphs == ["Headline", "First paragraph.", "Second paragraph."]
    long = [f"Paragraph {i} " + "word " * 20 for i in range(6)]
    kept = generator.paragraphs_html(generator.second_half(long))
    assert not generator.holds_first_half(f"<html><body>{kept}</body></html>", long)
    assert generator.holds_first_half(
        f"<html><body>{generator.paragraphs_html(long)}</body></html>", long)


def test_comments_are_left_out_of_the_signature_unless_they_hold_the_article() -> None:
    from warcdeboil.dedup.text import signature_text
    from warcdeboil.page.dom import analyse

    story = "The bridge closes for the winter after engineers found cracks in two piers."
    comment = "I drove over it yesterday and never noticed a thing, amazing how they find these."
    page = (f"<html><body><div class=entry-content><p>{story}</p></div>"
            f"<div id=comments><h3>2 Comments</h3><ul><li class=comment>"
            f"<div class=comment_entry><p>{comment}</p></div></li></ul></div></body></html>")
    text = signature_text(analyse(page, structure=True), None)
    assert story in text and comment not in text and "2 Comments" not in text
    # A "comments" element around the page's article (an element of the main role that is no
    # comment) is not left out. (Had the article opened right where that element opens, the
    # marks could not tell it from one element of both roles, a comment's "entry".)
    wrapped = (f"<html><body><div class=comments-open><p>Posted in News</p><article>"
               f"<p>{story}</p></article></div></body></html>")
    assert story in signature_text(analyse(wrapped, structure=True), None)


@pytest.mark.slow
def test_a_real_page_with_274_comments_is_signed_by_its_article(tmp_path: Path) -> None:
    """fourhourworkweek.com keeps 274 comments below the article, 95 % of the text the template
    removal leaves: its signature is the article's, and another article put into the same
    page (a syndicated copy keeping the host page's comments) is not taken for it."""
    generator = load_script("make_dup_crawl", ROOT / "scripts" / "make_dup_crawl.py")
    originals = _dragnet_originals(generator)
    site = originals["fourhourworkweek.com"]
    host = next(p for p in site if "birthday-present" in p.url)
    story = originals["foodwishes.blogspot.com"][0]
    inner = f"<h1>{story.paragraphs[0]}</h1>" + generator.paragraphs_html(story.paragraphs[1:])
    body = generator.with_content(host, inner)
    assert body is not None
    copy_url = "http://www.fourhourworkweek.com/syndicated/1"
    home = [(p.url, p.html) for p in originals["foodwishes.blogspot.com"]]
    pages = [(p.url, p.html) for p in site] + [(copy_url, body), *home]
    assert _groups_of(pages, tmp_path) == [{copy_url, story.url}]


# --- one large page ---------------------------------------------------------------------------

def _large_page(paragraphs: int) -> PageText:
    """A page of ``paragraphs`` short paragraphs of made-up words (30 words each, about 200
    characters)."""
    import random

    from warcdeboil.page.dom import analyse

    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 9)))
             for _ in range(3000)]
    body = "".join("<p>" + " ".join(rng.choices(words, k=30)) + "</p>"
                   for _ in range(paragraphs))
    return analyse(f"<html><body>{body}</body></html>", structure=True)


def test_a_long_text_is_hashed_in_pieces_to_the_same_words() -> None:
    # Pieces of whole words, each hashed with the table of powers: the hashes and word starts
    # of the whole text hashed at once, for words longer than a piece, text in unspaced
    # scripts, separators at either end.
    from warcdeboil.dedup.shingles import _hash_piece, _hash_words

    texts = [
        " ".join(["word", "x" * 70_000, "y" * 65_536, "z"] * 3),
        "你好世界。" * 40_000,
        ". " + "Many words, and punctuation; " * 9_000 + " !",
        "a" * 200_000,
    ]
    for text in texts:
        data = np.frombuffer(text.lower().encode(), dtype=np.uint8)
        hashes, starts = _hash_words(data)
        whole, whole_starts = _hash_piece(data)
        assert len(hashes) == len(starts) >= 1
        assert hashes.tolist() == whole.tolist()
        assert starts.tolist() == whole_starts.tolist()


def test_a_pages_signature_text_and_shingles_take_memory_in_proportion() -> None:
    # Memory of the stage's two steps for one page of 4 MB, in bytes a character of its
    # signature text (tracemalloc: allocations, not time). Before the text was folded in pieces
    # and the words hashed in pieces: 16.7 and 37 (a page of 14 MB took 650 MB to sign).
    import tracemalloc

    from warcdeboil.dedup.shingles import shingle_hashes_batch
    from warcdeboil.dedup.text import signature_text

    page = _large_page(20_000)
    tracemalloc.start()
    try:
        text = signature_text(page, None)
        folding = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        shingle_hashes_batch([text])
        hashing = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(text) > 3_500_000
    assert folding < 12 * len(text)
    assert hashing < 16 * len(text)


def test_the_signature_text_is_folded_in_pieces_as_at_once(monkeypatch) -> None:
    # White space of every kind str.split() knows, runs of it across the cuts between pieces.
    import warcdeboil.dedup.text as signature

    alphabet = ["a", "bc", " ", "\t", "\n", "\xa0", "\u2003", "\x1c", "\x85", "\u3000", "é"]
    rng = np.random.default_rng(4)
    texts = ["".join(rng.choice(alphabet, size=size)) for size in (0, 1, 50, 5000)]
    texts += ["  lead and trail  ", "x" * 300 + " " + "y" * 300]
    for fold in (1, 2, 7, 64):
        monkeypatch.setattr(signature, "FOLD_CHARS", fold)
        for text in texts:
            assert signature._folded(text) == " ".join(text.split())
