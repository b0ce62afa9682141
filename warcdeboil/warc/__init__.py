"""The archive layer: reading and writing WARC (and ARC) files, record by record.

- :mod:`.reader` streams records with their exact offset and length (and reads one back by
  them); :mod:`.compression` and :mod:`.zstdio` are the gzip and zstd layers under it,
  :mod:`.arc` reads ARC header lines, :mod:`.boundary` finds where a record whose declared
  length does not check out really ends, :mod:`.spill` keeps a long block on disk,
  :mod:`.remote` opens local paths and URLs;
- :mod:`.httpbody` undoes an HTTP response's codings and finds its charset;
- :mod:`.writer` writes records (digests and lengths made consistent), :mod:`.recompress`
  rewrites an archive one gzip member or zstd frame per record; :mod:`.truncation` says whether
  a record's block is whole (the ``WARC-Truncated`` reason every output gives one that is not);
- :mod:`.tally` counts every record a pass reads: cleaned, carried, skipped, and problems by
  reason; :mod:`.fields` and :mod:`.names` are small helpers for header fields and file names.

Nothing here knows about HTML, sites or runs.
"""
