"""Running a job on one machine: the plan, the two passes over each input, the local engine.

- :mod:`.options` is what a run is asked (:class:`~.options.Options`), :mod:`.summary` what it
  did; :mod:`.plan` checks every input and output before the first record is read, and
  :mod:`.selection` picks records from an existing index (CDX, CDXJ, Common Crawl's Parquet);
  :mod:`.madewith` records beside each output the options that shaped it, and refuses a
  ``--resume`` that would keep one made with others;
- :mod:`.scan` is pass 1 over one input, :mod:`.apply` pass 2 over one input;
- :mod:`.local` runs the stages over many inputs (index, fit, the crawl-level stages, apply) with
  :mod:`.pool`'s worker processes; :mod:`.meter` reports progress, :mod:`.signals` stops a run
  cleanly on SIGTERM or SIGINT.

The Spark engine (:mod:`warcdeboil.spark`) runs the same per-input functions on a cluster.
"""
