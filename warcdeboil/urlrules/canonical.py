"""A URL's canonical form under a set of rules, and which rules made it.

Rules are looked up by key through a predicate, so the same code serves the rules learned (for
:meth:`UrlRules.canonical`) and the wider set the learner checks for conflicts. Keys:

=================================================  ===============================================
``("variant", "scheme" | "www" | "port" |          a path variant changes nothing on the site
"slash" | "case" | "fragment" | "index:NAME" |
"path_param:NAME" | "empty_query" |
"query_order")``
``("param", p)``                                   (b) parameter ``p`` never matters on the site
``("param_value", p, v)``                          (e) adding ``p=v`` changes nothing, anywhere
``("path", path)``                                 (a) every URL of ``path`` is the same page
``("path_param", path, p)``                        (c) ``p`` does not matter on ``path``
``("path_query_param", path, rest, p)``            (d) … on ``path`` with the rest of the query
``("path_param_value", path, p, v)``               (e) adding ``p=v`` changes nothing on ``path``
=================================================  ===============================================

Each step only removes or normalises what a rule names; the steps repeat until nothing changes
(a parameter removed can make a path-and-query rule apply), so the result is a fixed point and
``canonical(canonical(u)) == canonical(u)``.
"""

from __future__ import annotations

from collections.abc import Callable

from .urls import (
    UrlParts,
    path_params,
    query_chunks,
    split_url,
    strip_default_document,
    without_default_port,
    without_path_params,
)

__all__ = ["Key", "canonical_with_trace"]

Key = tuple[str, ...]
Active = Callable[[Key], bool]
Prefer = Callable[[str], str]


def _variants(parts: UrlParts, active: Active, prefer: Prefer, trace: set[Key]) -> UrlParts:
    if parts.fragment is not None and active(("variant", "fragment")):
        parts = parts.with_(fragment=None)
        trace.add(("variant", "fragment"))
    if parts.query == "" and active(("variant", "empty_query")):
        parts = parts.with_(query=None)
        trace.add(("variant", "empty_query"))
    if not parts.authority:
        return parts
    netloc = without_default_port(parts.scheme, parts.netloc)
    if netloc != parts.netloc and active(("variant", "port")):
        parts = parts.with_(netloc=netloc)
        trace.add(("variant", "port"))
    scheme = parts.scheme.lower()
    if scheme in ("http", "https") and active(("variant", "scheme")):
        target = prefer("scheme")
        if parts.scheme != target:
            parts = parts.with_(scheme=target)
            trace.add(("variant", "scheme"))
    if active(("variant", "www")):
        has_www = parts.netloc[:4].lower() == "www."
        if has_www and prefer("www") == "bare":
            parts = parts.with_(netloc=parts.netloc[4:])
            trace.add(("variant", "www"))
        elif not has_www and prefer("www") == "www" and parts.netloc:
            parts = parts.with_(netloc="www." + parts.netloc)
            trace.add(("variant", "www"))
    names = [n for n in dict.fromkeys(path_params(parts.path))
             if active(("variant", f"path_param:{n}"))]
    if names:
        parts = parts.with_(path=without_path_params(parts.path, frozenset(names)))
        trace.update(("variant", f"path_param:{n}") for n in names)
    if active(("variant", "case")) and parts.path != parts.path.lower():
        parts = parts.with_(path=parts.path.lower())
        trace.add(("variant", "case"))
    directory, document = strip_default_document(parts.path)
    if document is not None and active(("variant", f"index:{document}")):
        if prefer(f"index:{document}") == "bare" and directory != "/":
            directory = directory.rstrip("/") or "/"
        parts = parts.with_(path=directory)
        trace.add(("variant", f"index:{document}"))
    path = parts.path
    if path not in ("", "/") and active(("variant", "slash")):
        want = path.rstrip("/") + "/" if prefer("slash") == "slash" else path.rstrip("/")
        if want != path and want:
            parts = parts.with_(path=want)
            trace.add(("variant", "slash"))
    return parts


def _query(parts: UrlParts, paths: tuple[str, ...], active: Active, trace: set[Key]) -> UrlParts:
    if parts.query is None:
        return parts
    for path in paths:
        if active(("path", path)):
            trace.add(("path", path))
            return parts.with_(query=None)
    chunks = query_chunks(parts.query)
    names = [n for n in dict.fromkeys(c.name for c in chunks) if n]
    for name in names:
        rest = "&".join(c.raw for c in chunks if c.name != name)
        values = [c.value for c in chunks if c.name == name]
        value = values[0] if len(values) == 1 else None
        keys: list[Key] = [("param", name)]
        if value is not None:
            keys.append(("param_value", name, value))
        for path in paths:
            keys += [("path_param", path, name), ("path_query_param", path, rest, name)]
            if value is not None:
                keys.append(("path_param_value", path, name, value))
        hit = next((key for key in keys if active(key)), None)
        if hit is not None:
            trace.add(hit)
            chunks = [c for c in chunks if c.name != name]
    if all(c.name for c in query_chunks(parts.query)) and not chunks:
        return parts.with_(query=None)
    raws = [c.raw for c in chunks]
    if len(raws) > 1 and raws != sorted(raws) and active(("variant", "query_order")):
        raws.sort()
        trace.add(("variant", "query_order"))
    return parts.with_(query="&".join(raws))


def canonical_with_trace(url: str, active: Active, prefer: Prefer) -> tuple[str, set[Key]]:
    """``url`` with every rule that ``active`` accepts applied, and the keys of those that
    changed it. Nothing else of the URL changes: no sorting, no re-encoding."""
    trace: set[Key] = set()
    current = url
    for _ in range(8):
        parts = split_url(current)
        raw_path = parts.path
        parts = _variants(parts, active, prefer, trace)
        paths = (raw_path,) if parts.path == raw_path else (raw_path, parts.path)
        parts = _query(parts, paths, active, trace)
        following = parts.join()
        if following == current:
            break
        current = following
    return current, trace
