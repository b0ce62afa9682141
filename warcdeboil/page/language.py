"""Offline language identification, small and fast enough to run on every page.

Two signals: the writing system (a script used by one language, or a family such as Cyrillic or
Han) and, for the Latin and Cyrillic scripts shared by many languages, the commonest function
words of each language found among the text's first words, each weighted by how few languages
share it; when the words leave it unsure, letters (ß, ł, ы…) and word endings (-ung, -ção…)
too. :func:`identify` answers with an ISO 639-1 code and a confidence in 0..1; below
:data:`MIN_CONFIDENCE` the code is ``""`` (unsure). It is meant for routing a corpus by language,
not for telling close languages apart (Danish/Norwegian, Malay/Indonesian). Its accuracy on
../shared is measured by ``benchmarks/language.py``.

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

import re
from collections import Counter
from typing import NamedTuple

__all__ = ["MIN_CONFIDENCE", "Guess", "detect", "identify", "iso639_3", "primary_subtag"]

# Function words: the commonest words of each language (articles, prepositions, pronouns,
# auxiliaries), written out from general knowledge of each language. A word several languages
# share counts for each of them, divided by how many share it ("a" is English, Czech, Hungarian,
# Portuguese, Spanish, Italian and Romanian: a seventh each), so only words a language has to
# itself separate it from its neighbours.
_FUNCTION_WORDS: dict[str, str] = {
    "en": "the of and to a in is that for it with as was on are be this by not or from have at "
          "you i his he they we but an had which were has been their will would there can all "
          "one its more if about who what so when no also do our your my she her them than how "
          "just like up out new get these into only some other after time said first",
    "de": "der die und das ist nicht mit den von sich des auf für dem ein eine auch wird sind im "
          "in zu es ich er sie wir aber oder wie bei nach noch einer einen aus wenn nur werden hat "
          "kann über dass war vor zum zur durch um diese dieser mehr sein wurde",
    "fr": "le la les et des est une dans pour que qui pas sur au aux avec du sont ce cette un il "
          "elle nous vous ne se plus par mais ont été sa son ses leur comme tout fait être où en "
          "je on lui aussi même",
    "es": "el los las del que por una con para como está más pero sus este son también en un se "
          "no lo al su ya muy esta hay sin sobre entre cuando ha fue porque todo ser y es desde "
          "de la le yo hasta donde",
    "pt": "os que não uma com para por mais como foi dos das ao são pelo pela também seu um em do "
          "da no na se é mas ou sua nos já muito quando está isso ele ela de o e as você pode "
          "esta este ser até ainda depois tem há entre seus suas às num numa foram sobre",
    "it": "il di che della per non una sono con gli del alla anche nel più questo delle è un si "
          "la le da dei ma come ha ci lo nella al su sia tra essere stato e in questa ed perché",
    "nl": "de het een van en is dat niet op te zijn met voor ook als bij aan wordt naar die er "
          "maar om ze hij worden nog wel dan zo uit door kan heeft al dit wat u je wij",
    "sv": "och att det som är för på med inte till av den har om ett var jag men från en de vi "
          "så kan ska sig när eller han hon efter också vid mycket bara",
    "da": "og at det er som på med til af den for ikke har en et de var fra men kan jeg vi der "
          "sig så han hun også efter når være blev meget eller hvad nogen",
    "no": "og at det er som på med til av den for ikke har en et de var fra men kan ble jeg vi "
          "der seg så han hun også etter når være mye eller hva noen",
    "fi": "ja on ei että se oli mutta kun myös tai ovat hän joka sen ole kuin vain ne niin jos "
          "tämä mitä nyt sitten voi olla ollut kanssa",
    "pl": "i w nie na się z że do jest to jak po co od przez dla ale tak są jego o jej już może "
          "tylko oraz czy go był być także które który",
    "cs": "a v se na je že to s z do jako by ale pro jsou není tak také jeho od jsem při za po "
          "jak už byl být které který jen nebo aby",
    "tr": "ve bir bu da de için ile çok olarak daha gibi ne olan var ama kadar sonra en her ki "
          "değil olduğu ya o şey",
    "id": "dan yang di ini itu dengan untuk dari tidak dalam akan pada juga ke ada adalah oleh "
          "karena saya kami kita mereka sudah bisa atau",
    "ro": "și de în la cu nu pe că este din o mai care se sunt pentru fost sau un ce a fi lui ale",
    "hu": "a az és hogy nem is egy meg de van már csak volt ez mint ki még el azt ha vagy lesz "
          "kell",
    "ru": "и в не на что с по как это он к но из у за то от для так же она они мы вы был была "
          "было бы только уже или его её все до который которые также если при после будет может "
          "чтобы более когда где очень даже этого года",
    "uk": "і в не на що з як це та до за від по але для він його є ще вона вони ми ви був була "
          "було би тільки вже або також який яка які буде може коли де дуже щоб року після через у",
    "bg": "и на да в не се за от е че с по са като но това които ще който която бъде има беше "
          "много до към след през може когато година години също",
}
_LATIN = ("en", "de", "fr", "es", "pt", "it", "nl", "sv", "da", "no", "fi", "pl", "cs", "tr",
          "id", "ro", "hu")
_CYRILLIC = ("ru", "uk", "bg")


# Letters one language or a few use, and English none: evidence where a text is too short for
# many function words. An occurrence weighs half a function word.
_MARKS: dict[str, str] = {
    "ß": "de", "ä": "de sv fi", "ö": "de sv fi hu tr", "ü": "de hu tr", "ñ": "es", "ã": "pt",
    "õ": "pt", "ç": "pt fr tr", "ê": "pt fr", "â": "pt fr ro", "ł": "pl", "ś": "pl", "ż": "pl",
    "ź": "pl", "ą": "pl", "ę": "pl", "ń": "pl", "ř": "cs", "ů": "cs", "ě": "cs", "č": "cs",
    "š": "cs", "ž": "cs", "ő": "hu", "ű": "hu", "ș": "ro", "ț": "ro", "ă": "ro", "ğ": "tr",
    "ı": "tr", "ş": "tr ro", "å": "sv da no", "ø": "da no", "æ": "da no", "è": "fr it",
    "à": "fr it pt", "ù": "fr it", "ò": "it", "ì": "it",
    "ы": "ru", "э": "ru", "ё": "ru", "і": "uk", "ї": "uk", "є": "uk", "ґ": "uk", "ъ": "bg",
}
MARK_WEIGHT = 0.5
# Word endings typical of a language ("Gesamtwertung", "testing"): evidence for the same short
# texts, weaker than a letter, as every language has some words ending so.
_ENDINGS: dict[str, str] = {
    "ing": "en", "ly": "en", "tion": "en fr", "ness": "en", "ould": "en", "ight": "en",
    "ung": "de", "keit": "de", "heit": "de", "lich": "de", "isch": "de", "tz": "de", "chen": "de",
    "eux": "fr", "aux": "fr", "ment": "fr en", "ée": "fr", "ait": "fr",
    "ción": "es", "dad": "es", "idad": "es", "mente": "es pt it",
    "ção": "pt", "ções": "pt", "inho": "pt", "inha": "pt",
    "zione": "it", "ità": "it", "etto": "it",
    "ijk": "nl", "heid": "nl", "tje": "nl",
    "het": "sv", "ning": "sv da no", "liga": "sv", "hed": "da", "lig": "da no",
    "ssa": "fi", "ssä": "fi", "llä": "fi", "stä": "fi", "inen": "fi",
    "ość": "pl", "ych": "pl", "ego": "pl", "ów": "pl",
    "ých": "cs", "ého": "cs", "ní": "cs",
    "ler": "tr", "lar": "tr", "leri": "tr", "ları": "tr",
    "kan": "id", "nya": "id",
    "ului": "ro", "ilor": "ro", "ție": "ro",
    "ság": "hu", "ség": "hu", "nak": "hu", "nek": "hu",
    "ого": "ru uk", "ами": "ru uk", "ыми": "ru", "ость": "ru", "ться": "ru uk",
    "ння": "uk", "ість": "uk",
    "ът": "bg", "ата": "bg", "ите": "bg", "ето": "bg",
}
ENDING_WEIGHT = 0.25
# A guess from the words at least this sure does not look at letters; from words and letters,
# at endings.
SURE_WITHOUT_LETTERS = 0.8
SURE_WITHOUT_ENDINGS = 0.5

Table = dict[str, tuple[tuple[str, float], ...]]


class _Profile(NamedTuple):
    """What tells apart the languages of one script: words, letters, endings."""

    words: Table
    marks: Table
    mark_pattern: re.Pattern[str]
    endings: Table


def _table(holders: dict[str, str], languages: tuple[str, ...], weight: float) -> Table:
    """Key -> (language, weight / languages sharing it), for the ``languages`` it lists."""
    table = {}
    for key, names in holders.items():
        langs = [lang for lang in names.split() if lang in languages]
        if langs:
            table[key] = tuple((lang, weight / len(langs)) for lang in langs)
    return table


def _profile(languages: tuple[str, ...]) -> _Profile:
    holders: dict[str, list[str]] = {}
    for lang in languages:
        for word in dict.fromkeys(_FUNCTION_WORDS[lang].split()):
            holders.setdefault(word, []).append(lang)
    marks = _table(_MARKS, languages, MARK_WEIGHT)
    return _Profile(
        _table({word: " ".join(langs) for word, langs in holders.items()}, languages, 1.0),
        marks, re.compile("[" + "".join(marks) + "]"),
        _table(_ENDINGS, languages, ENDING_WEIGHT),
    )


_LATIN_PROFILE = _profile(_LATIN)
_CYRILLIC_PROFILE = _profile(_CYRILLIC)

# Scripts by code-point range, with the language they imply ("" when many languages share it).
_SCRIPTS: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x005A, "latin"), (0x0061, 0x007A, "latin"), (0x00AA, 0x00AA, "latin"),
    (0x00B5, 0x00B5, "latin"), (0x00BA, 0x00BA, "latin"), (0x00C0, 0x00D6, "latin"),
    (0x00D8, 0x00F6, "latin"), (0x00F8, 0x024F, "latin"), (0x0370, 0x03FF, "el"),
    (0x0400, 0x04FF, "cyrillic"),
    (0x0530, 0x058F, "hy"), (0x0590, 0x05FF, "he"), (0x0600, 0x06FF, "arabic"),
    (0x0900, 0x097F, "hi"), (0x0980, 0x09FF, "bn"), (0x0B80, 0x0BFF, "ta"),
    (0x0E00, 0x0E7F, "th"), (0x10A0, 0x10FF, "ka"), (0x1100, 0x11FF, "ko"),
    (0x3040, 0x30FF, "ja"), (0x4E00, 0x9FFF, "han"), (0xAC00, 0xD7AF, "ko"),
)
_WORD = re.compile(r"\w+")
SAMPLE_CHARS = 600  # of the text's start: a few sentences are enough to decide, at bounded cost
MIN_LETTERS = 20
MIN_SYLLABLES = 8  # the same for Chinese, Japanese and Korean, a syllable or a word a character
# Below this confidence the answer is "" (unsure). This and SURE_EVIDENCE were set on the pages
# of known language of ../shared (benchmarks/language.py, not held out): with them no page there
# gets a wrong language, and fewer than 1 % are left unsure (short titles, lists of names, code).
MIN_CONFIDENCE = 0.25
# Weighted function words (and letters) that make a Latin or Cyrillic guess fully sure (fewer
# scale it down): a plain sentence of ten words holds about this many.
SURE_EVIDENCE = 3.0
# Letters of one script that make a guess by script fully sure (fewer scale it down); fewer
# for Chinese, Japanese and Korean, whose every character is a syllable or a word.
SURE_LETTERS = 40
SURE_SYLLABLES = 12

# One character class per script, matched a run at a time, so that counting runs in the regex
# engine, not per character in Python: a script's characters are the summed lengths of its runs
# (a match per character made counting a text's Latin letters cost 27 µs, a match per run 11).
_SCRIPT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (script, re.compile("[" + "".join(
        f"{chr(low)}-{chr(high)}" for low, high, name in _SCRIPTS if name == script
    ) + "]+"))
    for script in dict.fromkeys(name for _, _, name in _SCRIPTS)
)
_LATIN_PATTERN = dict(_SCRIPT_PATTERNS)["latin"]  # every character of its ranges is a letter

# ISO 639-1 -> ISO 639-3, the codes Common Crawl writes in WET's
# WARC-Identified-Content-Language ("no" is the macrolanguage Norwegian, "nor", as there).
_ISO_639_3: dict[str, str] = {
    "en": "eng", "de": "deu", "fr": "fra", "es": "spa", "pt": "por", "it": "ita", "nl": "nld",
    "sv": "swe", "da": "dan", "no": "nor", "fi": "fin", "pl": "pol", "cs": "ces", "tr": "tur",
    "id": "ind", "ro": "ron", "hu": "hun", "ru": "rus", "uk": "ukr", "bg": "bul", "el": "ell",
    "hy": "hye", "he": "heb", "ar": "ara", "fa": "fas", "hi": "hin", "bn": "ben", "ta": "tam",
    "th": "tha", "ka": "kat", "ko": "kor", "ja": "jpn", "zh": "zho",
}


class Guess(NamedTuple):
    """A text's language (ISO 639-1, ``""`` when unsure) and how sure of it, 0..1."""

    language: str
    confidence: float


