"""The site model: which site a page belongs to, and the template learned from its pages.

- :mod:`.sitekey` says which site a URL belongs to and orders its pages;
- :mod:`.index` is pass 1's index, sorted by site and URL with bounded memory, and
  :mod:`.pagestore` what pass 1 keeps of every page for the later stages;
- :mod:`.fit` learns a site's template from its pages in URL order, and :mod:`.profiles`
  stores the fitted profiles on disk;
- :mod:`.clean` applies a profile to one page (template or content mode).
"""
