"""--redact-pii: e-mail, IPv4 and IPv6 addresses replaced by fixed placeholders, counted by kind,
in every text output; what only looks like an address is left alone (docs/pii.md)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import (
    ArchiveBuilder,
    fitted_profiles,
    http_response,
    jsonl_pages,
    outputs_of,
    warc_record,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.errors import ConfigError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.page.pii import PLACEHOLDERS, Redactor
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.warc.compression import Codec
from warcdeboil.warc.reader import iter_records

NONE = {"email": 0, "ipv4": 0, "ipv6": 0}
_REDACTOR = Redactor()


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor()


@pytest.mark.parametrize(("text", "redacted", "kind"), [
    ("write to jane@example.com today", "write to [EMAIL] today", "email"),
    ("jane.doe+news@mail.sub.example.co.uk.", "[EMAIL].", "email"),
    ("Email: O'Brien_1@uni-bonn.de, or", "Email: [EMAIL], or", "email"),
    ("(josé@correo.es)", "([EMAIL])", "email"),
    ("mailto:bob@corp.io", "mailto:[EMAIL]", "email"),
    ("https://x.com/unsubscribe?to=bob@corp.io&x=1", "https://x.com/unsubscribe?to=[EMAIL]&x=1",
     "email"),
    ("email: jane@example.com: that one", "email: [EMAIL]: that one", "email"),
    ("from 203.0.113.7 today", "from [IPV4] today", "ipv4"),
    ("server 8.8.8.8:53 and", "server [IPV4]:53 and", "ipv4"),
    ("the block 10.0.0.0/8.", "the block [IPV4]/8.", "ipv4"),
    ("ping 1.2.3.4", "ping [IPV4]", "ipv4"),
    ("localhost is 127.0.0.1 here", "localhost is [IPV4] here", "ipv4"),
    ("at 2001:0db8:0000:0000:0000:ff00:0042:8329 now", "at [IPV6] now", "ipv6"),
    ("at 2001:db8::1.", "at [IPV6].", "ipv6"),
    ("loopback ::1 is", "loopback [IPV6] is", "ipv6"),
    ("ping6 fe80::1%eth0 -c 1", "ping6 [IPV6] -c 1", "ipv6"),
    ("mapped ::ffff:192.0.2.128 here", "mapped [IPV6] here", "ipv6"),
    ("http://[2001:db8::1]:8080/", "http://[[IPV6]]:8080/", "ipv6"),
    ("IPv6 address:2001:db8::42", "IPv6 address:[IPV6]", "ipv6"),
])
def test_addresses_are_replaced_and_counted(redactor: Redactor, text: str, redacted: str,
                                            kind: str) -> None:
    assert redactor.redact(text) == (redacted, {**NONE, kind: 1})


@pytest.mark.parametrize("text", [
    # version numbers, dates, decimals, times
    "v1.2.3.4", "version 1.2.3.4", "Version: 10.0.0.1", "build 4.3.2.1", "release - 9.5.3.72",
    "2.0.0.1-beta", "1.2.3.4b", "1.2.3.4.5", "2024.11.28", "28.11.2024", "3.14159",
    "256.1.1.1", "01.02.03.04", "12:30:45", "10:35:02:120AM", "Oct. 30:: 2012",
    # MAC addresses, hashes, code
    "00:1a:2b:3c:4d:5e", "00:1a:2b:3c:4d:5e:6f:70", "dead:beef", "dead::beef", "std::vector",
    "a::b", "Foo::Bar::baz()", "xs[1::2]", "xs[::2]", "fe80::/10", "::",
    # things with an @ that are not mailboxes
    "ssh user@host", "root@localhost", "pi@raspberrypi:~ $", "jane@server.local",
    "git@github.com:org/repo.git", "@mention", "(@Panthers)", "@jane@mastodon.social",
    "icon@2x.png", "logo@1.5x.jpg", "https://unpkg.com/react@18.2.0/umd/react.js",
    "https://medium.com/@user/post", "https://www.google.com/maps/@51.5,-0.12,15z",
    "SETI@home", "TED@London", "select=\"@id\"", "a@b", "@", "x@.com", "x@-a.com",
    # not redacted either (docs/pii.md): dodges, unknown suffixes, glued words, phone numbers
    "jane at example dot com", "help@seomoz_dot_org", "cosn@bitnic.bitnet", "IPv6:2001:db8::1",
    "+1.206.283.0311",
])
def test_what_only_looks_like_an_address_is_left_alone(redactor: Redactor, text: str) -> None:
    assert redactor.redact(text) == (text, NONE)


def test_code_blocks_follow_the_same_rules(redactor: Redactor) -> None:
    """user@host in a shell session is no mailbox; a real address in a code block is one."""
    code = ("$ ssh deploy@web01\n$ git remote add origin git@github.com:org/repo.git\n"
            "$ git config user.email jane@corp.com")
    assert redactor.redact(code) == (code.replace("jane@corp.com", "[EMAIL]"),
                                     {**NONE, "email": 1})


@pytest.mark.parametrize("unit", ["a.", "a@", "a:", "1.", "1:", "a@b.", "1.2.3.4.", "a" * 70 + "@",
                                  "@a.", "::1 ", "a-"])
def test_adversarial_text_is_redacted_in_linear_time(redactor: Redactor, unit: str) -> None:
    text = unit * (100_000 // len(unit) + 1)
    start = time.process_time()
    redactor.redact(text)
    assert time.process_time() - start < 1.0


# Pieces addresses and their look-alikes are made of, joined at random.
_ADDRESSY = st.lists(st.sampled_from(
    list("ab19fe:.@-_x[]%/ \n") + ["com", "co.uk", "::", "@a.", "255", "0.", "jane", "v"]),
    max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(_ADDRESSY)
def test_redaction_is_idempotent(text: str) -> None:
    redactor = _REDACTOR
    once, counts = redactor.redact(text)
    assert redactor.redact(once) == (once, NONE)
    assert sum(once.count(p) - text.count(p) for p in PLACEHOLDERS.values()) == sum(
        counts.values())


@settings(max_examples=300, deadline=None)
@given(st.text().filter(lambda t: "@" not in t and ":" not in t and "." not in t))
def test_text_without_at_colon_or_dot_is_unchanged(text: str) -> None:
    redacted, counts = _REDACTOR.redact(text)
    assert redacted.encode("utf-8", "surrogatepass") == text.encode("utf-8", "surrogatepass")
    assert counts == NONE

# Pages of one site: a header and footer the fit learns, and an article holding addresses in a
# heading, a paragraph, a list and a code block.
_ARTICLE = (
    "<article><h1>Contact {i}: desk{i}@news.example.org</h1>"
    "<p>Reporters reached the office from 198.51.100.{i} and from 2001:db8::{i}, and wrote "
    "to editor{i}@example.org about version 1.2.3.4 of the software released on 2024.11.28. "
    "The story goes on for a while with more words in it.</p>"
    "<ul><li>gateway 203.0.113.{i} on the west side of the town</li>"
    "<li>resolver ::1 on the same host as desk {i} and the others</li></ul>"
    "<pre>$ ssh admin@web{i}\n$ git clone git@github.com:org/repo.git</pre></article>"
)


def _pages(count: int = 4) -> list[tuple[str, str]]:
    pages = []
    for i in range(1, count + 1):
        html = ("<!DOCTYPE html><html lang=en><head><title>Story</title></head><body>"
                "<header><nav><a href='/'>Home</a> <a href='/n'>News</a></nav></header>"
                + _ARTICLE.format(i=i)
                + "<footer><p>Copyright site. All rights reserved.</p></footer></body></html>")
        pages.append((f"http://site.test/story/{i}", html))
    return pages


@pytest.fixture
def pii_crawl(tmp_path: Path, write_archive: ArchiveBuilder) -> Path:
    src = tmp_path / "crawl"
    src.mkdir()
    records = [warc_record("response", url, http_response(html.encode()))
               for url, html in _pages()]
    write_archive(src / "a.warc.gz", records, Codec.GZIP)
    return src


def _addresses(i: int) -> list[str]:
    return [f"desk{i}@news.example.org", f"198.51.100.{i}", f"2001:db8::{i}",
            f"editor{i}@example.org", f"203.0.113.{i}", "::1"]


def test_jsonl_and_markdown_are_redacted_and_counted(pii_crawl: Path, tmp_path: Path) -> None:
    plain = clean([pii_crawl], tmp_path / "plain",
                  Options(workers=1, format=OutputFormat.MARKDOWN))
    summary = clean([pii_crawl], tmp_path / "out",
                    Options(workers=1, format=OutputFormat.MARKDOWN, redact_pii=True))
    before, after = jsonl_pages(tmp_path / "plain"), jsonl_pages(tmp_path / "out")
    assert len(after) == len(before) == 4
    for i, (was, line) in enumerate(zip(before, after, strict=True), start=1):
        assert all(a in was["text"] for a in _addresses(i))
        assert "pii_redacted" not in was
        assert line["pii_redacted"] == {"email": 2, "ipv4": 2, "ipv6": 2}
        written = json.dumps({k: line[k] for k in ("text", "markdown", "headings", "lists")})
        assert not [a for a in _addresses(i) if a in written]
        assert line["text"].count("[EMAIL]") == 2 and line["text"].count("[IPV6]") == 2
        assert line["headings"][0]["text"] == f"Contact {i}: [EMAIL]"
        assert line["lists"] == [["gateway [IPV4] on the west side of the town",
                                  f"resolver [IPV6] on the same host as desk {i} and the others"]]
        assert "\\[EMAIL\\]" in line["markdown"]  # Markdown escapes brackets, as any text's
        # what only looks like an address is left, and nothing else changes
        assert "version 1.2.3.4" in line["text"] and "2024.11.28" in line["text"]
        assert f"admin@web{i}" in line["text"] and "git@github.com:org" in line["text"]
        same = {k: v for k, v in line.items()
                if k not in ("text", "markdown", "headings", "lists", "pii_redacted")}
        assert same == {k: v for k, v in was.items() if k not in ("text", "markdown",
                                                                   "headings", "lists")}
    data = summary.to_dict()
    assert data["pii_redacted"] == {"email": 8, "ipv4": 8, "ipv6": 8}
    assert "pii_redacted" not in plain.to_dict()
    assert data["text_chars"] == sum(len(line["text"]) for line in after)


def test_wet_text_is_redacted(pii_crawl: Path, tmp_path: Path) -> None:
    summary = clean([pii_crawl], tmp_path / "out",
                    Options(workers=1, format=OutputFormat.TEXT, redact_pii=True))
    (output,) = outputs_of(tmp_path / "out")
    records = list(iter_records(output))
    assert ("redact-pii", "yes") in [tuple(line.split(": ", 1)) for line in
                                     records[0].block.decode().splitlines()]
    texts = [r.block.decode() for r in records if r.rec_type == "conversion"]
    assert len(texts) == 4
    for i, text in enumerate(texts, start=1):
        assert not [a for a in _addresses(i) if a in text]
        assert text.count("[EMAIL]") == 2 and text.count("[IPV4]") == 2
    assert summary.to_dict()["pii_redacted"] == {"email": 8, "ipv4": 8, "ipv6": 8}


def test_warc_output_refuses_redaction(pii_crawl: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--redact-pii redacts text"):
        Options(format=OutputFormat.WARC, redact_pii=True)
    result = CliRunner().invoke(app, ["clean", str(pii_crawl), "-o", str(tmp_path / "out"),
                                      "--redact-pii"])
    assert result.exit_code == 2
    assert "WARC output keeps each page's HTML" in result.output
    assert not (tmp_path / "out").exists()


def test_the_cli_prints_and_reports_the_counts(pii_crawl: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["clean", str(pii_crawl), "-o", str(tmp_path / "out"), "-f",
                                 "jsonl", "--redact-pii", "-j", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["pii_redacted"] == {"email": 8, "ipv4": 8, "ipv6": 8}
    printed = runner.invoke(app, ["clean", str(pii_crawl), "-o", str(tmp_path / "again"), "-f",
                                  "jsonl", "--redact-pii", "-j", "1"])
    assert "PII redacted            24   e-mail: 8, IPv4: 8, IPv6: 8" in printed.output


def test_apply_redacts_too(pii_crawl: Path, tmp_path: Path) -> None:
    profiles = fitted_profiles(pii_crawl, tmp_path)
    result = CliRunner().invoke(app, ["apply", str(pii_crawl), "-o", str(tmp_path / "out"),
                                      "--profiles", str(profiles), "-f", "jsonl",
                                      "--dedup", "off", "--redact-pii", "--json", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["pii_redacted"] == {"email": 8, "ipv4": 8, "ipv6": 8}
    lines = jsonl_pages(tmp_path / "out")
    assert [line["pii_redacted"] for line in lines] == [{"email": 2, "ipv4": 2, "ipv6": 2}] * 4


def test_resume_refuses_outputs_made_without_redaction(pii_crawl: Path, tmp_path: Path) -> None:
    from warcdeboil.errors import PlanError

    clean([pii_crawl], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL))
    with pytest.raises(PlanError, match="--redact-pii not recorded"):
        clean([pii_crawl], tmp_path / "out",
              Options(workers=1, format=OutputFormat.JSONL, redact_pii=True), resume=True)
    side = next((tmp_path / "out").glob(".*.options.json"))
    assert "redact-pii" not in json.loads(side.read_text())["options"]
    clean([pii_crawl], tmp_path / "red",
          Options(workers=1, format=OutputFormat.JSONL, redact_pii=True))
    with pytest.raises(PlanError, match="--redact-pii yes"):
        clean([pii_crawl], tmp_path / "red", Options(workers=1, format=OutputFormat.JSONL),
              resume=True)


def test_line_scores_still_match_the_lines(pii_crawl: Path, tmp_path: Path) -> None:
    """The language model scores the text before redaction: as many lines, the same scores."""
    from warcdeboil.lm.scoring import LmSettings

    lm = LmSettings("auto", True, None, None)
    clean([pii_crawl], tmp_path / "plain", Options(workers=1, format=OutputFormat.JSONL, lm=lm))
    clean([pii_crawl], tmp_path / "out",
          Options(workers=1, format=OutputFormat.JSONL, lm=lm, redact_pii=True))
    for was, line in zip(jsonl_pages(tmp_path / "plain"), jsonl_pages(tmp_path / "out"),
                         strict=True):
        assert line["line_perplexities"] == was["line_perplexities"]
        assert len(line["line_perplexities"]) == len(line["text"].split("\n"))
        assert line["pii_redacted"]["email"] == 2



def test_the_in_memory_api_redacts_as_jsonl_does(pii_crawl: Path, tmp_path: Path) -> None:
    from warcdeboil import Deboiler
    from warcdeboil.dedup.verdicts import DedupMode
    from warcdeboil.site.clean import Mode

    clean([pii_crawl], tmp_path / "out", Options(workers=1, format=OutputFormat.MARKDOWN,
                                                 dedup=DedupMode.OFF, redact_pii=True))
    lines = jsonl_pages(tmp_path / "out")
    records = list(iter_records(pii_crawl / "a.warc.gz"))
    pages = Deboiler(mode=Mode.CONTENT, redact_pii=True).fit_transform(
        records, warc_file=pii_crawl / "a.warc.gz")
    assert len(pages) == len(lines) == 4
    for page, line in zip(pages, lines, strict=True):
        assert {name: getattr(page, name) for name in line} == line
    plain = Deboiler(mode=Mode.CONTENT).fit_transform(records)
    assert plain[0].pii_redacted is None and "desk1@news.example.org" in plain[0].text
    with pytest.raises(ConfigError, match="html=True"):
        list(Deboiler(redact_pii=True).fit(records).transform(records, html=True))
