"""Language codes: ISO 639-1 and ISO 639-3, and the labels of fastText identification models.

JSONL names a language by its ISO 639-1 code where it has one, else by its ISO 639-3 code; WET
names it by ISO 639-3, as Common Crawl does. :func:`from_label` reads a model's label in either
form (lid.176's ``__label__de``, GlotLID's ``__label__deu_Latn``) and gives both.

>>> from_label("__label__deu_Latn")
('de', 'deu')
>>> from_label("__label__als")  # lid.176's "als" is Wikipedia's Alemannic, ISO 639-3 "gsw"
('gsw', 'gsw')
>>> from_label("__label__arb_Arab")  # Standard Arabic: the macrolanguage's ISO 639-1 code
('ar', 'arb')
"""

from __future__ import annotations

__all__ = ["MACROLANGUAGE", "from_label", "iso639_1", "iso639_3"]


def _pairs(text: str) -> dict[str, str]:
    """``"a:b c:d"`` -> ``{"a": "b", "c": "d"}``."""
    return {key: value for key, value in (item.split(":") for item in text.split())}


# ISO 639-1 -> ISO 639-3 (its macrolanguage's code where the ISO 639-1 code names one), all 183
# codes of the standard, and the two deprecated ones lid.176 still gives ("bh", "sh").
_TO_639_3 = _pairs(
    "aa:aar ab:abk ae:ave af:afr ak:aka am:amh an:arg ar:ara as:asm av:ava ay:aym az:aze "
    "ba:bak be:bel bg:bul bi:bis bm:bam bn:ben bo:bod br:bre bs:bos ca:cat ce:che ch:cha "
    "co:cos cr:cre cs:ces cu:chu cv:chv cy:cym da:dan de:deu dv:div dz:dzo ee:ewe el:ell "
    "en:eng eo:epo es:spa et:est eu:eus fa:fas ff:ful fi:fin fj:fij fo:fao fr:fra fy:fry "
    "ga:gle gd:gla gl:glg gn:grn gu:guj gv:glv ha:hau he:heb hi:hin ho:hmo hr:hrv ht:hat "
    "hu:hun hy:hye hz:her ia:ina id:ind ie:ile ig:ibo ii:iii ik:ipk io:ido is:isl it:ita "
    "iu:iku ja:jpn jv:jav ka:kat kg:kon ki:kik kj:kua kk:kaz kl:kal km:khm kn:kan ko:kor "
    "kr:kau ks:kas ku:kur kv:kom kw:cor ky:kir la:lat lb:ltz lg:lug li:lim ln:lin lo:lao "
    "lt:lit lu:lub lv:lav mg:mlg mh:mah mi:mri mk:mkd ml:mal mn:mon mr:mar ms:msa mt:mlt "
    "my:mya na:nau nb:nob nd:nde ne:nep ng:ndo nl:nld nn:nno no:nor nr:nbl nv:nav ny:nya "
    "oc:oci oj:oji om:orm or:ori os:oss pa:pan pi:pli pl:pol ps:pus pt:por qu:que rm:roh "
    "rn:run ro:ron ru:rus rw:kin sa:san sc:srd sd:snd se:sme sg:sag si:sin sk:slk sl:slv "
    "sm:smo sn:sna so:som sq:sqi sr:srp ss:ssw st:sot su:sun sv:swe sw:swa ta:tam te:tel "
    "tg:tgk th:tha ti:tir tk:tuk tl:tgl tn:tsn to:ton tr:tur ts:tso tt:tat tw:twi ty:tah "
    "ug:uig uk:ukr ur:urd uz:uzb ve:ven vi:vie vo:vol wa:wln wo:wol xh:xho yi:yid yo:yor "
    "za:zha zh:zho zu:zul bh:bih sh:hbs"
)
_TO_639_1 = {three: one for one, three in _TO_639_3.items()}

# The individual language that most text of a macrolanguage is in -> the macrolanguage: GlotLID
# and UDHR name the first, lid.176 and ISO 639-1 the second ("arb" Standard Arabic is "ar").
MACROLANGUAGE = _pairs(
    "arb:ara cmn:zho pes:fas prs:fas swh:swa zsm:msa zlm:msa ekk:est lvs:lav uzn:uzb azj:aze "
    "khk:mon plt:mlg npi:nep ydd:yid gaz:orm ayr:aym quy:que quz:que als:sqi ory:ori pbu:pus "
    "nob:nor nno:nor gug:grn knc:kau ckb:kur kmr:kur"
)

# lid.176 labels that are not ISO codes of the language they stand for (Wikipedia's editions).
_LABEL_FIXES = {"als": "gsw", "eml": "egl"}


def iso639_3(code: str) -> str:
    """The ISO 639-3 code of a code :func:`from_label` gives (``""`` for ``""``).

    >>> iso639_3("de"), iso639_3("gsw"), iso639_3("")
    ('deu', 'gsw', '')
    """
    if len(code) == 2:
        return _TO_639_3.get(code, "")
    return code


def iso639_1(code3: str) -> str:
    """An ISO 639-3 code's ISO 639-1 code (its macrolanguage's), else the code itself."""
    return _TO_639_1.get(code3) or _TO_639_1.get(MACROLANGUAGE.get(code3, ""), code3)


def from_label(label: str) -> tuple[str, str]:
    """A fastText label's language as (ISO 639-1 or else 639-3 code, ISO 639-3 code); ("", "")
    for a label that names no language (GlotLID's ``und``, ``zxx``)."""
    name, script = (label.removeprefix("__label__").split("-", 1)[0].lower().split("_", 1)
                    + [""])[:2]
    if not script:  # lid.176's labels (GlotLID's name a script too, and are ISO 639-3)
        name = _LABEL_FIXES.get(name, name)
    if not name.isalpha() or name in ("und", "zxx", "mis", "mul"):
        return "", ""
    if len(name) == 2:
        return name, _TO_639_3.get(name, name)
    return iso639_1(name), name
