"""The language model measured: how well perplexity tells crawl noise from real sentences, in
which languages, how fast it trains and scores, how large and quick to load its files are.

    python benchmarks/perplexity.py                     # everything, ../shared data
    python benchmarks/perplexity.py --part discrimination --part languages

Writes benchmarks/results/perplexity-DATE.json and .md.

- discrimination: English sentences of the gold texts of ../shared/eval (pages split 80/20 by a
  hash of their URL); the model is trained on the sentences of the 80 %, and each kind of noise
  is made from the held-out 20 % or the training vocabulary. AUC = the chance that a noise line
  scores a higher perplexity than a real held-out sentence. Beside it, pyplexity's method as
  its source describes it: a bigram model, 0.8 * p(w2|w1) + 0.2 * p(w1) + 1e-6 (maximum
  likelihood estimates, its tokeniser's rules), trained on the same sentences. The real class
  leaves out gold lines that are themselves mojibake (``gold_mojibake``: the noise kind by the
  issue's definition), listed per cell, with the tables as the gold has them beside.
- languages: the Chinese, Russian and Portuguese pages of ../shared (the warcs' main content,
  scrapinghub's gold), each language's lines scored by a model of that language trained on its
  other pages (two folds), beside English with a training set of the same size.
- speed: `warcdeboil lm train` in a child process on corpora of 1 to 30 million words (CPU time
  and peak memory of the child), the model's size and load time, and scoring time.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import json
import math
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT))

from warcdeboil.lm import LanguageModel  # noqa: E402
from warcdeboil.lm.chars import char_text  # noqa: E402
from warcdeboil.lm.model import (  # noqa: E402
    NOISE_BIAS,
    NOISE_WEIGHTS,
    WORD_NOISE_BIAS,
    WORD_NOISE_WEIGHTS,
)
from warcdeboil.lm.noise import SIGNALS, line_signals  # noqa: E402
from warcdeboil.page.language import detect  # noqa: E402

DATASETS = ("dragnet", "l3s-gn1", "cleaneval", "scrapinghub", "cleanportaleval")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“‘(A-Z0-9])")
# A line break inside a sentence: cleaneval's gold is wrapped at about 70 characters, so its
# lines are pieces of sentences ("Florida boasts one of the most diverse"). A break after no
# closing mark and before a lower-case letter is read as a space.
_WRAPPED = re.compile(r"(?<=[^.!?:;\"”’)\]\s])\n(?=[a-z(])")


def gold_pages(datasets: tuple[str, ...] = DATASETS) -> list[tuple[str, str]]:
    pages = []
    for name in datasets:
        with gzip.open(SHARED / "eval" / f"{name}.gold.jsonl.gz", "rt", encoding="utf-8") as fh:
            for line in fh:
                obj = json.loads(line)
                pages.append((obj["url"], obj["gold"]))
    return pages


def sentences(text: str) -> list[str]:
    found = []
    for line in _WRAPPED.sub(" ", text).split("\n"):
        found += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return found


def held_out(url: str) -> bool:
    return hashlib.sha1(url.encode()).digest()[0] < 52  # about 20 % of pages


def auc(real: list[float], noise: list[float]) -> float:
    """P(noise scores above real), ties counted half (Mann-Whitney)."""
    scores = np.array(real + noise)
    ranks = np.empty(len(scores))
    order = np.argsort(scores, kind="mergesort")
    ranks[order] = np.arange(1, len(scores) + 1)
    sorted_scores = scores[order]
    start = 0
    while start < len(sorted_scores):  # ties share their mean rank
        end = start
        while end + 1 < len(sorted_scores) and sorted_scores[end + 1] == sorted_scores[start]:
            end += 1
        if end > start:
            ranks[order[start:end + 1]] = (start + end + 2) / 2
        start = end + 1
    noise_ranks = ranks[len(real):].sum()
    return float((noise_ranks - len(noise) * (len(noise) + 1) / 2) / (len(real) * len(noise)))


# pyplexity's bigram method, written from its description ---------------------------------

_PYPLEXITY_SPLIT = re.compile(r"""([,;:.()"<>='`?¿!¡])""")


def pyplexity_tokens(text: str) -> list[str]:
    return " ".join(_PYPLEXITY_SPLIT.split(text.lower())).split()


class PyplexityBigram:
    """Maximum-likelihood bigram and unigram probabilities, interpolated 0.8 / 0.2 with a floor
    of 1e-6; the unigram term is the first word's, "#" starts a sentence, perplexity is
    2 ** -(mean log2 p) over the sentence's tokens."""

    def __init__(self, lines: list[str]) -> None:
        unigrams: Counter[str] = Counter()
        bigrams: Counter[tuple[str, str]] = Counter()
        for line in lines:
            tokens = pyplexity_tokens(line)
            unigrams.update(tokens)
            bigrams.update(zip(["#", *tokens[:-1]], tokens, strict=True))
            unigrams["#"] += 1
        total = sum(unigrams.values())
        self.unigram = {w: c / total for w, c in unigrams.items()}
        self.bigram = {pair: c / unigrams[pair[0]] for pair, c in bigrams.items()}

    def perplexities(self, lines: list[str]) -> list[float]:
        return [self.perplexity(line) for line in lines]

    def perplexity(self, line: str) -> float:
        tokens = pyplexity_tokens(line)
        if not tokens:
            return 1e6
        total = 0.0
        for pair in zip(["#", *tokens[:-1]], tokens, strict=True):
            p = 0.8 * self.bigram.get(pair, 0.0) + 0.2 * self.unigram.get(pair[0], 0.0) + 1e-6
            total += math.log2(p)
        return 2 ** (-total / len(tokens))


def outranking(real: list[str], ours: tuple[list[float], list[float]],
               bigram: tuple[list[float], list[float]], top: int = 3) -> list[dict]:
    """Where the noise score loses pairs to the bigram: the real lines that score above the
    most noise lines (ties counted half, as in ``auc``), with how many each score puts them
    above. ``ours`` and ``bigram``: the real lines' scores and the noise's."""
    def above(scores: tuple[list[float], list[float]]) -> np.ndarray:
        noise = np.sort(scores[1])
        real_scores = np.array(scores[0])
        return (np.searchsorted(noise, real_scores, side="left")
                + np.searchsorted(noise, real_scores, side="right")) / 2
    mine, theirs = above(ours), above(bigram)
    return [{"line": real[i][:100], "ours": float(mine[i]), "bigram": float(theirs[i])}
            for i in np.argsort(-mine, kind="stable")[:top] if mine[i] > 0]


def _byte(char: str) -> int | None:
    """The byte a non-ASCII character stands for when UTF-8 is read as cp1252, or as Latin-1
    for the five bytes cp1252 leaves undefined (U+0080-U+009F then stand for themselves);
    None for ASCII and for characters neither reading makes."""
    if ord(char) < 128:
        return None
    try:
        return char.encode("cp1252")[0]
    except UnicodeEncodeError:
        return ord(char) if ord(char) < 0xA0 else None


def gold_mojibake(line: str) -> bool:
    """Whether a real line holds mojibake of the kind ``make_noise`` makes (UTF-8 read as
    cp1252): a run of characters that, taken back to the bytes they were read from
    (``_byte``), holds a valid UTF-8 sequence of two to four bytes. Runs are the line's
    non-ASCII characters either reading makes (mojibake's are never ASCII); bytes UTF-8
    cannot read stay apart (surrogate escapes), so that "é" or curly quotes, which make no
    valid sequence, are not counted, and one valid sequence anywhere in a run is.

    The benchmark's rule (``real_class``): such a line is the noise kind "mojibake" by the
    issue's own definition, so it is set apart from the real class, counted and listed per
    cell, and the figures with it in the real class are kept beside."""
    run: list[int] = []
    for char in line + "\n":
        byte = _byte(char)
        if byte is not None:
            run.append(byte)
            continue
        if run:
            decoded = bytes(run).decode("utf-8", "surrogateescape")
            if any(ord(c) > 127 and not 0xDC80 <= ord(c) <= 0xDCFF for c in decoded):
                return True
            run = []
    return False


def real_class(lines: list[str]) -> tuple[list[str], list[str]]:
    """The sampled gold lines split by the benchmark's rule: the real class (every line that
    is not ``gold_mojibake``), and the gold's own mojibake, set apart."""
    apart = [gold_mojibake(line) for line in lines]
    return ([line for line, bad in zip(lines, apart, strict=True) if not bad],
            [line for line, bad in zip(lines, apart, strict=True) if bad])


def compare(real: list[str], apart: list[str], noise: dict[str, list[str]],
            scorers: dict[str, Any]) -> dict:
    """One cell's AUCs under each of ``scorers`` ("ours" and "bigram": lines to scores): the
    real class (``real``) against each kind of ``noise``; the gold mojibake set apart
    (``apart``) as a kind of its own against the real class; and the same AUCs with those
    lines in the real class, as the gold has them. ``behind``: the kinds where ours is
    below the bigram at full precision (a tie to four decimals counts when ours is lower),
    with both AUCs unrounded; ``outranking``: the real lines above the most noise lines
    there."""
    kinds = [kind for kind in KINDS if noise.get(kind)]
    scored = {label: {kind: list(score(found)) for kind, found in
                      {"real": real, "apart": apart, **noise}.items() if found}
              for label, score in scorers.items()}

    def aucs(real_lines: list[str], key: str) -> dict:
        full = {label: {kind: auc(found[key], found[kind]) for kind in kinds}
                for label, found in scored.items()}
        out: dict = {label: {kind: round(value, 4) for kind, value in found.items()}
                     for label, found in full.items()}
        out["behind"] = {kind: [full["ours"][kind], full["bigram"][kind]] for kind in kinds
                         if full["ours"][kind] < full["bigram"][kind]}
        out["outranking"] = {
            kind: outranking(real_lines, (scored["ours"][key], scored["ours"][kind]),
                             (scored["bigram"][key], scored["bigram"][kind]))
            for kind in out["behind"]}
        return out

    entry = {"real": len(real), **aucs(real, "real")}
    entry["gold_mojibake"] = {"lines": len(apart), "all": apart, **{
        label: round(auc(found["real"], found["apart"]), 4) if apart else None
        for label, found in scored.items()}}
    if apart:
        for found in scored.values():
            found["as the gold has them"] = found["real"] + found["apart"]
        entry["with_gold_mojibake"] = {"real": len(real) + len(apart),
                                       **aucs(real + apart, "as the gold has them")}
    else:  # the same lines: the same figures
        entry["with_gold_mojibake"] = {key: entry[key] for key in
                                       ("real", *scorers, "behind", "outranking")}
    return entry


# Noise of the kinds a crawl holds -----------------------------------------------------------

NAVIGATION = [
    "Home", "News", "Sport", "Business", "About us", "Contact", "Contact us", "Login", "Log in",
    "Register", "Search", "Menu", "Subscribe", "Sign in", "Sign up", "Newsletter", "Archive",
    "Blog", "Events", "Jobs", "Careers", "Advertise", "Help", "FAQ", "Sitemap", "Shop", "Cart",
    "My account", "World", "Politics", "Opinion", "Technology", "Science", "Health",
    "Entertainment", "Travel", "Style", "Video", "Photos", "Weather", "Local", "Education",
]
SHARING = [
    "Share", "Tweet", "Pin it", "Email", "Print", "Facebook", "Twitter", "LinkedIn", "WhatsApp",
    "Share on Facebook", "Share on Twitter", "Follow us", "Comments (3)", "Read more", "Next »",
    "« Previous", "Skip to content", "Back to top", "Posted by admin", "Tags:", "Related posts",
    "Leave a reply", "Copyright © 2019", "All rights reserved", "Privacy policy",
    "Terms of use", "Cookie settings", "Like", "Reply", "0 comments", "Save", "More",
]
SEPARATORS = [" | ", " · ", " / ", " • ", " - ", "  "]
MENUS = [
    "Home", "World", "UK", "US", "Politics", "Business", "Markets", "Tech", "Science", "Health",
    "Sports", "Football", "Cricket", "Tennis", "Golf", "Entertainment", "Arts", "Books",
    "Music", "Film", "TV", "Travel", "Food", "Lifestyle", "Fashion", "Cars", "Property",
    "Money", "Jobs", "Education", "Opinion", "Obituaries", "Weather", "Video", "Podcasts",
    "Games", "Crosswords", "Newsletters", "Offers", "Subscribe",
]


# The second check's lists (written after the score was chosen, never tuned on): a shop's, a
# university's and a forum's navigation, and a shop's menus.
OTHER_NAVIGATION = [
    "Products", "Offers", "Basket", "Checkout", "Wishlist", "Track my order", "Returns",
    "Delivery information", "Store finder", "Gift cards", "Size guide", "Customer service",
    "Students", "Staff", "Alumni", "Research", "Library", "Admissions", "Courses", "Campus map",
    "Forum index", "New posts", "Unanswered topics", "Members", "Moderators", "User control panel",
]
OTHER_SHARING = [
    "Add to basket", "Quick view", "Write a review", "Compare", "Quote", "Report post",
    "Permalink", "Bookmark", "Send to a friend", "Show more", "Load more", "View all",
    "Add to calendar", "Download PDF", "Back", "Go to page", "Sort by", "Filter",
]
OTHER_MENUS = [
    "Women", "Men", "Kids", "Baby", "Shoes", "Bags", "Accessories", "Jewellery", "Watches",
    "Beauty", "Home", "Garden", "Furniture", "Lighting", "Kitchen", "Electronics", "Phones",
    "Laptops", "Cameras", "Toys", "Outdoor", "Sale", "Brands", "Clearance", "Gifts", "Pets",
]


# The third check's lists, written on 2026-11-25 before the order and mojibake signals were
# tried and never looked at while choosing them: a bank's, a council's, a recipe blog's and a
# sports club's navigation, and a travel agent's menus.
FRESH_NAVIGATION = [
    "Personal banking", "Mortgages", "Savings accounts", "Credit cards", "Online banking",
    "Find a branch", "Council tax", "Bins and recycling", "Planning applications",
    "Parking permits", "Report a problem", "Recipes", "Meal plans", "Kitchen tips",
    "Dinner ideas", "Fixtures", "Results", "League table", "Squad", "Tickets", "Club shop",
    "Membership", "Match reports", "Youth academy", "Stadium tours", "Opening times",
]
FRESH_SHARING = [
    "Jump to recipe", "Print recipe", "Rate this recipe", "Pin for later", "Apply now",
    "Log on", "Call us", "Book now", "Buy tickets", "Watch highlights", "See all fixtures",
    "Download the app", "Accessibility", "Translate this page", "Was this page helpful?",
    "Yes", "No", "Feedback",
]
FRESH_MENUS = [
    "Flights", "Hotels", "Holidays", "Cruises", "Car hire", "Deals", "Destinations", "Europe",
    "Asia", "Africa", "Americas", "Caribbean", "Beach", "Skiing", "Family", "Honeymoons",
    "Insurance", "Visas", "Airports", "Lounges", "Parking", "Transfers", "Guides", "Inspiration",
]

# The fourth check's lists, written on 2026-11-25 (session s27) after the fresh check had been
# looked at and before this check was run: a hospital's, a museum's, an estate agent's and a
# software manual's navigation, and a hardware store's menus.
UNSEEN_NAVIGATION = [
    "Find a doctor", "Visiting hours", "Our wards", "Outpatient appointments",
    "Maternity services", "Patient portal", "Exhibitions", "Collections", "Plan your visit",
    "Membership and donations", "Gift shop", "Buy a home", "Sell your home", "Rentals",
    "Property valuation", "Mortgage calculator", "Getting started", "Installation",
    "API reference", "Release notes", "Troubleshooting", "Changelog", "Tutorials",
]
UNSEEN_SHARING = [
    "Book a viewing", "Request a callback", "Save search", "Edit on GitHub", "Copy link",
    "View source", "Previous topic", "Next topic", "Report an issue", "Rate this page",
    "Add to favourites", "Print this page", "Share via email", "Open in new tab",
]
UNSEEN_MENUS = [
    "Tools", "Power tools", "Hand tools", "Paint", "Decorating", "Flooring", "Tiles",
    "Plumbing", "Heating", "Electrical", "Timber", "Doors", "Windows", "Roofing", "Fencing",
    "Sheds", "Storage", "Screws", "Adhesives", "Ladders", "Workwear", "Bathrooms", "Kitchens",
]
# The fifth check's lists, written on 2026-11-25 (session s28) after the unseen words signal
# was chosen and before this check was run: a public library's, an airline's, a newspaper
# archive's and a university physics department's navigation, and a supermarket's menus.
NOVEL_NAVIGATION = [
    "Renew loans", "Reserve a book", "Opening hours", "Digital library", "Join the library",
    "eBooks and audiobooks", "Manage booking", "Check in online", "Flight status",
    "Baggage allowance", "Frequent flyer", "Special assistance", "Browse by decade",
    "Front pages", "Search the archive", "Subscriber login", "Historical photos",
    "Research groups", "Undergraduate study", "Postgraduate study", "Seminars", "People",
    "Contact the department", "Vacancies",
]
NOVEL_SHARING = [
    "Renew all", "Place a hold", "Add to my list", "Select seat", "Change flight",
    "Upgrade", "Clip this article", "Order a reprint", "Cite this page", "Download as PDF",
    "Show full record", "Email this record", "Back to results", "Sign up for alerts",
]
NOVEL_MENUS = [
    "Fruit and veg", "Meat and fish", "Bakery", "Dairy", "Eggs", "Frozen", "Food cupboard",
    "Drinks", "Snacks", "Household", "Baby and toddler", "Health and beauty", "Pet food",
    "Free from", "Vegan", "World foods", "Wine", "Beer and cider", "Cleaning", "Laundry",
    "Flowers", "Party food", "Offers", "Delivery slots",
]
LISTS = {"first": (NAVIGATION + SHARING, MENUS),
         "other": (OTHER_NAVIGATION + OTHER_SHARING, OTHER_MENUS),
         "fresh": (FRESH_NAVIGATION + FRESH_SHARING, FRESH_MENUS),
         "unseen": (UNSEEN_NAVIGATION + UNSEEN_SHARING, UNSEEN_MENUS),
         "novel": (NOVEL_NAVIGATION + NOVEL_SHARING, NOVEL_MENUS)}
# Whose navigation and menus each list is, for the results.
LIST_SOURCES = {
    "first": "a news site's",
    "other": "a shop's, a university's, a forum's",
    "fresh": "a bank's, a council's, a recipe blog's, a sports club's; a travel agent's menus",
    "unseen": "a hospital's, a museum's, an estate agent's, a software manual's; a hardware "
              "store's menus",
    "novel": "a public library's, an airline's, a newspaper archive's, a university physics "
             "department's; a supermarket's menus",
}


def make_noise(kind: str, rng: random.Random, real: list[str], vocabulary: list[str],
               weights: list[int], n: int, other: bool = False,
               lists: str | None = None) -> list[str]:
    """``n`` lines of one kind of noise (the second check's lists with ``other``, or those
    ``LISTS`` names)."""
    navigation, menus = LISTS[lists or ("other" if other else "first")]
    out: list[str] = []
    if kind == "mojibake":
        damaged = [s for s in real if any(ord(c) > 127 for c in s)]
        return [s.encode("utf-8").decode("cp1252", errors="replace") for s in damaged[:n]]
    content = [w for w in vocabulary if len(w) >= 4 and w.isalpha()]
    for _ in range(n):
        sentence = rng.choice(real)
        size = len(sentence.split())
        if kind == "word salad":
            out.append(" ".join(rng.choices(vocabulary, weights, k=size)))
        elif kind == "shuffled sentence":
            words = sentence.split()
            rng.shuffle(words)
            out.append(" ".join(words))
        elif kind == "keyword stuffing":
            keywords = rng.sample(content, rng.randint(2, 4))
            phrases = [" ".join(rng.sample(keywords, rng.randint(1, len(keywords))))
                       for _ in range(rng.randint(4, 9))]
            out.append(rng.choice([", ", " ", " | "]).join(phrases))
        elif kind == "random characters":
            alphabet = "abcdefghijklmnopqrstuvwxyz0123456789" * 3 + "#@%&*-_/=+"
            out.append(" ".join("".join(rng.choices(alphabet, k=rng.randint(2, 10)))
                                for _ in range(rng.randint(4, 16))))
        elif kind == "navigation and sharing":
            items = rng.sample(navigation, rng.randint(3, 7))
            out.append(rng.choice(SEPARATORS).join(items))
        elif kind == "menu items concatenated":
            out.append(" ".join(rng.sample(menus, rng.randint(5, 12))))
    return out


KINDS = ["word salad", "shuffled sentence", "keyword stuffing", "random characters", "mojibake",
         "navigation and sharing", "menu items concatenated"]


def fit_logistic(features: dict[str, np.ndarray]) -> tuple[list[float], float]:
    """Weights and bias of a logistic telling noise (every key but "real") from real lines,
    each kind of noise weighing as much in all as the real lines do (Newton's method, a light
    L2 penalty on the weights)."""
    real = features["real"]
    kinds = [k for k in features if k != "real"]
    x = np.vstack([real] + [features[k] for k in kinds])
    x = np.hstack([x, np.ones((len(x), 1))])
    y = np.concatenate([np.zeros(len(real))] + [np.ones(len(features[k])) for k in kinds])
    weight = np.concatenate([np.full(len(real), 1 / len(real))]
                            + [np.full(len(features[k]), 1 / len(features[k])) for k in kinds])
    weight[len(real):] /= len(kinds)
    beta = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], 1e-4)
    penalty[-1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-x @ beta))
        gradient = x.T @ (weight * (p - y)) + penalty * beta
        hessian = (x * (weight * p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-9:
            break
    return [round(float(b), 3) for b in beta[:-1]], round(float(beta[-1]), 3)


def split_sentences(rng: random.Random, datasets: tuple[str, ...] = DATASETS,
                    ) -> tuple[list[str], dict[str, list[str]]]:
    """Training sentences (80 % of the pages), and the held-out pages' sentences of 6 to 60
    words split in two by another bit of the URL's hash: "dev" to choose and fit on, "test"
    to report."""
    train: list[str] = []
    held: dict[str, list[str]] = {"dev": [], "test": []}
    for url, text in gold_pages(datasets):
        if detect(text) != "en":
            continue
        if held_out(url):
            split = "dev" if hashlib.sha1(url.encode()).digest()[1] & 1 else "test"
            held[split].extend(sentences(text))
        else:
            train.extend(sentences(text))
    for split, found in held.items():
        real = [s for s in found if 6 <= len(s.split()) <= 60]
        held[split] = rng.sample(real, min(1500, len(real)))
    return train, held


def discrimination(settings: list[tuple[int, tuple[int, ...]]]) -> dict:
    rng = random.Random(19)
    train, held = split_sentences(rng)
    words = Counter(w for s in train for w in s.split())
    vocabulary, weights = zip(*words.items(), strict=True)
    # The noise is made from every sampled gold line; the real class leaves the gold's own
    # mojibake out (``real_class``), in both splits.
    lines = {split: {"real": real, **{kind: make_noise(kind, rng, real, list(vocabulary),
                                                      list(weights), 500) for kind in KINDS}}
             for split, real in held.items()}
    apart = {}
    for split, found in lines.items():
        found["real"], apart[split] = real_class(found["real"])
    test = lines["test"]
    result: dict = {"train_sentences": len(train),
                    "train_words": sum(len(s.split()) for s in train),
                    "real": {split: len(v["real"]) for split, v in lines.items()},
                    "gold_mojibake_apart": {split: len(v) for split, v in apart.items()},
                    "noise": {k: len(v) for k, v in test.items() if k != "real"},
                    "noise_dev": {k: len(v) for k, v in lines["dev"].items() if k != "real"},
                    "examples": {k: v[:2] for k, v in test.items() if k != "real"},
                    "models": []}

    def aucs(score: Any) -> dict[str, float]:
        real = list(score(test["real"]))
        return {kind: round(auc(real, list(score(test[kind]))), 4) for kind in KINDS}

    started = time.process_time()
    bigram = PyplexityBigram(train)
    result["pyplexity_bigram"] = {
        "train_cpu_s": round(time.process_time() - started, 2),
        "auc": aucs(lambda found: [bigram.perplexity(s) for s in found])}
    for order, floors in settings:
        started = time.process_time()
        model = LanguageModel.train(train, order=order, min_counts=floors, chars=False)
        cpu = time.process_time() - started
        result["models"].append({"label": f"KN order {order}, min counts {list(floors)}: "
                                           "perplexity", "bytes": _size(model),
                                 "ngrams": [len(level) for level in model.levels],
                                 "train_cpu_s": round(cpu, 2),
                                 "auc": aucs(model.line_perplexities)})
        print(result["models"][-1]["label"], min(result["models"][-1]["auc"].values()),
              file=sys.stderr)
    # The default model, word and character components, and the noise score fitted on dev.
    started = time.process_time()
    model = LanguageModel.train(train)
    cpu = time.process_time() - started
    assert model.chars is not None
    chars = model.chars
    result["models"].append({
        "label": f"characters alone, order {chars.order}, 1 text in "
                 f"{model.info['chars']['sample']}: perplexity", "bytes": _size(chars),
        "auc": aucs(lambda found: chars.line_perplexities(char_text("\n".join(found))))})

    def features(found: list[str]) -> np.ndarray:
        return np.hstack([model.line_features("\n".join(found))[:, :2],
                          chars.line_features(char_text("\n".join(found)))[:, [0, 2]]])

    dev = {kind: features(found) for kind, found in lines["dev"].items()}
    fitted, bias = fit_logistic(dev)
    word_fitted, word_bias = fit_logistic({k: v[:, :2] for k, v in dev.items()})
    result["fit"] = {"weights": fitted, "bias": bias, "word_weights": word_fitted,
                     "word_bias": word_bias, "shipped": list(NOISE_WEIGHTS),
                     "shipped_bias": NOISE_BIAS, "shipped_word": list(WORD_NOISE_WEIGHTS),
                     "shipped_word_bias": WORD_NOISE_BIAS}
    word_only = LanguageModel(model.levels, model.vocabulary, model.info)  # as an ARPA model
    result["models"].append({"label": "words only (as an ARPA model): line_noise_scores",
                             "bytes": _size(word_only), "auc": aucs(word_only.line_noise_scores)})
    uncalibrated = LanguageModel(model.levels, model.vocabulary, model.info, chars=chars)
    result["models"].append({"label": "words and characters, no calibration (2026-11-24's "
                                      "logistic): line_noise_scores",
                             "auc": aucs(uncalibrated.line_noise_scores)})
    for number, name in enumerate(SIGNALS):
        result["models"].append({"label": f"signal alone: {name}", "auc": aucs(
            lambda found, number=number: line_signals(model, "\n".join(found))[0][:, number])})
    result["models"].append({"label": f"default (order {model.order}, characters order "
                                      f"{chars.order}): line_noise_scores",
                             "bytes": _size(model), "train_cpu_s": round(cpu, 2),
                             "calibration_lines": model.info.get("calibration_lines"),
                             "auc": aucs(model.line_noise_scores)})
    result["cell"] = compare(test["real"], apart["test"],
                             {kind: test[kind] for kind in KINDS},
                             {"ours": model.line_noise_scores, "bigram": bigram.perplexities})
    print(result["fit"], result["models"][-1]["auc"], file=sys.stderr)
    return result


def other_datasets(left_outs: tuple[str, ...] = DATASETS, seed: int = 25,
                   lists: str = "other") -> dict:
    """The second check: each dataset left out in turn. The model is trained on the training
    pages of the other four; its real sentences are those of the left-out dataset's English
    pages, and the noise is made from them with other lists of navigation and menus
    (``LISTS[lists]``) and the left-out dataset's own words for the salad."""
    result = {}
    for left_out in left_outs:
        rng = random.Random(seed)
        train, _ = split_sentences(rng, tuple(d for d in DATASETS if d != left_out))
        found = [s for _, text in gold_pages((left_out,)) if detect(text) == "en"
                 for s in sentences(text)]
        real = [s for s in found if 6 <= len(s.split()) <= 60]
        if len(real) < 100:
            continue
        real = rng.sample(real, min(1500, len(real)))
        words = Counter(w for s in found for w in s.split())
        vocabulary, weights = zip(*words.items(), strict=True)
        # The noise is made from every sampled gold line; the real class leaves the gold's own
        # mojibake out (``real_class``).
        noise = {kind: make_noise(kind, rng, real, list(vocabulary), list(weights), 500,
                                  lists=lists) for kind in KINDS}
        model = LanguageModel.train(train)
        bigram = PyplexityBigram(train)
        entry: dict = {"train_words": sum(len(s.split()) for s in train), "sampled": len(real),
                       "noise": {k: len(v) for k, v in noise.items()},
                       **compare(*real_class(real), noise, {"ours": model.line_noise_scores,
                                                            "bigram": bigram.perplexities})}
        result[left_out] = entry
        print(left_out, entry, file=sys.stderr)
    return result


def _size(model: LanguageModel) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        model.save(Path(tmp) / "m.lm")
        return (Path(tmp) / "m.lm").stat().st_size


# Languages -----------------------------------------------------------------------------------

def pages_by_language() -> dict[str, list[str]]:
    """Main content of the pages of ../shared/warcs (cleaned here) and scrapinghub's gold."""
    found: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, "-m", "warcdeboil", "clean", str(SHARED / "warcs"),
                        "-o", out, "--format", "jsonl", "-q", "-j", "2"],
                       check=False, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        for path in sorted(p for p in Path(out).rglob("*.jsonl*")  # not the options records
                           if p.name.endswith((".jsonl", ".jsonl.gz"))):
            opener = gzip.open if path.name.endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
                for line in fh:
                    text = json.loads(line).get("text") or ""
                    if text:
                        found.setdefault(detect(text), []).append(text)
    with gzip.open(SHARED / "eval" / "scrapinghub.gold.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            text = json.loads(line)["gold"]
            found.setdefault(detect(text), []).append(text)
    return found


def languages() -> dict:
    pages = pages_by_language()
    english = [text for _, text in gold_pages() if detect(text) == "en"]
    result = {}
    for lang in ("zh", "ru", "pt"):
        texts = pages.get(lang, [])
        chars = sum(len(t) for t in texts)
        entry: dict = {"pages": len(texts), "chars": chars}
        if len(texts) >= 2:
            entry["perplexity"] = _percentiles(_two_folds(texts))
            # English with as much training text, for comparison
            sample, size = [], 0
            for text in english:
                if size >= chars:
                    break
                sample.append(text)
                size += len(text)
            entry["english_same_size"] = _percentiles(_two_folds(sample))
        result[lang] = entry
    result["en"] = {"pages": len(english), "perplexity": _percentiles(_two_folds(english[:600]))}
    return result


def _two_folds(texts: list[str]) -> list[float]:
    scores: list[float] = []
    halves = [texts[0::2], texts[1::2]]
    for train, test in ((halves[0], halves[1]), (halves[1], halves[0])):
        if not train or not test:
            continue
        model = LanguageModel.train(train)
        lines = [line for text in test for line in text.split("\n") if len(line) >= 20]
        scores += model.line_perplexities(lines)
    return scores


def _percentiles(scores: list[float]) -> dict:
    if not scores:
        return {"lines": 0}
    values = np.percentile(scores, [10, 25, 50, 75, 90])
    return {"lines": len(scores), **{f"p{p}": round(float(v), 1)
                                     for p, v in zip((10, 25, 50, 75, 90), values, strict=True)}}


# Speed, memory, size -------------------------------------------------------------------------

def corpus(path: Path, words: int, base: list[str], seed: int) -> int:
    """Write about ``words`` words: the gold sentences again and again, each copy with 15 % of
    its words given a suffix of its own, so that new copies bring new n-grams as fresh text
    would (a plain repeat would add none and flatter memory)."""
    rng = random.Random(seed)
    written = 0
    copy = 0
    with open(path, "w", encoding="utf-8") as out:
        while written < words:
            tag = "".join(rng.choices("bcdfghjklmnpqrstvwxz", k=3))
            for sentence in base:
                tokens = sentence.split()
                if copy:
                    tokens = [t + tag if rng.random() < 0.15 else t for t in tokens]
                out.write(" ".join(tokens) + "\n")
                written += len(tokens)
                if written >= words:
                    break
            copy += 1
    return written


def speed(sizes: list[int], repeat: int = 1) -> dict:
    """Each size trained ``repeat`` times: the least CPU time is kept (other processes on a
    shared machine only ever add to it), and the largest peak memory."""
    base = [s for _, text in gold_pages() for s in sentences(text)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            text = Path(tmp) / "corpus.txt"
            words = corpus(text, size, base, size)
            model = Path(tmp) / "m.lm"
            runs = []
            for _ in range(repeat):
                child = subprocess.Popen(
                    [sys.executable, "-m", "warcdeboil", "lm", "train", str(text), "-o",
                     str(model), "--json"], cwd=ROOT, stdout=subprocess.PIPE,
                    env={**os.environ, "PYTHONPATH": str(ROOT)})
                _, status, usage = os.wait4(child.pid, 0)
                report = json.loads(child.stdout.read() if child.stdout else b"{}")
                runs.append((usage.ru_utime + usage.ru_stime, report["peak_mb"]))
            cpu = min(run[0] for run in runs)
            report["peak_mb"] = max(run[1] for run in runs)
            loads, load_cpu = [], []
            for _ in range(3):
                started, cpu_started = time.perf_counter(), time.process_time()
                LanguageModel.load(model)
                loads.append(time.perf_counter() - started)
                load_cpu.append(time.process_time() - cpu_started)
            rows.append({"target": size, "words": words, "units": report["units"],
                         "cpu_s": round(cpu, 2), "cpu_runs": [round(r[0], 2) for r in runs],
                         "words_per_cpu_s": round(words / cpu), "peak_mb": report["peak_mb"],
                         "model_mb": round(report["bytes"] / 1e6, 2),
                         "ngrams": report["ngrams"], "load_s": round(min(loads), 3),
                         "load_cpu_s": round(min(load_cpu), 3),
                         "pruned_below": report["pruned_below"]})
            print(rows[-1], file=sys.stderr)
            text.unlink()
    return {"rows": rows}


def scoring() -> dict:
    pages = [text for url, text in gold_pages() if url and detect(text) == "en"]
    train, test = pages[200:], pages[:200]
    model = LanguageModel.train(train)
    words = sum(len(t.split()) for t in test)
    best_page = best_lines = best_batch = best_noise = math.inf
    for _ in range(3):
        started = time.process_time()
        for text in test:
            model.line_noise_scores(text)
        best_noise = min(best_noise, time.process_time() - started)
        started = time.process_time()
        for first in range(0, len(test), 50):
            model.perplexities(test[first:first + 50])
        best_batch = min(best_batch, time.process_time() - started)
        started = time.process_time()
        for text in test:
            model.perplexity(text)
        best_page = min(best_page, time.process_time() - started)
        started = time.process_time()
        for text in test:
            model.line_perplexities(text)
        best_lines = min(best_lines, time.process_time() - started)
    return {"pages": len(test), "words": words,
            "us_per_100_words_page": round(best_page / words * 1e8, 1),
            "us_per_100_words_lines": round(best_lines / words * 1e8, 1),
            "us_per_100_words_noise_lines": round(best_noise / words * 1e8, 1),
            "us_per_100_words_batches_of_50": round(best_batch / words * 1e8, 1),
            "us_per_page": round(best_page / len(test) * 1e6, 1)}


# Report --------------------------------------------------------------------------------------

def _outranking_lines(cells: list[tuple[str, dict]]) -> list[str]:
    """The ``outranking`` of each cell where the noise score trails the bigram, as a list."""
    out = []
    for name, found in cells:
        for kind, lines in found.items():
            out.append(f"- {name}{kind}: " + "; ".join(
                f"`{line['line']}` above {line['ours']:g} / {line['bigram']:g}"
                for line in lines))
    if out:
        out = ["", "Where the noise score trails the bigram, the real lines it puts above the "
               "most noise lines (how many, ours / the bigram's):", "", *out]
    return out


def _pair(found: dict, kind: str) -> str:
    """A kind's AUCs in a cell, ours / the bigram's, * where ours is behind."""
    if kind not in found["ours"]:
        return "–"
    return (f"{found['ours'][kind]:.4f} / {found['bigram'][kind]:.4f}"
            + ("*" if kind in found["behind"] else ""))


def _cell_tables(cells: list[tuple[str, dict]], head: str) -> list[str]:
    """The cells of ``compare`` (name, entry; an entry may carry ``train_words``): the table
    of the real class against each kind, with the gold's own mojibake set apart (how many,
    and the AUC of those lines against the real class); the real lines that score above the
    most noise lines where ours is behind; every line set apart; and the table as the gold
    has them, those lines in the real class."""
    words = all("train_words" in e for _, e in cells)
    out = ["AUC, ours / pyplexity-style bigram; * where ours is behind at full precision. The "
           "real class leaves out the gold's own mojibake (lines that hold a valid UTF-8 "
           "sequence read as cp1252: `gold_mojibake`), set apart as a kind of its own (how "
           "many, then its AUC against the real class):", "",
           head + ("train words | " if words else "") + "real | gold mojibake apart | "
           + " | ".join(KINDS) + " |", "|" + "---|" * (len(KINDS) + 3 + words)]
    for name, e in cells:
        g = e["gold_mojibake"]
        moj = f"{g['lines']}: {g['ours']:.4f} / {g['bigram']:.4f}" if g["lines"] else "0"
        out.append(f"| {name} | " + (f"{e['train_words']:,} | " if words else "")
                   + f"{e['real']:,} | {moj} | "
                   + " | ".join(_pair(e, kind) for kind in KINDS) + " |")
    out += _outranking_lines([(f"{name}, ", e["outranking"]) for name, e in cells])
    apart = [f"- {name}: " + "; ".join(f"`{line[:120]}`" for line in e["gold_mojibake"]["all"])
             for name, e in cells if e["gold_mojibake"]["lines"]]
    out += ["", "The gold's own mojibake, set apart: "
            + ("every line, by cell:" if apart else "none in these cells.")]
    if apart:
        out += ["", *apart]
        out += ["", "As the gold has them (its mojibake among the real lines, as in the "
                "results before 2026-11-25f), AUC, ours / bigram; * where ours is behind:", "",
                head + "real | " + " | ".join(KINDS) + " |", "|" + "---|" * (len(KINDS) + 2)]
        for name, e in cells:
            w = e["with_gold_mojibake"]
            out.append(f"| {name} | {w['real']:,} | "
                       + " | ".join(_pair(w, kind) for kind in KINDS) + " |")
        out += _outranking_lines([(f"{name} as the gold has them, ", e["with_gold_mojibake"]
                                   ["outranking"]) for name, e in cells
                                  if e["gold_mojibake"]["lines"]])
    return out


def markdown(results: dict) -> str:
    out = [f"# Perplexity: {results['date']}", "", f"Machine: {results['machine']}", ""]
    if results.get("note"):
        out += [results["note"], ""]
    if "discrimination" in results:
        d = results["discrimination"]
        out += ["## Discrimination (AUC: noise scores above real held-out sentences)", "",
                f"Trained on {d['train_sentences']:,} sentences ({d['train_words']:,} words) of "
                "English gold text. The held-out pages are split in two: dev "
                f"({d['real']['dev']:,} real sentences, noise "
                + ", ".join(f"{k} {v:,}" for k, v in d["noise_dev"].items())
                + ") is where the fallback logistic (models without calibration) was fitted and "
                "the signals were chosen; the AUCs are of test "
                f"({d['real']['test']:,} real sentences, noise "
                + ", ".join(f"{k} {v:,}" for k, v in d["noise"].items()) + ").", ""]
        head = "| model: score | size | " + " | ".join(KINDS) + " |"
        out += [head, "|" + "---|" * (len(KINDS) + 2)]
        out.append("| pyplexity-style bigram (0.8/0.2, ML): perplexity | – | " + " | ".join(
            f"{d['pyplexity_bigram']['auc'][k]:.4f}" for k in KINDS) + " |")
        for m in d["models"]:
            size = f"{m['bytes'] / 1e6:.1f} MB" if "bytes" in m else "–"
            out.append(f"| {m['label']} | {size} | "
                       + " | ".join(f"{m['auc'][k]:.4f}" for k in KINDS) + " |")
        f = d["fit"]
        out += ["", "Noise score (default): the most extreme of the tests (each a sum of its "
                "signals' surprises), as a share of the lines held out of the model's own "
                f"training text ({d['models'][-1].get('calibration_lines')} lines; "
                "`warcdeboil/lm/noise.py`).",
                "", "Fallback noise score: logistic of (word log10 perplexity, share of word "
                "units below p 1e-3, character log10 perplexity, surprise of the least likely "
                "character); "
                f"fitted on dev: weights {f['weights']}, bias {f['bias']} (shipped: "
                f"{f['shipped']}, {f['shipped_bias']}); words only: {f['word_weights']}, "
                f"{f['word_bias']} (shipped: {f['shipped_word']}, {f['shipped_word_bias']})."]
        out += ["", "Examples of each kind:", ""]
        out += [f"- {k}: `{v[0]}`" for k, v in d["examples"].items() if v]
        out += ["", "The test split's real class against each kind, both scores: "
                f"{d['gold_mojibake_apart']['dev']} dev and "
                f"{d['gold_mojibake_apart']['test']} test lines of the gold's own mojibake are "
                "set apart (the tables above leave them out too).", ""]
        out += _cell_tables([("test", d["cell"])], "| split | ")
        out.append("")
    for key in sorted(k for k in results if k.startswith("other_datasets")):
        seed, lists = (25, "other") if key == "other_datasets" else key.split("_")[:1:-1]
        out += [f"## Leaving each dataset out: noise seed {seed}, lists \"{lists}\"", "",
                "Each dataset left out in turn: the model is trained on the other four's "
                "training pages; real sentences are the left-out dataset's (English pages, 6 to "
                "60 words), and its noise is made from them with other lists of navigation and "
                + f"menus ({LIST_SOURCES[lists]})"
                + " and its own words for the salad.", ""]
        out += _cell_tables(list(results[key].items()), "| left out | ")
        out.append("")
    if "languages" in results:
        out += ["## Languages (perplexity of held-out lines, two folds)", "",
                "| language | pages | characters | lines | p10 | p25 | p50 | p75 | p90 |",
                "|---|---|---|---|---|---|---|---|---|"]
        for lang, e in results["languages"].items():
            for label, key in ((lang, "perplexity"), (f"en, as much text as {lang}",
                                                       "english_same_size")):
                if key in e and e[key].get("lines"):
                    p = e[key]
                    out.append(f"| {label} | {e['pages'] if key == 'perplexity' else ''} | "
                               f"{e.get('chars', '') if key == 'perplexity' else ''} | "
                               f"{p['lines']} | {p['p10']} | {p['p25']} | {p['p50']} | "
                               f"{p['p75']} | {p['p90']} |")
            if not e.get("perplexity", {}).get("lines") and lang != "en":
                out.append(f"| {lang} | {e['pages']} | {e.get('chars', 0)} | too little text "
                           "| | | | | |")
        out.append("")
    if "speed" in results:
        out += ["## Training speed, memory, model size, load time", "",
                "| words | units | CPU s | words / CPU-s | peak MB | model MB | n-grams | load s "
                "(CPU s) |", "|---|---|---|---|---|---|---|---|"]
        for r in results["speed"]["rows"]:
            out.append(f"| {r['words']:,}{' (' + r['label'] + ')' if 'label' in r else ''} | "
                       f"{r['units']:,} | {r['cpu_s']} | "
                       f"{r['words_per_cpu_s']:,} | {r['peak_mb']} | {r['model_mb']} | "
                       f"{', '.join(f'{n:,}' for n in r['ngrams'])} | {r['load_s']}"
                       + (f" ({r['load_cpu_s']})" if "load_cpu_s" in r else "") + " |")
        out.append("")
    if "scoring" in results:
        s = results["scoring"]
        out += ["## Scoring", "", f"{s['pages']} held-out English pages, {s['words']:,} words: "
                f"{s['us_per_100_words_page']} µs per 100 words a page at a time "
                f"({s['us_per_page']} µs a page), {s['us_per_100_words_batches_of_50']} µs in "
                f"batches of 50 pages (`perplexities`), {s['us_per_100_words_lines']} µs per "
                "100 words a line at a time (`line_perplexities`, the word model), "
                f"{s.get('us_per_100_words_noise_lines', '–')} µs per 100 words for "
                "`line_noise_scores` (word and character models).", ""]
    return "\n".join(out)


def _earlier(args: argparse.Namespace, key: str) -> dict:
    """The day's results of ``key`` already written (a run of some datasets adds to them)."""
    path = args.out / f"perplexity-{args.date}.json"
    return json.loads(path.read_text()).get(key, {}) if path.exists() else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", action="append",
                        choices=["discrimination", "other-datasets", "languages", "speed",
                                 "scoring"])
    parser.add_argument("--sizes", default="1000000,3000000,10000000,30000000")
    parser.add_argument("--repeat", type=int, default=1, help="training runs a size (speed)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--date", default=datetime.date.today().isoformat(),
                        help="the results' date, in their file names")
    parser.add_argument("--left-out", help="other-datasets: these datasets only (comma "
                        "separated; the day's results for the others are kept)")
    parser.add_argument("--seed", type=int, default=25, help="other-datasets: the noise's seed")
    parser.add_argument("--lists", default="other", choices=sorted(LISTS),
                        help="other-datasets: the navigation and menu lists")
    args = parser.parse_args()
    parts = args.part or ["discrimination", "other-datasets", "languages", "speed", "scoring"]
    results: dict = {"date": args.date,
                     "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                                f"Python {platform.python_version()}, numpy {np.__version__}"}
    if "discrimination" in parts:
        results["discrimination"] = discrimination(
            [(2, (1, 1)), (3, (1, 1, 1)), (3, (1, 2, 2)), (4, (1, 2, 2, 2)), (5, (1, 2, 2, 2, 2))])
    if "other-datasets" in parts:
        left_outs = tuple(args.left_out.split(",")) if args.left_out else DATASETS
        key = "other_datasets" if (args.seed, args.lists) == (25, "other") else \
            f"other_datasets_{args.lists}_{args.seed}"
        results[key] = {**_earlier(args, key), **other_datasets(left_outs, args.seed,
                                                                 args.lists)}
    if "languages" in parts:
        results["languages"] = languages()
    if "speed" in parts:
        results["speed"] = speed([int(x) for x in args.sizes.split(",")], args.repeat)
    if "scoring" in parts:
        results["scoring"] = scoring()
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"perplexity-{results['date']}"
    if stem.with_suffix(".json").exists():  # a part run alone updates the day's results
        before = json.loads(stem.with_suffix(".json").read_text())
        if "speed" in results and "speed" in before:  # other sizes' rows are kept
            done = {row["target"] for row in results["speed"]["rows"]}
            kept = [row for row in before["speed"]["rows"]
                    if row.get("target", round(row["words"], -5)) not in done]
            results["speed"]["rows"] = sorted(kept + results["speed"]["rows"],
                                              key=lambda row: row["words"])
        results = {**before, **results}
    stem.with_suffix(".json").write_text(json.dumps(results, indent=2, ensure_ascii=False))
    stem.with_suffix(".md").write_text(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
