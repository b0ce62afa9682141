"""Parquet output: the JSONL fields of each page as typed columns, one Parquet file per input.

The columns are :data:`~warcdeboil.output.schema.FIELDS`, in their order, with the Arrow type
:func:`arrow_type` derives from each field's schema type, so a field added to the schema is a
column without a change here. A field a page's line would not have (an option's field in a run
without the option, ``markdown`` but in markdown output) is null. Every column is nullable.

========  =========================================================================
schema    Arrow (and Parquet) type
========  =========================================================================
string    ``string`` (UTF-8)
integer   ``int64``
number    ``double``
boolean   ``bool``
list      ``list<T>``
record    ``struct<…>``, its fields in the schema's order
map       ``list<struct<key: string, value: T>>``, the entries in the JSON object's order
========  =========================================================================

A JSON object of open keys (``removed``) is a list of key/value entries rather than an Arrow
``map``: that is how Parquet stores a map anyway, and Hugging Face ``datasets`` has no type for
an Arrow ``map`` column (its issue 5612), while every reader reads a list of structs.

Rows are written in row groups of at most :data:`ROW_GROUP_ROWS` rows or about
:data:`ROW_GROUP_BYTES` bytes of values, whichever comes first: a worker holds one row group's
values at most, however large its input. Columns are compressed with zstd. The file's key-value
metadata has one key, ``warcdeboil`` (as pandas and Hugging Face ``datasets`` keep theirs under
their own name), a JSON object: ``schema_version``, the software's ``version``, the input's name
(``source``) and the options a WARC output's warcinfo names (``settings``).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import json
import re
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, BinaryIO

from warcdeboil._version import __version__
from warcdeboil.errors import ConfigError
from warcdeboil.warc.compression import Codec

from .jsonl import JsonlSink
from .schema import FIELDS, SCHEMA_VERSION, Field, Type

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["METADATA_KEY", "ROW_GROUP_BYTES", "ROW_GROUP_ROWS", "ParquetSink", "arrow_name",
           "arrow_schema", "arrow_type", "check_pyarrow", "metadata"]

# A row group is flushed at this many rows, or when its strings reach this many characters,
# whichever comes first: what a worker holds above JSONL's peak (the Python values, their UTF-8
# and Arrow copies, the encoded pages) is several times the strings' size. dragnet through
# `clean -f parquet -j 1` (benchmarks/parquet.py): peak RSS 157-160 MB with 8 MiB and 10,000
# rows, 134 MB with 2 MiB and 1,000 rows (groups of ~500 pages), JSONL's 72 MB and pyarrow's
# import ~35 MB; the file 1.5 % larger (2.56 MB against 2.53). datatrove writes 1,000 rows too.
ROW_GROUP_ROWS = 1_000
ROW_GROUP_BYTES = 2 << 20
# A page's values beyond its strings (numbers, list entries), as the byte count reckons them.
_ROW_OVERHEAD = 256
# Columns worth a dictionary: few distinct values, repeated over many rows. The others (text,
# URLs, ids) are unique per page: a dictionary would cost CPU and save nothing.
_DICTIONARY_COLUMNS = ("site", "warc_file", "charset", "language", "html_lang",
                       "perplexity_bucket", "duplicate_kind")
# Min/max statistics are written for these only: the rest are long texts or nested values,
# whose statistics cost CPU and footer bytes and help no reader skip a row group.
_STATISTICS_COLUMNS = ("offset", "length", "date", "language", "language_confidence",
                       "perplexity", "html_bytes_before", "duplicate_group_size",
                       "duplicate_similarity")
_SURROGATE = re.compile("[\ud800-\udfff]")
INSTALL_HINT = "pip install 'warcdeboil[parquet]'"


def check_pyarrow(*, load: bool = False) -> None:
    """Refuse Parquet output, in one line, where pyarrow is not installed: found on the path
    (the run's options: the main process of a run with workers need not import it), or imported
    (``load``: the sink)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("pyarrow") is not None
        if found and load:
            import pyarrow.parquet  # noqa: F401
    except ImportError:
        found = False
    if not found:
        raise ConfigError(f"--format parquet needs pyarrow: {INSTALL_HINT}")


class _PandasHidden(importlib.abc.MetaPathFinder):
    """An import of pandas fails while this finder stands first (see :func:`_settle_pandas`)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas is not used to write Parquet")
        return None


def _settle_pandas() -> None:
    """pyarrow looks for pandas at its first conversion of Python values (``pa.array``) and,
    where pandas is installed, imports it for its pandas integration, which writing Parquet
    never uses: 0.17 CPU-s a process (pandas 3.1, pyarrow 26), a 71-page run's Parquet output
    +61 % over JSONL's instead of +10 %. While pandas is not imported yet, that first
    conversion is made here with pandas hidden: pyarrow notes it as absent for its implicit
    checks, and an explicit use (``Table.to_pandas``) still imports it, since pyarrow tries
    again then."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    hidden = _PandasHidden()
    sys.meta_path.insert(0, hidden)
    try:
        pa.array([], type=pa.int64())
    finally:
        sys.meta_path.remove(hidden)


def arrow_type(of: Type) -> pa.DataType:
    """The Arrow type of a schema type (see the module's table)."""
    import pyarrow as pa

    if of.kind == "string":
        return pa.string()
    if of.kind == "integer":
        return pa.int64()
    if of.kind == "number":
        return pa.float64()
    if of.kind == "boolean":
        return pa.bool_()
    if of.kind == "list":
        assert of.item is not None
        return pa.list_(arrow_type(of.item))
    if of.kind == "map":
        assert of.item is not None
        return pa.list_(pa.struct([("key", pa.string()), ("value", arrow_type(of.item))]))
    if of.kind == "record":
        return pa.struct([(name, arrow_type(t)) for name, t in of.fields])
    raise ValueError(f"unknown type {of.kind}")


def arrow_name(of: Type) -> str:
    """The Arrow type of a schema type as the documentation writes it (without pyarrow).

    >>> from warcdeboil.output.schema import integer, list_of, map_of, record, string
    >>> arrow_name(list_of(record(level=integer, text=string)))
    'list<struct<level: int64, text: string>>'
    >>> arrow_name(map_of(integer))
    'list<struct<key: string, value: int64>>'
    """
    simple = {"string": "string", "integer": "int64", "number": "double", "boolean": "bool"}
    if of.kind in simple:
        return simple[of.kind]
    if of.kind == "list":
        assert of.item is not None
        return f"list<{arrow_name(of.item)}>"
    if of.kind == "map":
        assert of.item is not None
        return f"list<struct<key: string, value: {arrow_name(of.item)}>>"
    if of.kind == "record":
        return "struct<" + ", ".join(f"{n}: {arrow_name(t)}" for n, t in of.fields) + ">"
    raise ValueError(f"unknown type {of.kind}")


METADATA_KEY = b"warcdeboil"


def metadata(source: str, settings: Iterable[tuple[str, str]]) -> dict[bytes, bytes]:
    """The key-value metadata of one output: schema version, software, input, settings.

    >>> said = json.loads(metadata("a.warc.gz", [("mode", "content")])[METADATA_KEY])
    >>> said["source"], said["settings"], said["schema_version"] == SCHEMA_VERSION
    ('a.warc.gz', {'mode': 'content'}, True)
    """
    said = {"schema_version": SCHEMA_VERSION, "version": __version__, "source": source,
            "settings": dict(settings)}
    return {METADATA_KEY: json.dumps(said, ensure_ascii=False).encode("utf-8")}


def arrow_schema(fields: Iterable[Field] = FIELDS,
                 meta: Mapping[bytes, bytes] | None = None) -> pa.Schema:
    """The Parquet file's schema: one nullable column per field, in the fields' order."""
    import pyarrow as pa

    return pa.schema([pa.field(f.name, arrow_type(f.type)) for f in fields], metadata=meta)


def _has_map(of: Type) -> bool:
    if of.kind == "map":
        return True
    if of.item is not None and _has_map(of.item):
        return True
    return any(_has_map(t) for _, t in of.fields)


def _entries(value: Any, of: Type) -> Any:
    """A value with every JSON object of a map type made a list of (key, value) entries."""
    if value is None:
        return None
    if of.kind == "map":
        assert of.item is not None
        if _has_map(of.item):
            return [(k, _entries(v, of.item)) for k, v in value.items()]
        return list(value.items())
    if of.kind == "list":
        assert of.item is not None
        return [_entries(v, of.item) for v in value]
    if of.kind == "record":
        return {name: _entries(value.get(name), t) for name, t in of.fields}
    return value


def _valid_utf8(value: Any) -> Any:
    """A value with each lone surrogate (bytes of a header that were not UTF-8, which Python
    holds as surrogates) written U+FFFD: Parquet strings are UTF-8, JSONL writes them as they
    are."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, tuple):  # a map's (key, value) entry
        return tuple(_valid_utf8(v) for v in value)
    if isinstance(value, list):
        return [_valid_utf8(v) for v in value]
    if isinstance(value, dict):
        return {k: _valid_utf8(v) for k, v in value.items()}
    return value


class ParquetSink(JsonlSink):
    """The objects JSONL output writes, as the rows of one Parquet file (written on ``out``).

    ``settings``: the options named in the file's metadata; the other keywords are
    :class:`~warcdeboil.output.jsonl.JsonlSink`'s."""

    def __init__(self, out: BinaryIO, codec: Codec, source_path: str, *,
                 settings: Iterable[tuple[str, str]] = (), row_group_rows: int | None = None,
                 row_group_bytes: int | None = None, **kwargs: Any) -> None:
        super().__init__(out, Codec.NONE, source_path, **kwargs)  # compressed inside the file
        check_pyarrow(load=True)
        _settle_pandas()
        import pyarrow.parquet as pq

        self._types = [(f.name, f.type) for f in FIELDS]
        self._schema = arrow_schema(FIELDS, metadata(self._warc_file, settings))
        names = set(self._schema.names)
        self._writer = pq.ParquetWriter(
            out, self._schema, compression="zstd",
            use_dictionary=[n for n in _DICTIONARY_COLUMNS if n in names],
            write_statistics=[n for n in _STATISTICS_COLUMNS if n in names],
        )
        self._columns: dict[str, list[Any]] = {name: [] for name in self._schema.names}
        self._max_rows = row_group_rows or ROW_GROUP_ROWS
        self._max_bytes = row_group_bytes or ROW_GROUP_BYTES
        self._rows = self._bytes = 0

    def _write(self, obj: dict[str, object]) -> None:
        columns = self._columns
        if not obj.keys() <= columns.keys():
            raise ValueError(f"fields missing from schema.FIELDS: {sorted(obj.keys() - columns)}")
        size = _ROW_OVERHEAD
        for name, column in columns.items():
            value = obj.get(name)
            column.append(value)
            if isinstance(value, str):
                size += len(value)
        self._rows += 1
        self._bytes += size
        if self._rows >= self._max_rows or self._bytes >= self._max_bytes:
            self._flush()

    def _flush(self) -> None:
        """Write the rows held as one row group."""
        if not self._rows:
            return
        import pyarrow as pa

        arrays = []
        for (name, of), field in zip(self._types, self._schema, strict=True):
            column = values = self._columns[name]
            if _has_map(of):
                values = [_entries(v, of) for v in values]
            try:
                arrays.append(pa.array(values, type=field.type))
            except UnicodeEncodeError:
                arrays.append(pa.array([_valid_utf8(v) for v in values], type=field.type))
            column.clear()
        self._writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=self._schema))
        self._rows = self._bytes = 0

    def close(self) -> None:
        self._flush()
        self._writer.close()  # the footer; ``out`` itself is closed by its owner

    def discard(self) -> None:
        """The output will not be kept: the writer is closed now, while ``out`` is open, rather
        than by the garbage collector, on a file closed by then."""
        for column in self._columns.values():
            column.clear()
        with contextlib.suppress(OSError, ValueError):  # a full disk: the file goes anyway
            self._writer.close()
