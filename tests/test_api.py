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
