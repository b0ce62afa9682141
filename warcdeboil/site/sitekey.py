"""Which site a URL belongs to, and the key that orders a site's pages.

``host`` (the default) groups by host name without a leading ``www.``; ``domain`` groups by
registered domain (``news.bbc.co.uk`` → ``bbc.co.uk``) using the Public Suffix List shipped in the
``publicsuffixlist`` package — nothing is downloaded at run time.
"""

from __future__ import annotations

import enum
from urllib.parse import urlsplit

__all__ = ["SiteKeyMode", "SiteKeyer", "url_sort_key"]


class SiteKeyMode(str, enum.Enum):
    """How pages are grouped into sites."""

    HOST = "host"
    DOMAIN = "domain"


def _host(url: str) -> str:
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        return ""
    return host.rstrip(".")


class SiteKeyer:
    """Maps URLs to site keys; holds the Public Suffix List when grouping by domain.

    >>> SiteKeyer()('https://www.Example.com/a?b=1')
    'example.com'
    >>> SiteKeyer(SiteKeyMode.DOMAIN)('http://news.example.co.uk/x')
    'example.co.uk'
    """

    def __init__(self, mode: SiteKeyMode = SiteKeyMode.HOST) -> None:
        self.mode = SiteKeyMode(mode)
        self._psl = None
        if self.mode is SiteKeyMode.DOMAIN:
            from publicsuffixlist import PublicSuffixList

            self._psl = PublicSuffixList()

    def __call__(self, url: str) -> str:
        host = _host(url)
        if host.startswith("www."):
            host = host[4:]
        if self._psl is not None and host:
            return self._psl.privatesuffix(host) or host
        return host


def url_sort_key(url: str) -> str:
    """The order of a site's pages: the URL without scheme and ``www.``, so that
    ``http://`` and ``https://`` copies of a page sit next to each other.

    >>> url_sort_key('https://www.example.com/b?x=1')
    'example.com/b?x=1'
    """
    rest = url.strip()
    scheme_end = rest.find("://")
    if scheme_end >= 0:
        rest = rest[scheme_end + 3 :]
    if rest[:4].lower() == "www.":
        rest = rest[4:]
    host, slash, path = rest.partition("/")
    return f"{host.lower()}{slash}{path}"
