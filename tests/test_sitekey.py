"""Site keys and URL order."""

from __future__ import annotations

import pytest

from warcdeboil.site.sitekey import SiteKeyer, SiteKeyMode, url_sort_key


@pytest.mark.parametrize(
    ("url", "mode", "site"),
    [
        ("http://www.Example.com/a", SiteKeyMode.HOST, "example.com"),
        ("https://blog.example.com:8080/x", SiteKeyMode.HOST, "blog.example.com"),
        ("https://blog.example.com/x", SiteKeyMode.DOMAIN, "example.com"),
        ("http://news.bbc.co.uk/x", SiteKeyMode.DOMAIN, "bbc.co.uk"),
        ("http://user.github.io/x", SiteKeyMode.DOMAIN, "user.github.io"),
        ("not a url", SiteKeyMode.HOST, ""),
        ("", SiteKeyMode.DOMAIN, ""),
    ],
)
def test_site_key(url: str, mode: SiteKeyMode, site: str) -> None:
    assert SiteKeyer(mode)(url) == site


def test_http_and_https_copies_sort_together() -> None:
    urls = ["https://a.com/b", "http://a.com/a", "http://www.a.com/c", "https://a.com/a?x"]
    assert sorted(urls, key=url_sort_key) == [
        "http://a.com/a", "https://a.com/a?x", "https://a.com/b", "http://www.a.com/c",
    ]
