"""PII redaction: e-mail addresses and IPv4 and IPv6 addresses in a page's text replaced by
fixed placeholders, counted by kind (``--redact-pii``; docs/pii.md says what counts).

Each kind is found in one linear pass: candidates come from patterns that start with a literal
and have no nested quantifiers (an ``@``; two colons at most four hexadecimal digits apart; a dot
and three dotted numbers), the run of characters around each is read once, and each candidate is
then checked in Python: its neighbours, its domain's top-level domain (one the
Public Suffix List of the ``publicsuffixlist`` package, already a dependency, has rules under),
the address itself (:mod:`ipaddress`). The placeholders hold no ``@``, no colon and no dotted
number, so redacting redacted text changes nothing and counts nothing.

>>> redactor = Redactor()
>>> redactor.redact("Mail jane.doe+news@mail.example.co.uk from 203.0.113.7 or 2001:db8::1.")
('Mail [EMAIL] from [IPV4] or [IPV6].', {'email': 1, 'ipv4': 1, 'ipv6': 1})
>>> redactor.redact("v1.2.3.4, std::vector, icon@2x.png, ssh user@host")[1]
{'email': 0, 'ipv4': 0, 'ipv6': 0}
"""

from __future__ import annotations

import ipaddress
import re

__all__ = ["EMAIL", "IPV4", "IPV6", "KINDS", "PLACEHOLDERS", "Counts", "Redactor"]

EMAIL, IPV4, IPV6 = "email", "ipv4", "ipv6"
KINDS = (EMAIL, IPV4, IPV6)
# Fixed, and visibly not an address: no reader takes them for real data, no pass finds them
# again (datatrove and FineWeb write realistic stand-ins, email@example.com and random IPs).
PLACEHOLDERS = {EMAIL: "[EMAIL]", IPV4: "[IPV4]", IPV6: "[IPV6]"}

Counts = dict[str, int]
"""Addresses redacted, by kind (every kind, 0 included)."""

# RFC 5321's limits: a local part of at most 64 octets, a domain of at most 253 characters.
MAX_LOCAL = 64
MAX_DOMAIN = 253
_LOCAL_PUNCTUATION = frozenset("._%+-'")
# A domain: a maximal run of letters, digits, dots and hyphens (one character per step, no
# alternative can match the same character: linear).
_DOMAIN_RUN = re.compile(rf"(?:[^\W_]|[.-]){{1,{MAX_DOMAIN}}}")

# The patterns that find candidates start with a literal (":", "."), which the regular expression
# engine looks for at C speed: a class at every position (``[0-9A-Fa-f:.]+``) took 20 times as
# long on cleaneval's text (0.14 s where the whole run takes 3.7 s).
# IPv6: two colons at most four hexadecimal digits apart, then the maximal run of hexadecimal
# digits, colons and dots (an embedded IPv4 address) around them, with an optional zone
# (``%eth0``); the longest address written out is 45 characters.
_IPV6_HIT = re.compile(r":[0-9A-Fa-f]{0,4}:")
_IPV6_TAIL = re.compile(r"[0-9A-Fa-f:.]*(?:%[0-9A-Za-z_.-]{1,32})?")
_IPV6_CHARS = frozenset("0123456789abcdefABCDEF:.")
MAX_IPV6 = 45 + 33
# IPv4: the last three of four dotted numbers of 1 to 3 digits, then the first found before them;
# not part of a longer dotted or alphanumeric run (``v1.2.3.4``, ``1.2.3.4.5``, ``2.0.0.1-beta``,
# ``1.2.3.4b``).
_IPV4_HIT = re.compile(r"\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}")
_IPV4_AFTER = re.compile(r"\w|\.[0-9]|[-+][^\W_]")
_DIGITS = frozenset("0123456789")
# A dotted number just after one of these words is a version, not an address.
_VERSION_BEFORE = re.compile(
    r"(?i)\b(?:v|ver|version|release|rel|build|rev|revision|firmware|update|patch)\.?\s*"
    r"[:#-]?\s*\Z")