_UNSURE = Guess("", 0.0)
_SUBTAG_END = re.compile(r"[-_]")  # what ends a BCP 47 tag's primary subtag (or a POSIX locale's)


def detect(text: str) -> str:
    """The text's language as an ISO 639-1 code, or ``""`` when it cannot tell."""
    return identify(text).language


def identify(text: str) -> Guess:
    """The text's language and the confidence in it; the language is ``""`` below
    :data:`MIN_CONFIDENCE` (the confidence is then still given)."""
    language, confidence = _guess(text[:SAMPLE_CHARS])
    confidence = round(confidence, 3)
    return Guess(language if confidence >= MIN_CONFIDENCE else "", confidence)


def _guess(sample: str) -> tuple[str, float]:
    # The Latin letters out first: in a Latin text, only spaces, digits and punctuation are left
    # for the per-character test (the whole of a dragnet page's detect: 61 -> 31 µs).
    rest = _LATIN_PATTERN.sub("", sample)
    latin = len(sample) - len(rest)
    letters = latin + sum(map(str.isalpha, rest))
    if letters < MIN_SYLLABLES:
        return _UNSURE
    if 2 * latin > letters:  # most letters are Latin: no other script can have more
        if letters < MIN_LETTERS:
            return _UNSURE
        return _by_words(sample, _LATIN_PROFILE)
    counts = {script: sum(map(len, pattern.findall(sample)))
              for script, pattern in _SCRIPT_PATTERNS}
    counts[""] = letters - sum(counts.values())
    script = max(counts, key=counts.__getitem__)
    if script in ("han", "ja", "ko"):
        # Kana mark Japanese even in a text mostly written in kanji; hangul, Korean.
        own, sure = counts[script], SURE_SYLLABLES
        if script != "ko":
            script = "ja" if counts["ja"] * 10 >= counts["han"] else "zh"
            own = counts["han"] + (counts["ja"] if script == "ja" else 0)
    elif letters < MIN_LETTERS or not script:
        return _UNSURE
    elif script == "latin":
        return _by_words(sample, _LATIN_PROFILE)
    elif script == "cyrillic":
        return _by_words(sample, _CYRILLIC_PROFILE)
    else:
        own, sure = counts[script], SURE_LETTERS
        if script == "arabic":
            persian = sum(sample.count(ch) for ch in "پچژگی")
            script = "fa" if persian * 50 >= own else "ar"
    # By script: as sure as the script's share of the letters (vowel signs, which are not
    # letters, count in a script's runs: hence the cap), less for a short text.
    return script, min(1.0, own / letters) * min(1.0, own / sure)


