"""URL rules learned in a ``clean`` run (``--url-rules FILE``): from the duplicate stage's
groups, one site at a time, then decided over the whole run.

Pages whose signature text is empty (all template) are left out of the observations: such a
page is alone in its group only because it has no text, which says nothing of its URL. Pages
whose URL names no site have no rules either. Both engines learn each site from its pages
ordered by URL, then by their place in the run, so they write the same rules.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from itertools import groupby
from pathlib import Path
from typing import Any

from warcdeboil.errors import PlanError
from warcdeboil.site.sitekey import SiteKeyMode

from .rules import UrlRules

__all__ = ["RULES_NAME", "check_rules_path", "learn_run", "rules_counts", "write_rules"]

# Where a run keeps the rules it learned (in its work directory), for pass 2's workers.
RULES_NAME = "urlrules.json"


def learn_run(work_dir: Path, site_key: SiteKeyMode) -> dict[str, Any]:
    """Learn the rules of the run whose work directory is ``work_dir`` (the duplicate stage
    done), save them as ``work_dir/dedup/urlrules.json``; what :func:`rules_counts` says."""
    from warcdeboil.dedup import iter_url_groups  # numpy: in a worker process only

    rules = UrlRules(site_key=site_key)
    rows = iter_url_groups(work_dir, evidence_only=True)
    for site, items in groupby(rows, key=lambda row: row[0]):
        if site:
            rules.learn_site(site, ((url, group) for _, url, group in items))
    rules.decide()
    rules.save(rules_path(work_dir))
    return rules_counts(rules)


def rules_path(work_dir: Path) -> Path:
    return work_dir / "dedup" / RULES_NAME


def rules_counts(rules: UrlRules) -> dict[str, Any]:
    """The summary's numbers: sites learned, rules (irrelevant components) applied on them
    (the site's own and crawl-level ones that reached it), and crawl-level rules."""
    sites = rules.sites()
    data = rules.to_json()
    crawl = sum(1 for rule in data["crawl"]["rules"] if rule["decision"] == "irrelevant")
    return {"sites": len(sites), "rules": sum(len(rules.irrelevant(site)) for site in sites),
            "crawl_rules": crawl}


def check_rules_path(target: str | os.PathLike[str], inputs: Iterable[str],
                     outputs: Iterable[str], out_dir: str | None) -> None:
    """Refuse, in one line (a :class:`PlanError`: exit status 2), a rules file that would
    overwrite an input or an output of the run, or a file the run writes in its output
    directory (an output's part file, the writability check)."""
    real = os.path.realpath(target)
    for path in inputs:
        if os.path.realpath(path) == real:
            raise PlanError(f"{os.fspath(target)}: --url-rules would overwrite the input {path}")
    for path in outputs:
        output = os.path.realpath(path)
        if real == output or (os.path.dirname(real) == os.path.dirname(output)
                              and os.path.basename(real).startswith(
                                  f".{os.path.basename(output)}.")):
            raise PlanError(f"{os.fspath(target)}: --url-rules would overwrite the output {path}")
    if out_dir is not None and os.path.dirname(real) == os.path.realpath(out_dir) and \
            os.path.basename(real).startswith(".warcdeboil-"):
        raise PlanError(f"{os.fspath(target)}: --url-rules names a file the run writes in "
                        f"its output directory {out_dir}")


def write_rules(text: str, target: str | os.PathLike[str]) -> None:
    """``text`` (the rules' JSON) to ``target`` atomically: a part file beside it, renamed."""
    path = Path(target)
    part = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        part.write_text(text, encoding="utf-8")
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
