"""What pass 2 writes: one output per input, in the input's record order.

- :mod:`.formats` names the formats (warc, text, jsonl, markdown) and what each needs of a page;
- :mod:`.sink` is the interface every format implements, fed every record in order;
  :mod:`.warc`, :mod:`.wet` and :mod:`.jsonl` are the formats, and :mod:`.scoring` puts the
  language model's filters in front of a text output;
- :mod:`.schema` is the table of JSONL fields (the documentation's field reference);
- :mod:`.provenance` gives cleaned records their ids, each output its warcinfo, and revisits
  their new originals; :mod:`.relink` settles revisits across outputs once all are written.
"""
