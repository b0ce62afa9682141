"""C4's filters: Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a Unified
Text-to-Text Transformer", section 2.2.

Most of C4's rules drop *lines*, not pages: a line that does not end in a terminal punctuation
mark, has fewer than three words, or mentions Javascript or a cookie or privacy policy goes;
citation markers ("[1]", "[edit]") are taken out of lines. Three rules drop the page: fewer than
five sentences in the lines kept, "lorem ipsum", a curly bracket. The page-level flags of
:func:`c4_quality` are those three; the lines C4 would keep are :func:`c4_lines`'. The rules run
in the paper's order, each on the lines the rules before it kept, as the authors' own code does
(TensorFlow Datasets' ``c4_utils``): "lorem ipsum" or "{" in a line that was already dropped
(a menu line without a full stop) does not drop the page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress
from operator import methodcaller

from .page import PageText, folded, folded_phrases
from .words import SENTENCE_TERMINALS, is_word, split_chunk, unspaced

__all__ = ["C4Quality", "c4_lines", "c4_quality"]


@dataclass(frozen=True)
class C4Quality:
    """C4's parameters, the paper's by default.

    Lines are kept that end in one of ``end_marks`` (and, with ``drop_ellipsis_lines``, not in
    "..."), have at least ``min_words_per_line`` words, no word longer than ``max_word_length``
    characters (the authors' code; 0 turns it off), and, with ``javascript_lines``, do not
    mention Javascript, with ``policy_lines`` none of ``policy_phrases``. With
    ``remove_citations``, citation markers are taken out first. A page is flagged when its kept
    lines hold fewer than ``min_sentences`` sentences (reason ``few_sentences``), with
    ``lorem_ipsum`` when a kept line says "lorem ipsum" (``lorem_ipsum``), with
    ``curly_bracket`` when a kept line holds "{" (``curly_bracket``).
    """

    end_marks: str = ".!?\"'"
    drop_ellipsis_lines: bool = True
    min_words_per_line: int = 3
    max_word_length: int = 1000
    remove_citations: bool = True
    javascript_lines: bool = True
    policy_lines: bool = True
    policy_phrases: tuple[str, ...] = ("terms of use", "privacy policy", "cookie policy",
                                       "uses cookies", "use of cookies", "use cookies")
    min_sentences: int = 5
    lorem_ipsum: bool = True
    curly_bracket: bool = True


# Citation markers of a wiki: "[1]", "[12]", "[edit]", "[citation needed]".
_CITATION = re.compile(r"\[(?:\d*|edit|citation needed)\]", re.IGNORECASE)
# A sentence ends at a terminal mark standing as a word of its own ("said." splits into "said"
# and "."; "Mr." and "U.S." keep their period): the next word proper starts another.
_TERMINALS = frozenset(SENTENCE_TERMINALS)


def c4_lines(page: PageText, rules: C4Quality) -> list[tuple[str, str]]:
    """Each line of the page, citation markers taken out, with why C4 drops it (``""``: kept).

    A line's reason is one of ``long_word``, ``no_end_mark``, ``few_words``, ``javascript``,
    ``policy``; the page-level rules are :func:`c4_quality`'s.
    """
    judged: list[tuple[str, str]] = []
    _kept(page, rules, judged)
    return judged


def c4_quality(page: PageText, rules: C4Quality) -> list[str]:
    """Why C4 would drop the page (no reason: it keeps it)."""
    reasons = []
    kept = _kept(page, rules, up_to=rules.min_sentences)
    if rules.min_sentences and _sentences_in(kept, rules.min_sentences, page) < rules.min_sentences:
        reasons.append("few_sentences")
    if rules.lorem_ipsum and any(b"lorem ipsum" in folded for _, folded in kept):
        reasons.append("lorem_ipsum")
    if rules.curly_bracket and "{" in page.text and any("{" in line for line, _ in kept):
        reasons.append("curly_bracket")
    return reasons


def _sentences_in(kept: list[tuple[str, bytes]], enough: int, page: PageText) -> int:
    """Sentences in the lines kept, counted until there are ``enough`` (all c4_quality asks).
    A kept line holds one sentence at least (it has words and ends in a mark), so only when
    fewer lines than ``enough`` are kept are their sentences counted, and a line's words are
    split only until the count is reached: a text of one or a few long lines (a page read
    without its block structure) had every word of them split, which took half of the four
    filters' CPU on such texts."""
    if len(kept) >= enough:
        return len(kept)
    count = 0
    for line, _ in kept:
        count += _sentences(page.iter_words(line), enough - count)
        if count >= enough:
            break
    return count


def _kept(page: PageText, rules: C4Quality, judged: list[tuple[str, str]] | None = None,
          up_to: int = 0) -> list[tuple[str, bytes]]:
    """The lines C4 keeps, each folded (:func:`.page.folded`) when a rule may need it (else
    ``b""``); each line and why it goes (``""``: kept) appended to ``judged`` when given. With
    ``up_to``, the first ``up_to`` lines kept only, when no other rule could read the rest
    (the page has neither "lorem ipsum" nor "{"): c4_quality's page rules need no more."""
    kept = []
    end_marks = tuple(rules.end_marks)
    text = page.text
    phrases = folded_phrases(tuple(rules.policy_phrases))
    # Most pages have none of these; a page that has one has each line looked at for it.
    long_words = (rules.max_word_length
                  and max(map(len, page.lines), default=0) > rules.max_word_length)
    citations = rules.remove_citations and "[" in text
    lorem = rules.lorem_ipsum and page.contains_folded(("lorem ipsum",))[0]
    if judged is not None or lorem or rules.curly_bracket and "{" in text:
        up_to = 0
    if up_to:
        # A few lines are read: each is folded and looked at for the phrases, which costs less
        # than looking for them in the whole page.
        javascript, policy = rules.javascript_lines, rules.policy_lines
    else:
        found = page.contains_folded(("javascript", *rules.policy_phrases))
        javascript = rules.javascript_lines and found[0]
        policy = rules.policy_lines and any(found[1:])
    fold = lorem or javascript or policy
    enough = rules.min_words_per_line
    lines = page.lines
    if judged is None and not long_words and not citations:
        # Only lines that end in a mark can be kept: picked in one pass in C.
        lines = list(compress(lines, map(methodcaller("endswith", end_marks), lines)))
    for line in lines:
        reason = ""
        if long_words and len(line) > rules.max_word_length \
                and max(map(len, line.split())) > rules.max_word_length:
            reason = "long_word"
        else:
            if citations and "[" in line:
                line = _CITATION.sub("", line).strip()
            if not line.endswith(end_marks) or (rules.drop_ellipsis_lines and line.endswith("...")):
                reason = "no_end_mark"
            elif (len(line.split(maxsplit=enough)) if line.isascii() or not unspaced(line)
                  else _unspaced_words(line)) < enough:
                reason = "few_words"
            else:
                lowered = folded(line) if fold else b""
                if javascript and b"javascript" in lowered:
                    reason = "javascript"
                elif policy and any(p in lowered for p in phrases):
                    reason = "policy"
                else:
                    kept.append((line, lowered))
                    if len(kept) == up_to:
                        break
        if judged is not None:
            judged.append((line, reason))
    return kept


def _unspaced_words(line: str) -> int:
    """Words of a line in a script written without spaces: each character is one."""
    return sum(is_word(unit) for word in line.split() for unit in split_chunk(word))


def _sentences(words: Iterable[str], enough: int = 0) -> int:
    """Sentences in one line's words: one, and one more at each word proper that follows a
    terminal mark; with ``enough``, no more words are read once there are that many."""
    count = 0
    ended = False
    for word in words:
        if not count:
            count = 1  # a line with words holds one sentence
        if word in _TERMINALS:
            ended = True
        elif ended and is_word(word):
            count += 1
            ended = False
        if count == enough:
            break
    return count
