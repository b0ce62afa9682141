"""URLs taken apart and put back together byte for byte, and the variants a rule may erase.

The rules never re-encode a URL: :func:`split_url` cuts the string at its delimiters and
:func:`UrlParts.join` glues the same pieces back, so a URL no rule touches comes out identical
(``urllib.parse.urlunsplit`` would drop an empty ``?`` or ``#``). Query parameters are compared by
their decoded name and value (``utm%5Fsource`` is ``utm_source``), but written as they came.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from urllib.parse import unquote_plus

__all__ = [
    "DEFAULT_DOCUMENTS",
    "QueryChunk",
    "UrlParts",
    "path_params",
    "query_chunks",
    "split_url",
    "strip_default_document",
    "without_default_port",
    "without_path_params",
]

# Names a server commonly answers for a directory: candidates for the ``index`` variant. Being on
# the list only makes a name testable; each one becomes a rule from evidence alone.
DEFAULT_DOCUMENTS = frozenset({
    "index.html", "index.htm", "index.shtml", "index.php", "index.asp", "index.aspx",
    "index.jsp", "index.cfm", "index.cgi", "default.htm", "default.html", "default.asp",
    "default.aspx", "home.html", "home.htm",
})

_PATH_PARAM = re.compile(r";([^/;=?#]+)=([^/;?#]*)")


@dataclass(frozen=True)
class UrlParts:
    """A URL cut at ``://``, the first ``/`` after the host, ``?`` and ``#``; ``query`` and
    ``fragment`` are None when their delimiter is absent (an empty string when present)."""

    scheme: str
    netloc: str
    path: str
    query: str | None
    fragment: str | None
    authority: bool = True

    def join(self) -> str:
        head = f"{self.scheme}://{self.netloc}" if self.authority else ""
        url = head + self.path
        if self.query is not None:
            url += "?" + self.query
        if self.fragment is not None:
            url += "#" + self.fragment
        return url

    def with_(self, **changes: object) -> UrlParts:
        return replace(self, **changes)  # type: ignore[arg-type]

    @property
    def base(self) -> str:
        """Everything before the query: what URLs differing in their query only share."""
        return self.with_(query=None, fragment=None).join()


def split_url(url: str) -> UrlParts:
    """Cut ``url`` into its parts; ``split_url(u).join() == u`` for every string.

    >>> split_url('http://a.b/c?d=1#e')
    UrlParts(scheme='http', netloc='a.b', path='/c', query='d=1', fragment='e', authority=True)
    """
    rest, hash_sign, fragment = url.partition("#")
    rest, question, query = rest.partition("?")
    scheme, sep, after = rest.partition("://")
    frag = fragment if hash_sign else None
    qry = query if question else None
    if not sep or "/" in scheme:
        return UrlParts("", "", rest, qry, frag, authority=False)
    netloc, slash, path = after.partition("/")
    return UrlParts(scheme, netloc, slash + path, qry, frag)


@dataclass(frozen=True)
class QueryChunk:
    """One ``name=value`` of a query as written (``raw``), with its decoded name and value."""

    raw: str
    name: str
    value: str


def query_chunks(query: str | None) -> list[QueryChunk]:
    """The ``&``-separated pieces of a query, in order, empty ones included (kept as written)."""
    if query is None:
        return []
    chunks = []
    for raw in query.split("&"):
        name, _, value = raw.partition("=")
        chunks.append(QueryChunk(raw, unquote_plus(name), unquote_plus(value)))
    return chunks


def path_params(path: str) -> list[str]:
    """Names of the ``;name=value`` parameters of a path (``;jsessionid=…``), lower case."""
    return [m.group(1).lower() for m in _PATH_PARAM.finditer(path)]


def without_path_params(path: str, names: frozenset[str] | None = None) -> str:
    """``path`` without its ``;name=value`` parameters (only those named, when given)."""
    if names is None:
        return _PATH_PARAM.sub("", path)
    return _PATH_PARAM.sub(lambda m: "" if m.group(1).lower() in names else m.group(0), path)


def strip_default_document(path: str) -> tuple[str, str | None]:
    """``(directory path ending in '/', document name)`` when the last segment of ``path`` is a
    default document, else ``(path, None)``.

    >>> strip_default_document('/news/Index.html')
    ('/news/', 'index.html')
    """
    head, slash, last = path.rpartition("/")
    if slash and last.lower() in DEFAULT_DOCUMENTS:
        return head + "/", last.lower()
    return path, None


def without_default_port(scheme: str, netloc: str) -> str:
    """``netloc`` without ``:80`` (http) or ``:443`` (https), the ports a scheme implies.

    >>> without_default_port('http', 'a.b:80'), without_default_port('https', 'a.b:80')
    ('a.b', 'a.b:80')
    """
    default = {"http": ":80", "https": ":443"}.get(scheme.lower())
    if default and netloc.endswith(default):
        return netloc[: -len(default)]
    return netloc
