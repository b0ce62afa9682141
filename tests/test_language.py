"""Language identification: per-language sentences, the unsure answer, its confidence, the WET
header and JSONL fields, and accuracy floors on the pages of ../shared whose language is known."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import ModuleType

import pytest
from conftest import (
    ROOT,
    ArchiveBuilder,
    http_response,
    load_script,
    outputs_of,
    shared_file,
    warc_record,
)
from hypothesis import given
from hypothesis import strategies as st

from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.language import MIN_CONFIDENCE, Guess, identify, iso639_3
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records

# One sentence a language, written for these tests (a road closed for repairs).
SENTENCES = {
    "en": "The council said on Monday that the bridge will be closed for repairs until the end of "
          "the month.",
    "de": "Die Stadt hat am Montag mitgeteilt, dass die Brücke bis zum Ende des Monats wegen "
          "Reparaturen gesperrt wird.",
    "fr": "La mairie a annoncé lundi que le pont sera fermé pour des travaux jusqu'à la fin du "
          "mois.",
    "es": "El ayuntamiento anunció el lunes que el puente estará cerrado por obras hasta el final "
          "del mes.",
    "pt": "A prefeitura anunciou na segunda-feira que a ponte ficará fechada para obras até o fim "
          "do mês.",
    "it": "Il comune ha annunciato lunedì che il ponte sarà chiuso per lavori fino alla fine del "
          "mese.",
    "nl": "De gemeente heeft maandag gezegd dat de brug tot het einde van de maand voor "
          "reparaties gesloten is.",
    "sv": "Kommunen meddelade på måndagen att bron är stängd för reparationer till slutet av "
          "månaden och att det inte finns någon omväg.",
    "da": "Kommunen meddelte mandag, at broen er lukket på grund af reparationer indtil udgangen "
          "af måneden, og at der ikke er nogen omvej.",
    "no": "Kommunen sa mandag at brua er stengt på grunn av reparasjoner til slutten av måneden, "
          "og at det ikke er noen omkjøring.",
    "fi": "Kaupunki ilmoitti maanantaina, että silta on suljettu korjausten vuoksi kuun loppuun "
          "asti, eikä kiertotietä ole.",
    "pl": "Miasto ogłosiło w poniedziałek, że most będzie zamknięty z powodu remontu do końca "
          "miesiąca.",
    "cs": "Město v pondělí oznámilo, že most bude kvůli opravám uzavřen až do konce měsíce a že "
          "objížďka není.",
    "tr": "Belediye pazartesi günü yaptığı açıklamada köprünün ay sonuna kadar onarım için kapalı "
          "olacağını söyledi ve bu çok önemli.",
    "id": "Pemerintah kota mengumumkan pada hari Senin bahwa jembatan itu akan ditutup untuk "
          "perbaikan sampai akhir bulan.",
    "ro": "Primăria a anunțat luni că podul va fi închis pentru reparații până la sfârșitul lunii "
          "și că nu este o rută ocolitoare.",
    "hu": "A város hétfőn bejelentette, hogy a hidat a hónap végéig javítás miatt lezárják, és "
          "hogy nem lesz kerülőút.",
    "ru": "Городские власти в понедельник сообщили, что мост будет закрыт на ремонт до конца "
          "месяца.",
    "uk": "Міська влада в понеділок повідомила, що міст буде закритий на ремонт до кінця місяця, "
          "і що об'їзду немає.",
    "bg": "Общината съобщи в понеделник, че мостът ще бъде затворен за ремонт до края на месеца "
          "и че няма обходен път.",
    "el": "Ο δήμος ανακοίνωσε τη Δευτέρα ότι η γέφυρα θα παραμείνει κλειστή για επισκευές μέχρι "
          "το τέλος του μήνα.",
    "he": "העירייה הודיעה ביום שני כי הגשר ייסגר לתיקונים עד סוף החודש.",
    "ar": "أعلنت البلدية يوم الاثنين أن الجسر سيغلق للإصلاحات حتى نهاية الشهر.",
    "hi": "नगर निगम ने सोमवार को घोषणा की कि पुल महीने के अंत तक मरम्मत के लिए बंद रहेगा।",
    "th": "เทศบาลประกาศเมื่อวันจันทร์ว่าสะพานจะปิดซ่อมแซมจนถึงสิ้นเดือน",
    "zh": "市政府周一宣布，这座桥将因维修关闭到月底。",
    "ja": "市は月曜日、橋を月末まで修理のために閉鎖すると発表した。",
    "ko": "시는 월요일에 다리가 월말까지 수리를 위해 폐쇄된다고 발표했다.",
}


@pytest.mark.parametrize(("language", "text"), SENTENCES.items())
def test_one_sentence_is_enough(language: str, text: str) -> None:
    guess = identify(text)
    assert guess.language == language
    assert MIN_CONFIDENCE <= guess.confidence <= 1
    assert len(iso639_3(language)) == 3  # every answer has Common Crawl's code


def test_words_many_languages_share_do_not_decide() -> None:
    # "a" and "to" are Czech words too: an English text full of them stays English (the first
    # detector, which counted a shared word for each language, called this Czech).
    text = ("A Trip Without a Map\nAlmost all we do has a reason, a target in view.\nWe go to "
            "work, to a shop, to a game or to a show. We run to stay fit, or to get to a place.")
    assert identify(text).language == "en"


@pytest.mark.parametrize("text", [
    "ok",
    "更多?",  # two characters
    "Alex Wright\nAmy West\nArt Medlar\nBill Dunn\nCarl Malamud\nDavid Kim",  # names only
    "Rennserien: 0\nPunkte: 12\nPlatz: 63",  # too few words to tell German from its neighbours
    "2024-05-17 12:30:45 +0200 № 123456 — 7 × 8 = 56 €, ½ ², 42 %",
])
def test_unsure_below_the_threshold(text: str) -> None:
    guess = identify(text)
    assert guess.language == "" and guess.confidence < MIN_CONFIDENCE


def test_confidence_grows_with_evidence() -> None:
    short = identify("The bridge is closed for repairs.")
    long = identify(SENTENCES["en"] + " " + SENTENCES["en"])
    assert short.language == long.language == "en"
    assert short.confidence < 0.5 < 0.9 < long.confidence


@given(st.text(max_size=300))
def test_confidence_is_a_share(text: str) -> None:
    guess = identify(text)
    assert 0 <= guess.confidence <= 1
    assert (guess.language == "") == (guess.confidence < MIN_CONFIDENCE) or (
        guess == Guess("", 0.0))


def test_wet_records_name_the_language(tmp_path: Path, write_archive: ArchiveBuilder) -> None:
    pages = {
        "https://a.example/en": SENTENCES["en"], "https://b.example/de": SENTENCES["de"],
        "https://c.example/ru": SENTENCES["ru"], "https://d.example/short": "ok",
    }
    records = [warc_record("response", url, http_response(
        f"<html><body><p>{text}</p></body></html>".encode())) for url, text in pages.items()]
    source = write_archive(tmp_path / "in.warc.gz", records, Codec.GZIP)
    clean([source], tmp_path / "wet", Options(workers=1, format=OutputFormat.TEXT))
    clean([source], tmp_path / "jsonl", Options(workers=1, format=OutputFormat.JSONL))
    [wet] = outputs_of(tmp_path / "wet")
    languages = {r.target_uri: r.get("WARC-Identified-Content-Language")
                 for r in iter_records(wet) if r.rec_type == "conversion"}
    assert languages == {"https://a.example/en": "eng", "https://b.example/de": "deu",
                         "https://c.example/ru": "rus", "https://d.example/short": None}
    [jsonl] = outputs_of(tmp_path / "jsonl")
    with gzip.open(jsonl, "rt", encoding="utf-8") as fh:
        objs = {obj["url"]: obj for obj in map(json.loads, fh)}
    assert objs["https://b.example/de"]["language"] == "de"
    assert objs["https://b.example/de"]["language_confidence"] >= MIN_CONFIDENCE
    assert objs["https://d.example/short"]["language"] is None
    assert objs["https://d.example/short"]["language_confidence"] == 0.0


def _benchmark() -> ModuleType:
    return load_script("language_benchmark", ROOT / "benchmarks" / "language.py")


def test_accuracy_on_the_gold_texts_of_shared() -> None:
    """The human-cut texts of the five evaluation sets, 2,985 pages of known language (20 not
    English). Measured 2026-11-24: 0.996, no wrong answer, 12 unsure (short titles), all 20 not
    in English right; floors a little below."""
    shared_file("eval", "scrapinghub.gold.jsonl.gz")
    scores = _benchmark().score_gold(ROOT.parent / "shared")
    assert scores["all"].pages >= 2900
    assert scores["all"].accuracy >= 0.99
    assert len(scores["all"].wrong) <= 3
    assert scores["not en"].pages == 20 and scores["not en"].accuracy >= 0.95


def test_accuracy_on_multilingual_output(tmp_path: Path) -> None:
    """The ``language`` field as written for scrapinghub (20 pages in seven other languages than
    English) and the Common Crawl excerpt (Chinese, Russian, Dutch, German). Measured 2026-11-24:
    scrapinghub 180 of 181 (a Brazilian race calendar unsure), the excerpt 12 of 14 (unsure: a
    page of three characters, a German one of five words), no wrong answer."""
    bench = _benchmark()
    clean([shared_file("eval", "scrapinghub.warc.gz"),
           shared_file("warcs", "chatnoir-eu__chatnoir-resiliparse__warcfile.warc.gz")],
          tmp_path, Options(workers=1, format=OutputFormat.JSONL))
    scores = bench.score(bench.output_pages(tmp_path))
    assert scores["scrapinghub"].accuracy >= 0.98
    assert scores["chatnoir-eu__chatnoir-resiliparse__warcfile"].right >= 10
    assert not scores["all"].wrong