_VERSION_WINDOW = 24  # characters looked at before a dotted number for such a word


class Redactor:
    """Finds and replaces addresses; holds the top-level domains, read when first needed."""

    def __init__(self) -> None:
        self._tlds: frozenset[str] | None = None

    def redact(self, text: str) -> tuple[str, Counts]:
        """``text`` with its addresses replaced by :data:`PLACEHOLDERS`, and their counts."""
        counts = dict.fromkeys(KINDS, 0)
        if "@" in text:
            text = _replace(text, self._emails(text), EMAIL, counts)
        if ":" in text:
            text = _replace(text, _ipv6_spans(text), IPV6, counts)
        if "." in text:
            text = _replace(text, _ipv4_spans(text), IPV4, counts)
        return text, counts

    def redact_text(self, text: str) -> str:
        """``text`` redacted, without its counts."""
        return self.redact(text)[0]

    def _emails(self, text: str) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        floor = 0  # no address starts before the end of the one found last
        at = text.find("@")
        while at >= 0:
            span = self._email_at(text, at, floor)
            if span is not None:
                spans.append(span)
                floor = span[1]
                at = text.find("@", floor)
            else:
                at = text.find("@", at + 1)
        return spans

    def _email_at(self, text: str, at: int, floor: int) -> tuple[int, int] | None:
        """The address around the ``@`` at ``at``, as (start, end); None when there is none."""
        start = at
        while start > floor and at - start <= MAX_LOCAL and _local_char(text[start - 1]):
            start -= 1
        if at - start > MAX_LOCAL:
            return None  # a run of letters too long to be a local part
        while start < at and text[start] == ".":
            start += 1  # leading dots end the sentence before, they are not the address's
        local = text[start:at]
        if not local or local.endswith(".") or ".." in local:
            return None
        if start > 0 and text[start - 1] == "@":
            return None  # @user@server: a handle (the fediverse's), not a mailbox
        run = _DOMAIN_RUN.match(text, at + 1)
        if run is None:
            return None
        end = run.end()
        if end < len(text) and (text[end].isalnum() or text[end] in ".-_@"):
            return None  # longer than a domain can be, or something else (a@b.c@d)
        domain = run.group().rstrip(".")
        end = at + 1 + len(domain)
        if end + 1 < len(text) and text[end] == ":" and not text[end + 1].isspace():
            return None  # git@github.com:org/repo: an SCP-style remote, not a mailbox
        if not self._mail_domain(domain):
            return None
        return start, end

    def _mail_domain(self, domain: str) -> bool:
        """Whether ``domain`` can receive mail: labels of letters, digits and inner hyphens,
        and a top-level domain the Public Suffix List knows (not ``host``, ``2x.png``,
        ``server.local``)."""
        labels = domain.split(".")
        if len(labels) < 2 or not all(_label(label) for label in labels):
            return False
        tld = labels[-1].lower()
        if not (tld.isalpha() or tld.startswith("xn--")):
            return False
        if self._tlds is None:
            self._tlds = top_level_domains()
        return tld in self._tlds


def top_level_domains() -> frozenset[str]:
    """The last label of every rule of the Public Suffix List, as written and, for names not in
    ASCII, punycoded: 1,608 of them, read in 10 ms (the package's own parse takes 30-60 ms)."""
    from publicsuffixlist import PSLFILE

    tlds = set()
    with open(PSLFILE, encoding="utf-8") as fh:
        for line in fh:
            rule = line.strip()
            if not rule or rule.startswith("//"):
                continue
            label = rule.rsplit(".", 1)[-1].lower()
            tlds.add(label)
            if not label.isascii():
                tlds.add(label.encode("idna").decode("ascii"))
    return frozenset(tlds)


def _local_char(char: str) -> bool:
    return char.isalnum() or char in _LOCAL_PUNCTUATION


def _label(label: str) -> bool:
    return (0 < len(label) <= 63 and not label.startswith("-") and not label.endswith("-")
            and all(c.isalnum() or c == "-" for c in label))


