"""URL rules learned in a clean run (--url-rules): the file, JSONL's url_canonical, refusals,
and the Spark engine's same rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ArchiveBuilder, http_response, jsonl_pages, site_pages, warc_record
from typer.testing import CliRunner

from warcdeboil.cli import app
from warcdeboil.dedup import iter_url_groups
from warcdeboil.dedup.verdicts import DedupMode
from warcdeboil.errors import ConfigError, PlanError
from warcdeboil.output.formats import OutputFormat
from warcdeboil.run.local import clean
from warcdeboil.run.options import Options
from warcdeboil.urlrules import UrlRules
from warcdeboil.warc.compression import Codec

SITES = ("alpha.example", "beta.example", "gamma.example")
PAGES = 8  # distinct pages a site, at ?id=0 .. ?id=7
COPIES = 5  # of them, copied byte for byte under a tracking parameter


def _records(pages: list[tuple[str, bytes]]) -> list[tuple[list[tuple[str, str]], bytes]]:
    records = [warc_record("warcinfo", "", b"software: tests\r\n",
                           content_type="application/warc-fields")]
    for url, body in pages:
        records.append(warc_record("response", url, http_response(body)))
    return records


EMPTY = "http://alpha.example/empty?id=1"


def _url(host: str, i: int, tracking: str = "") -> str:
    return f"http://{host}/item?id={i}{tracking}"


@pytest.fixture
def rules_crawl(tmp_path: Path, write_archive: ArchiveBuilder) -> Path:
    """One archive per site: its distinct pages at ``/item?id=N``, then copies of the first
    ones at ``/item?id=N&utm_source=feed`` (the same bytes); alpha also has two pages with
    nothing but its template (their text empty once it is removed), which differ only in a
    comment, one of them under the tracking parameter."""
    src = tmp_path / "crawl"
    src.mkdir()
    for host in SITES:
        bodies = [html.encode() for _, html in site_pages(host, PAGES)]
        pages = [(_url(host, i), body) for i, body in enumerate(bodies)]
        pages += [(_url(host, i, "&utm_source=feed"), bodies[i]) for i in range(COPIES)]
        if host == SITES[0]:  # two pages all template, distinct bytes: no evidence either way
            template = bodies[0].replace(bodies[0][bodies[0].index(b"<article>"):
                                                   bodies[0].index(b"</article>") + 10], b"")
            pages += [(EMPTY, template + b"<!-- one -->"),
                      (EMPTY + "&utm_source=feed", template + b"<!-- two -->")]
        write_archive(src / f"{host}.warc.gz", _records(pages), Codec.GZIP)
    return src


def _irrelevant(data: dict, site: str) -> set[tuple[str, ...]]:
    return {(r["kind"], r.get("param", r.get("variant", ""))) for r in data["sites"][site]["rules"]
            if r["decision"] == "irrelevant"}


def test_rules_file_and_url_canonical(rules_crawl: Path, tmp_path: Path) -> None:
    target = tmp_path / "rules.json"
    work = tmp_path / "work"
    options = Options(workers=2, format=OutputFormat.JSONL, url_rules=str(target))
    summary = clean([rules_crawl], tmp_path / "out", options, work_dir=work)
    # The all-template pages are in the groups, but not among the rules' evidence: learned
    # with them, their pair (two groups) would refute utm_source on alpha.
    every = {url for _, url, _ in iter_url_groups(work)}
    evidence = {url for _, url, _ in iter_url_groups(work, evidence_only=True)}
    assert every - evidence == {EMPTY, EMPTY + "&utm_source=feed"}
    with_empty = UrlRules().learn((url, group) for _, url, group in iter_url_groups(work))
    assert ("param", "utm_source") not in with_empty.irrelevant(SITES[0])
    data = json.loads(target.read_text(encoding="utf-8"))
    assert UrlRules.load(target).to_json() == data  # a rules file that loads back as written
    assert sorted(data["sites"]) == list(SITES)
    for site in SITES:
        assert ("param", "utm_source") in _irrelevant(data, site)
        id_rules = [r for r in data["sites"][site]["rules"] if r.get("param") == "id"]
        assert id_rules and all(r["decision"] != "irrelevant" for r in id_rules)
        assert data["sites"][site]["urls"] == PAGES + COPIES
    pages = jsonl_pages(tmp_path / "out")
    assert len(pages) == len(SITES) * (PAGES + COPIES) + 2
    canonical = {p["url"]: p["url_canonical"] for p in pages}
    for host in SITES:
        for i in range(PAGES):
            assert canonical[_url(host, i)] == _url(host, i)
        for i in range(COPIES):
            assert canonical[_url(host, i, "&utm_source=feed")] == _url(host, i)
    rules = summary.to_dict()["url_rules"]
    assert rules["path"] == str(target)
    assert rules["sites"] == 3
    assert rules["rules"] >= 3  # utm_source on each site, at least
    assert not list(tmp_path.glob(".rules.json.*"))  # no part file left


def test_warc_output_unchanged_by_url_rules(rules_crawl: Path, tmp_path: Path) -> None:
    """WARC output (--dedup off by default) runs the stage for the rules only: the outputs are
    those of a run without them."""
    target = tmp_path / "rules.json"
    clean([rules_crawl], tmp_path / "plain", Options(workers=1))
    result = CliRunner().invoke(app, ["clean", str(rules_crawl), "-o", str(tmp_path / "ruled"),
                                      "--workers", "1", "--url-rules", str(target)])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("URL rules"))
    assert line.split()[3:5] == ["sites:", "3"] and line.endswith(f"→ {target}")
    assert ("param", "utm_source") in _irrelevant(json.loads(target.read_text()), SITES[0])
    for host in SITES:
        name = f"{host}.warc.gz"
        assert (tmp_path / "ruled" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()


def test_without_url_rules_no_url_canonical(rules_crawl: Path, tmp_path: Path) -> None:
    clean([rules_crawl], tmp_path / "out", Options(workers=1, format=OutputFormat.JSONL))
    assert all("url_canonical" not in page for page in jsonl_pages(tmp_path / "out"))


def test_refused_overwrites(rules_crawl: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = (rules_crawl / "alpha.example.warc.gz").read_bytes()
    for target in (rules_crawl / "alpha.example.warc.gz", out / "beta.example.jsonl.gz"):
        with pytest.raises(PlanError, match="--url-rules would overwrite"):
            clean([rules_crawl], out, Options(format=OutputFormat.JSONL, url_rules=str(target)))
    assert (rules_crawl / "alpha.example.warc.gz").read_bytes() == before
    result = CliRunner().invoke(app, ["clean", str(rules_crawl), "-o", str(out), "--format",
                                      "jsonl", "--url-rules", str(out / "gamma.example.jsonl.gz")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"warcdeboil: error: {out / 'gamma.example.jsonl.gz'}: --url-rules would overwrite the "
        f"output {out / 'gamma.example.jsonl.gz'}"]
    assert not (out / "gamma.example.jsonl.gz").exists()


def test_dedup_off_refused(rules_crawl: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["clean", str(rules_crawl), "-o", str(tmp_path / "out"),
                                      "--format", "jsonl", "--dedup", "off", "--url-rules",
                                      str(tmp_path / "rules.json")])
    assert result.exit_code == 2
    assert "--url-rules" in result.output and "--dedup off" in result.output
    assert not (tmp_path / "rules.json").exists() and not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match="--dedup off"):
        Options(dedup=DedupMode.OFF, url_rules="rules.json")


def test_cli_json_summary(rules_crawl: Path, tmp_path: Path) -> None:
    target = tmp_path / "rules.json"
    result = CliRunner().invoke(app, ["clean", str(rules_crawl), "-o", str(tmp_path / "out"),
                                      "--format", "jsonl", "--url-rules", str(target), "--json",
                                      "-q"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["url_rules"]["path"] == str(target)
    assert summary["url_rules"]["sites"] == 3
    assert UrlRules.load(target).canonical(_url("beta.example", 2, "&utm_source=feed")) == _url(
        "beta.example", 2)


def _outputs(out: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted(out.iterdir())}


def test_resume_writes_rules_a_finished_run_lacks(rules_crawl: Path, tmp_path: Path) -> None:
    """--resume over a WARC run whose outputs are all written, now with --url-rules: the rules
    are learned and written, and no output is written again (the rules change no byte of WARC
    output). JSONL output made without the rules lacks url_canonical: that --resume is refused,
    naming the option (see docs/outputs.md)."""
    out, target = tmp_path / "out", tmp_path / "rules.json"
    clean([rules_crawl], tmp_path / "jsonl", Options(workers=1, format=OutputFormat.JSONL))
    with pytest.raises(PlanError, match=r"--url-rules no \(this run: yes\)"):
        clean([rules_crawl], tmp_path / "jsonl",
              Options(workers=1, format=OutputFormat.JSONL, url_rules=str(target)), resume=True)
    assert not target.exists()
    clean([rules_crawl], out, Options(workers=1))
    before = _outputs(out)
    options = Options(workers=1, url_rules=str(target))
    summary = clean([rules_crawl], out, options, resume=True)
    assert summary.resumed == len(SITES) and summary.apply_files == []
    assert ("param", "utm_source") in _irrelevant(json.loads(target.read_text()), SITES[0])
    assert _outputs(out) == before
    written = target.read_bytes()
    again = clean([rules_crawl], out, options, resume=True)  # now nothing is left to do
    assert again.url_rules is None and target.read_bytes() == written


@pytest.mark.spark
def test_spark_learns_the_local_rules(spark, rules_crawl: Path, tmp_path: Path) -> None:
    from warcdeboil.spark import run_spark

    local_rules, spark_rules = tmp_path / "local.json", tmp_path / "spark.json"
    local = clean([rules_crawl], tmp_path / "local",
                  Options(workers=1, format=OutputFormat.JSONL, url_rules=str(local_rules)))
    distributed = run_spark([str(rules_crawl)], str(tmp_path / "spark"),
                            Options(workers=1, format=OutputFormat.JSONL,
                                    url_rules=str(spark_rules)), session=spark)
    assert spark_rules.read_bytes() == local_rules.read_bytes()
    assert ("param", "utm_source") in _irrelevant(json.loads(spark_rules.read_text()), SITES[1])
    for host in SITES:
        name = f"{host}.jsonl.gz"
        assert (tmp_path / "spark" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    assert {k: v for k, v in distributed.to_dict()["url_rules"].items() if k != "path"} == {
        k: v for k, v in local.to_dict()["url_rules"].items() if k != "path"}


@pytest.mark.spark
def test_spark_learns_the_local_rules_beside_warc_output(spark, rules_crawl: Path,
                                                         tmp_path: Path) -> None:
    """WARC output keeps --dedup off: the stage runs for the rules alone, on Spark too."""
    from warcdeboil.spark import run_spark

    local_rules, spark_rules = tmp_path / "local.json", tmp_path / "spark.json"
    clean([rules_crawl], tmp_path / "local",
          Options(workers=1, format=OutputFormat.WARC, url_rules=str(local_rules)))
    run_spark([str(rules_crawl)], str(tmp_path / "spark"),
              Options(workers=1, format=OutputFormat.WARC, url_rules=str(spark_rules)),
              session=spark)
    assert spark_rules.read_bytes() == local_rules.read_bytes()
    assert ("param", "utm_source") in _irrelevant(json.loads(spark_rules.read_text()), SITES[1])


@pytest.mark.spark
def test_spark_resume_writes_rules_a_finished_run_lacks(spark, rules_crawl: Path,
                                                        tmp_path: Path) -> None:
    from warcdeboil.spark import run_spark

    out, target, local_rules = tmp_path / "out", tmp_path / "rules.json", tmp_path / "local.json"
    run_spark([str(rules_crawl)], str(out), Options(workers=1), session=spark)
    before = _outputs(out)
    summary = run_spark([str(rules_crawl)], str(out), Options(workers=1, url_rules=str(target)),
                        session=spark, resume=True)
    assert summary.resumed == len(SITES) and summary.apply_files == []
    clean([rules_crawl], tmp_path / "local", Options(workers=1, url_rules=str(local_rules)))
    assert target.read_bytes() == local_rules.read_bytes()
    assert _outputs(out) == before


@pytest.mark.spark
def test_spark_refuses_overwriting_an_input(spark, rules_crawl: Path, tmp_path: Path) -> None:
    from warcdeboil.spark import run_spark

    target = rules_crawl / "beta.example.warc.gz"
    before = target.read_bytes()
    with pytest.raises(PlanError, match="--url-rules would overwrite the input"):
        run_spark([str(rules_crawl)], str(tmp_path / "spark"),
                  Options(format=OutputFormat.JSONL, url_rules=str(target)), session=spark)
    assert target.read_bytes() == before
