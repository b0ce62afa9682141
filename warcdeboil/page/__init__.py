"""One page: from a record's payload to its text, blocks and language.

- :mod:`.html` finds the HTML pages among the records and decodes them for the parser;
- :mod:`.dom` parses a page once (lexbor, through selectolax) into marked text and the hashes
  of its candidate subtrees, and removes what a site profile names;
- :mod:`.content` splits the marked text into blocks and judges which are main content (the
  weights in ``content_model.json``); :mod:`.copies` finds the kept blocks that copy text kept
  before them;
- :mod:`.markdown` writes the kept blocks as Markdown; :mod:`.language` identifies the text's
  language.

A page is judged here on its own; what its site repeats is learned in :mod:`warcdeboil.site`.
"""
