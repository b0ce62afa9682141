"""A report a person can read: what a run removed, site by site and page by page.

:func:`build_report` writes a static HTML site (``index.html``, one page per site, a sample of
pages with each removed block struck in place) that opens from ``file://`` with no server and no
network: charts are inline SVG. Its figures are gathered in one streaming pass over the run's pages
(:mod:`.collect`), its samples re-read and rendered one at a time (:mod:`.render`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from warcdeboil.errors import ConfigError, WorkDirError
from warcdeboil.output.formats import OutputFormat, needs_structure
from warcdeboil.page.content import load_model
from warcdeboil.page.favor import Favor, as_favor
from warcdeboil.run.local import PROFILES_META, RUN_META
from warcdeboil.site.clean import Mode
from warcdeboil.site.sitekey import SiteKeyMode

from .annotate import annotate
from .collect import ArchivePages, PageSource, Profiles, SampleRef, StorePages, collect, site_keyer
from .render import STYLESHEET, write_index, write_sample, write_site, write_stylesheet

__all__ = ["RUN_META", "ArchivePages", "StorePages", "build_report", "report_work_dir"]


def _prepare(out: Path) -> None:
    """Make ``out`` ready for a report: created, or a former report whose pages are replaced;
    a directory holding anything else is refused (nothing the user has is deleted)."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out}: not a directory")
    if out.exists() and any(out.iterdir()) and not (out / STYLESHEET).exists():
        raise ConfigError(f"{out}: not empty and not a report: choose another directory")
    for name in ("sites", "pages"):
        shutil.rmtree(out / name, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)


def build_report(
    source: PageSource, out: Path, profiles_dir: Path | None, mode: Mode,
    summary: dict[str, Any] | None = None, site_key: SiteKeyMode | None = None,
    workers: int = 1, *, favor: Favor = Favor.BALANCED, drop_headline: bool = False,
) -> Path:
    """Write the report of the pages of ``source`` cleaned with the profiles in
    ``profiles_dir`` to ``out``; returns the path of its index. ``workers`` processes share
    the inputs; the report is the same for any number. ``favor``, ``drop_headline``: content
    mode's choices (--favor, --drop-headline)."""
    _prepare(out)
    data = collect(source, profiles_dir, mode, summary, site_key, workers, favor=favor,
                   drop_headline=drop_headline)
    write_stylesheet(out)
    shown = [site for site in data.sites if site.has_page]
    wanted: dict[int, list[SampleRef]] = {}
    place: dict[tuple[int, int], tuple[str, int]] = {}
    for site in shown:
        for k, ref in enumerate(site.sample_refs):
            wanted.setdefault(ref.file, []).append(ref)
            place[(ref.file, ref.offset)] = (site.site, k)
    urls: dict[str, dict[int, str]] = {}
    profiles = Profiles(profiles_dir)
    keyer = site_keyer(site_key, profiles, source)
    model = load_model() if mode is Mode.CONTENT else None
    try:
        for i, entry in source.pages_at(wanted):
            found = place.pop((i, entry.offset), None)
            if found is None:
                continue
            name, k = found
            profile = profiles.get(name) if keyer(entry.url) == name and name else None
            write_sample(name, k, entry.url, entry.page.title,
                         annotate(entry.page, profile, mode, model, entry.url, favor=favor,
                                  drop_headline=drop_headline), out)
            urls.setdefault(name, {})[k] = entry.url
    finally:
        profiles.close()
    for site in shown:
        samples = urls.get(site.site, {})
        write_site(site, [samples[k] for k in sorted(samples)], out)
    return write_index(data, out)


def report_work_dir(
    work_dir: Path, out: Path, *, profiles_dir: Path | None = None, mode: Mode | None = None,
    workers: int = 1, favor: Favor | None = None,
) -> Path:
    """The report of a kept work directory (``clean --work-dir`` or ``--keep-work-dir``, or
    ``index`` then ``fit``): its page stores, its profiles, and what its run said of itself:
    its mode, --favor and --drop-headline (``mode`` and ``favor`` given instead when not
    None)."""
    run: dict[str, Any] = {}
    meta = work_dir / RUN_META
    if meta.exists():
        try:
            run = dict(json.loads(meta.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise WorkDirError(f"{meta}: unreadable ({exc})") from exc
    chosen = mode or Mode(run.get("mode", Mode.TEMPLATE.value))
    if favor not in (None, Favor.BALANCED) and chosen is not Mode.CONTENT:
        raise ConfigError("--favor chooses what content mode keeps of a page: this report is in "
                          "template mode (give --mode content)")
    profiles = profiles_dir or work_dir / "profiles"
    # The pages as the run's outputs read them (a WARC run's duplicate stage stores them with
    # structure marks its outputs do not use); with structure marks for content mode.
    structure = "format" not in run or needs_structure(OutputFormat(run["format"]), chosen)
    pages = StorePages(work_dir, structure)  # a work directory without an index is refused first
    if not (profiles / PROFILES_META).is_file():
        # Without profiles every page would look untouched ("100 % kept"): say what is missing.
        raise WorkDirError(
            f"{profiles}: no site profiles (the fit did not run, or did not finish): run "
            f"`warcdeboil fit --work-dir {work_dir} --profiles {profiles}`, or give --profiles")
    if favor is None:
        try:
            favor = as_favor(run.get("favor", Favor.BALANCED.value))
        except ConfigError as exc:
            raise WorkDirError(f"{meta}: {exc}") from None
    return build_report(pages, out, profiles, chosen, run.get("summary"), workers=workers,
                        favor=favor,
                        drop_headline=chosen is Mode.CONTENT and bool(run.get("drop_headline")))
