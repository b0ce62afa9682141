"""The public API is what __all__ says, and stays that way on purpose."""

from __future__ import annotations

import pytest

import warcdeboil


def test_public_api_is_pinned() -> None:
    assert sorted(warcdeboil.__all__) == [
        "CleanPage", "Codec", "ConfigError", "Deboiler", "FitParams", "InputError",
        "LanguageModel", "Options", "OutputFormat", "PayloadError", "RandomAccessError",
        "RecordError", "RunSummary",
        "SiteKeyMode", "SiteProfile", "UrlRules", "WarcDeboilError", "WarcRecord", "WorkDirError",
        "__version__", "apply_profiles", "build_index", "clean", "fit_profiles", "iter_records",
        "read_record_at",
    ]
    for name in warcdeboil.__all__:
        assert hasattr(warcdeboil, name)


def test_every_error_has_one_root() -> None:
    errors = [getattr(warcdeboil, n) for n in warcdeboil.__all__ if n.endswith("Error")]
    assert all(issubclass(e, warcdeboil.WarcDeboilError) for e in errors)


def _jsonl(directory) -> list[dict]:
    import gzip
    import json

    from conftest import outputs_of

    return [json.loads(line) for path in outputs_of(directory)
            for line in gzip.decompress(path.read_bytes()).splitlines()]


def _pages(archives) -> list[tuple[str, str | bytes]]:
    """(URL, markup) of every HTML page of the archives, as the file pipeline reads them."""
    from warcdeboil.page.html import PageLimits, html_page

    pages = []
    for path in archives:
        for record in warcdeboil.iter_records(path):
            page = html_page(record, PageLimits())
            if page is not None:
                pages.append((page.url, page.markup))
    return pages


@pytest.mark.parametrize("mode", ["template", "content"])
def test_api_pages_carry_the_fields_of_the_jsonl(tmp_path, mode: str) -> None:
    from conftest import shared_file

    from warcdeboil.site.clean import Mode

    archive = shared_file("eval", "cleanportaleval.warc.gz")
    options = warcdeboil.Options(workers=1, format=warcdeboil.OutputFormat.MARKDOWN,
                                 mode=Mode(mode))
    warcdeboil.clean([archive], tmp_path / "out", options)
    lines = _jsonl(tmp_path / "out")
    pages = warcdeboil.Deboiler(mode=Mode(mode)).fit_transform(_pages([archive]))
    assert len(pages) == len(lines) == 71
    for name in ("headings", "lists", "description", "canonical_url", "language"):
        assert any(line[name] for line in lines), name  # the comparison below means something
    for page, line in zip(pages, lines, strict=True):
        for name in ("url", "site", "title", "text", "description", "canonical_url",
                     "language", "language_confidence", "html_lang", "breadcrumbs", "headings",
                     "lists", "markdown", "removed"):
            assert getattr(page, name) == line[name], (line["url"], name)


def test_api_pages_of_records_carry_every_field_of_the_jsonl_line(tmp_path) -> None:
    """Given records, a page is the line ``--format markdown --dedup off`` writes, field for
    field, the record's identity included."""
    from conftest import FIXTURES

    from warcdeboil.api import OMITTED_FIELDS
    from warcdeboil.dedup.verdicts import DedupMode
    from warcdeboil.site.clean import Mode

    archive = FIXTURES / "crawl" / "crawl-00000.warc.gz"
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / archive.name).symlink_to(archive)
    warcdeboil.clean([tmp_path / "in"], tmp_path / "out", warcdeboil.Options(
        workers=1, format=warcdeboil.OutputFormat.MARKDOWN, dedup=DedupMode.OFF))
    lines = _jsonl(tmp_path / "out")
    records = list(warcdeboil.iter_records(archive))
    pages = warcdeboil.Deboiler(mode=Mode.CONTENT).fit_transform(records, warc_file=archive)
    assert len(pages) == len(lines) == 12
    for page, line in zip(pages, lines, strict=True):
        assert not set(line) & set(OMITTED_FIELDS)
        assert {name: getattr(page, name) for name in line} == line