def _ipv6_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    done = 0  # the end of the last run looked at: each run is read once
    for hit in _IPV6_HIT.finditer(text):
        if hit.start() < done:
            continue
        start = hit.start()
        floor = max(0, start - MAX_IPV6 - 1)
        while start > floor and text[start - 1] in _IPV6_CHARS:
            start -= 1
        tail = _IPV6_TAIL.match(text, hit.start())
        assert tail is not None  # the pattern matches the empty string
        end = done = tail.end()
        candidate = text[start:end]
        if (start > 0 and text[start - 1] in _IPV6_CHARS) or len(candidate) > MAX_IPV6:
            continue  # longer than any address
        address, _, zone = candidate.partition("%")
        if not zone:  # a sentence's full stop or colon after the address is not its own
            stripped = address.rstrip(".")
            if stripped.endswith(":") and not stripped.endswith("::"):
                stripped = stripped[:-1]
            end -= len(address) - len(stripped)
            address = stripped
        lead = len(address) - len(address.lstrip("."))
        if address[lead:lead + 1] == ":" and address[lead + 1:lead + 2] != ":":
            lead += 1  # Address:2001:db8::1: the colon is the label's
        address, start = address[lead:], start + lead
        if _ipv6_address(text, start, end, address):
            spans.append((start, end))
    return spans


def _ipv6_address(text: str, start: int, end: int, address: str) -> bool:
    """Whether ``address`` at text[start:end] is an IPv6 address written as one."""
    before = text[start - 1] if start > 0 else " "
    if before.isalnum() or before == "_" or (before == ":" and text[start - 2:start] == "::"):
        return False  # std::vector, Foo::Bar: part of a name
    if before == "%" and start > 1 and text[start - 2] in _IPV6_CHARS:
        return False  # the zone of an address (or of what looks like one) before it
    if end < len(text) and (text[end].isalnum() or text[end] in "_:"):
        return False
    if start > 1 and text[start - 1] == "[" and (text[start - 2].isalnum()
                                                  or text[start - 2] in "_)]"):
        return False  # a[1::2]: a subscript, not an address in brackets
    if not any(c.isdigit() for c in address):
        return False  # a::b, dead::beef, ::, C++ and Rust paths: no address without a digit
    groups = address.split(":")
    if sum(1 for group in groups if group) < 2 and not address.startswith("::"):
        return False  # 30:: (a heading's "Oct. 30::"), fe80:: (a prefix): one group, no host
    if len(groups) == 8 and all(len(group) == 2 for group in groups):
        return False  # 00:1a:2b:3c:4d:5e:6f:70: an EUI-64 (MAC-style) identifier
    try:
        ipaddress.IPv6Address(address)
    except ValueError:
        return False
    return True


def _ipv4_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    for hit in _IPV4_HIT.finditer(text):
        dot, end = hit.span()
        start = dot
        while start > 0 and dot - start < 3 and text[start - 1] in _DIGITS:
            start -= 1
        if start == dot:
            continue  # no first number
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_."):
            continue  # v1.2.3.4, 1234.1.2.3, 1.2.3.4.5
        if _IPV4_AFTER.match(text, end):
            continue  # 1.2.3.4b, 1.2.3.4.5, 2.0.0.1-beta
        if _VERSION_BEFORE.search(text[max(0, start - _VERSION_WINDOW):start]):
            continue  # version 1.2.3.4, build 10.0.0.1
        try:
            ipaddress.IPv4Address(text[start:end])  # refuses 256.1.1.1 and 01.02.03.04
        except ValueError:
            continue
        spans.append((start, end))
    return spans


def _replace(text: str, spans: list[tuple[int, int]], kind: str, counts: Counts) -> str:
    if not spans:
        return text
    counts[kind] += len(spans)
    placeholder = PLACEHOLDERS[kind]
    pieces = []
    last = 0
    for start, end in spans:
        pieces.append(text[last:start])
        pieces.append(placeholder)
        last = end
    pieces.append(text[last:])
    return "".join(pieces)
