"""The ARPA text format of n-gram models (SRILM, KenLM): read as a ``LanguageModel``, write one.

Words are matched to text through ``units.token_id``, so an ARPA model scores our text well
only if it was trained on text cut into the same units (lower case, digits as 0, punctuation
apart, one character a unit in Chinese, Japanese and Thai). ``<s>`` and ``</s>`` are the line
boundary; a model without ``<unk>`` gets log10 p = -100 for it, as KenLM substitutes.
"""

from __future__ import annotations

import gzip
import os
import re
from typing import IO, TYPE_CHECKING, NamedTuple

import numpy as np

from warcdeboil.errors import InputError

from .kneserney import Level
from .units import BOUNDARY, UNK, extend_keys, token_id

if TYPE_CHECKING:
    from .model import LanguageModel

__all__ = ["read_arpa", "write_arpa"]

MISSING_UNK_LOGP = -100.0
_SECTION = re.compile(r"\\(\d+)-grams:")


def _open(path: str | os.PathLike[str]) -> IO[str]:
    with open(path, "rb") as fh:
        gzipped = fh.read(2) == b"\x1f\x8b"
    if gzipped:
        return gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape")
    return open(path, encoding="utf-8", errors="surrogateescape")


class ArpaModel(NamedTuple):
    """An ARPA file's model as :class:`~.model.LanguageModel` takes it."""

    levels: list[Level]
    vocabulary: list[str]
    info: dict[str, object]


def read_arpa(path: str | os.PathLike[str]) -> ArpaModel:
    """Read an ARPA file (``LanguageModel.load`` makes a model of it). N-grams holding ``<s>``
    after their first word or ``</s>`` before their last cannot occur in text and are skipped;
    one whose context is missing is an error (the backoff form needs it)."""
    name = os.fspath(path)
    sections: dict[int, list[tuple[list[str], float, float]]] = {}
    order = 0
    seen_data = False
    with _open(path) as fh:
        for number, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            if line == "\\data\\":
                seen_data = True
                continue
            if line == "\\end\\":
                break
            section = _SECTION.fullmatch(line)
            if section:
                order = int(section.group(1))
                sections[order] = []
                continue
            if not order:
                continue  # the \data\ counts: the sections say the same
            fields = line.split()
            try:
                logp = float(fields[0])
                words = fields[1:1 + order]
                bow = float(fields[1 + order]) if len(fields) > 1 + order else 0.0
            except (ValueError, IndexError):
                raise InputError(f"{name}:{number}: not an ARPA n-gram line") from None
            if len(words) != order:
                raise InputError(f"{name}:{number}: expected {order} words")
            sections[order].append((words, logp, bow))
    if not seen_data or 1 not in sections:
        raise InputError(f"{name}: not an ARPA file (no \\data\\ or no 1-grams)")
    levels: list[Level] = []
    vocabulary = _unigrams(sections[1], levels)
    for k in range(2, max(sections) + 1):
        levels.append(_order(name, k, sections.get(k, []), levels))
    return ArpaModel(levels, vocabulary, {"order": len(levels), "arpa": name})


def _word_id(word: str) -> int:
    return BOUNDARY if word in ("<s>", "</s>") else token_id(word)


def _unigrams(entries: list[tuple[list[str], float, float]], levels: list[Level]) -> list[str]:
    by_id: dict[int, list] = {}
    for (word,), logp, bow in entries:
        key = _word_id(word)
        entry = by_id.setdefault(key, ["</s>" if key == BOUNDARY else word, 0.0, 0.0])
        if word == "<s>":
            entry[2] = bow  # <s> is only ever a context: its weight, </s> its probability
        else:
            entry[1], entry[2] = logp, (entry[2] if word == "</s>" else bow)
    if UNK not in by_id:
        by_id[UNK] = ["<unk>", MISSING_UNK_LOGP, 0.0]
    keys = np.array(sorted(by_id), np.uint64)
    rows = [by_id[int(key)] for key in keys.tolist()]
    levels.append(Level(keys, np.array([r[1] for r in rows], np.float32),
                        np.array([r[2] for r in rows], np.float32),
                        np.full(len(keys), -1, np.int32), np.arange(len(keys), dtype=np.int32)))
    return [str(r[0]) for r in rows]


def _order(name: str, k: int, entries: list[tuple[list[str], float, float]],
           levels: list[Level]) -> Level:
    usable = [(words, logp, bow) for words, logp, bow in entries
              if "<s>" not in words[1:] and "</s>" not in words[:-1]]
    ids = np.array([[_word_id(w) for w in words] for words, _, _ in usable],
                   np.uint64).reshape(len(usable), k)
    below, first = levels[-1], levels[0]
    context = ids[:, 0]
    for j in range(1, k - 1):
        context = extend_keys(context, ids[:, j])
    context_rows, found = below.rows(context)
    word_rows, word_found = first.rows(ids[:, -1])
    missing = ~(found & word_found)
    if missing.any():
        words = usable[int(np.flatnonzero(missing)[0])][0]
        raise InputError(f"{name}: the {k}-gram '{' '.join(words)}' has no context or word "
                         f"among the {k - 1}-grams")
    keys = extend_keys(context, ids[:, -1])
    order = np.argsort(keys)
    logp = np.array([e[1] for e in usable], np.float32)[order]
    bow = np.array([e[2] for e in usable], np.float32)[order]
    return Level(keys[order], logp, bow, context_rows[order].astype(np.int32),
                 word_rows[order].astype(np.int32))


def write_arpa(model: LanguageModel, path: str | os.PathLike[str]) -> None:
    """Write ``model`` as an ARPA file (probabilities and weights exactly as held)."""
    vocabulary = list(model.vocabulary)
    boundary_row = vocabulary.index("</s>")
    rows_of = [np.arange(len(model.levels[0]))[:, None]]
    for level in model.levels[1:]:
        rows_of.append(np.hstack([rows_of[-1][level.contexts], level.words[:, None]]))
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as out:
        out.write("\\data\\\n")
        for k, level in enumerate(model.levels, 1):
            out.write(f"ngram {k}={len(level) + (1 if k == 1 else 0)}\n")
        last = model.order
        for k, (level, rows) in enumerate(zip(model.levels, rows_of, strict=True), 1):
            out.write(f"\n\\{k}-grams:\n")
            if k == 1:
                bow = float(level.bow[boundary_row])
                out.write(f"-99\t<s>\t{bow!r}\n" if last > 1 else "-99\t<s>\n")
            columns = (level.logp.tolist(), level.bow.tolist(), rows.tolist())
            for logp, bow, grams in zip(*columns, strict=True):
                words = [vocabulary[r] for r in grams]
                if k > 1 and grams[0] == boundary_row:
                    words[0] = "<s>"
                text = " ".join(words)
                if k < last and not (k == 1 and grams[0] == boundary_row):
                    out.write(f"{logp!r}\t{text}\t{bow!r}\n")
                else:
                    out.write(f"{logp!r}\t{text}\n")
        out.write("\n\\end\\\n")