def test_api_page_fields_are_the_schema_but_what_a_whole_run_adds() -> None:
    """What a CleanPage carries, pinned to the JSONL schema: every field but those a stage of
    a whole run adds (each present in JSONL only with its option), and three of its own."""
    from dataclasses import fields

    from warcdeboil.api import OMITTED_FIELDS
    from warcdeboil.output.schema import FIELDS

    schema = {field.name: field.when for field in FIELDS}
    carried = {field.name for field in fields(warcdeboil.CleanPage)}
    assert carried - set(schema) == {"html", "removed_subtrees", "removed_slots"}
    assert set(schema) - carried == set(OMITTED_FIELDS)
    assert all(schema[name] != "always" for name in OMITTED_FIELDS)


def test_api_pages_given_as_pairs_have_no_record() -> None:
    html = "<html><head><title>Å</title></head><body><p>Story of the day</p></body></html>"
    (page,) = warcdeboil.Deboiler().fit_transform([("http://example.com/a", html)])
    record = ("record_id", "warc_file", "offset", "length", "date", "charset", "truncated")
    assert {name: getattr(page, name) for name in record} == dict.fromkeys(record)
    assert page.html_bytes_before == len(html.encode("utf-8"))


def test_api_marks_a_page_whose_record_was_cut_short(tmp_path) -> None:
    from conftest import incomplete_archives

    incomplete_archives(tmp_path)
    for name in ("clipped.warc.gz", "overshoot.warc", "marked.warc"):
        records = list(warcdeboil.iter_records(tmp_path / name))
        pages = warcdeboil.Deboiler().fit_transform(records, warc_file=tmp_path / name)
        assert [page.truncated for page in pages] == [False, False, True], name
        assert {page.warc_file for page in pages} == {name}


class _PathLike:
    """A path-like object that is neither str nor Path."""

    def __init__(self, path) -> None:
        self._path = str(path)

    def __fspath__(self) -> str:
        return self._path


@pytest.mark.parametrize("kind", [str, _PathLike], ids=["str", "pathlike"])
def test_the_public_functions_take_paths_as_str_and_pathlike(tmp_path, kind) -> None:
    from conftest import FIXTURES

    from warcdeboil.dedup import iter_url_groups
    from warcdeboil.dedup.verdicts import DedupMode
    from warcdeboil.run.local import discover_inputs

    crawl = FIXTURES / "crawl"
    options = warcdeboil.Options(workers=1, format=warcdeboil.OutputFormat.JSONL,
                                 dedup=DedupMode.OFF)
    inputs = [kind(path) for path, _ in discover_inputs([crawl])]
    tallies = warcdeboil.build_index(inputs, kind(tmp_path / "work"), options)
    assert [(t.cleaned, dict(t.problems)) for t in tallies] == [(12, {}), (13, {})]
    fitted = warcdeboil.fit_profiles(kind(tmp_path / "work"), kind(tmp_path / "profiles"),
                                     options)
    assert fitted.sites_fitted == 4
    pairs = [(kind(path), kind(rel)) for path, rel in discover_inputs([crawl])]
    tallies = warcdeboil.apply_profiles(pairs, kind(tmp_path / "out"),
                                        kind(tmp_path / "profiles"), options)
    assert [(t.cleaned, dict(t.problems)) for t in tallies] == [(12, {}), (13, {})]
    summary = warcdeboil.clean([kind(crawl)], kind(tmp_path / "again"),
                               warcdeboil.Options(workers=1, format=warcdeboil.OutputFormat.JSONL),
                               work_dir=kind(tmp_path / "run"),
                               profiles_dir=kind(tmp_path / "profiles"))
    assert summary.to_dict()["pages"] == 25
    assert len(list(iter_url_groups(kind(tmp_path / "run")))) == 25
    archive = kind(crawl / "crawl-00000.warc.gz")
    first = next(iter(warcdeboil.iter_records(archive)))
    assert warcdeboil.read_record_at(archive, first.offset, first.length).record_id == \
        first.record_id
    model = warcdeboil.LanguageModel.train(["the cat sat on the mat"] * 4)
    model.save(kind(tmp_path / "m.lm"))
    again = warcdeboil.LanguageModel.load(kind(tmp_path / "m.lm"))
    assert again.perplexity("the cat") == model.perplexity("the cat")
    rules = warcdeboil.UrlRules().learn([("http://a.example/x?s=1", 1), ("http://a.example/x", 1)])
    rules.save(kind(tmp_path / "rules.json"))
    assert warcdeboil.UrlRules.load(kind(tmp_path / "rules.json")).dumps() == rules.dumps()