def _by_words(sample: str, profile: _Profile) -> tuple[str, float]:
    """The language whose function words (and, when unsure, letters and endings) weigh most,
    sure as far as it beats the runner-up (1 - runner-up / winner) and as far as there is
    evidence (winner / SURE_EVIDENCE, at most 1)."""
    lower = sample.lower()
    words = _WORD.findall(lower)
    scores: dict[str, float] = {}
    get = scores.get
    for found in filter(None, map(profile.words.get, words)):  # the function words, in C
        for lang, weight in found:
            scores[lang] = get(lang, 0.0) + weight
    best, confidence = _best(scores)
    # Letters, then endings, only where what came before leaves the guess unsure: most pages
    # skip both (the endings of every word cost more than the rest of the guess).
    if confidence < SURE_WITHOUT_LETTERS:
        _add(scores, Counter(profile.mark_pattern.findall(lower)), profile.marks)
        best, confidence = _best(scores)
    if confidence < SURE_WITHOUT_ENDINGS:
        endings = [word[-n:] for word in words for n in (2, 3, 4, 5) if len(word) > n + 1]
        _add(scores, Counter(filter(profile.endings.__contains__, endings)), profile.endings)
        best, confidence = _best(scores)
    return best, confidence


def _best(scores: dict[str, float]) -> tuple[str, float]:
    if not scores:
        return _UNSURE
    top = sorted(scores.values(), reverse=True)
    best_score, runner_up = top[0], top[1] if len(top) > 1 else 0.0
    best = max(scores, key=scores.__getitem__)
    return best, (1 - runner_up / best_score) * min(1.0, best_score / SURE_EVIDENCE)


def _add(scores: dict[str, float], counts: Counter[str], table: Table) -> None:
    for key, times in counts.items():
        for lang, weight in table[key]:
            scores[lang] = scores.get(lang, 0.0) + weight * times


def iso639_3(code: str) -> str:
    """The ISO 639-3 code of an ISO 639-1 code :func:`detect` gives (``""`` for others).

    >>> iso639_3("de")
    'deu'
    """
    return _ISO_639_3.get(code, "")


def primary_subtag(tag: str) -> str:
    """The language of a BCP 47 tag such as ``<html lang>``'s, lower-case (``"en-GB"`` → ``"en"``).

    >>> primary_subtag(" pt_BR ")
    'pt'
    """
    head = _SUBTAG_END.split(tag.strip(), maxsplit=1)[0].lower()
    return head if 2 <= len(head) <= 3 and head.isalpha() else ""
