"""The quality filters' parameters, and reading them from a TOML file.

A file has one table a filter, each key one of the filter's parameters; what it leaves out
keeps its default (the published value)::

    [gopher_quality]
    min_words = 30
    stop_words_by_language = { de = ["der", "die", "und", "in", "den", "von", "zu", "das"] }

    [fineweb_quality]
    max_char_dup_ratio = 0.1

A key no filter has, or a value of the wrong type, is a :class:`~warcdeboil.errors.ConfigError`
whose one line names the key.
"""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .c4 import C4Quality
from .fineweb import FineWebQuality
from .gopher import GopherQuality, GopherRepetition

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, from PyPI
    import tomli as tomllib

__all__ = ["QualityConfig", "config_from_mapping", "load_config"]


@dataclass(frozen=True)
class QualityConfig:
    """The parameters of every filter."""

    gopher_quality: GopherQuality = field(default_factory=GopherQuality)
    gopher_repetition: GopherRepetition = field(default_factory=GopherRepetition)
    c4_quality: C4Quality = field(default_factory=C4Quality)
    fineweb_quality: FineWebQuality = field(default_factory=FineWebQuality)


def load_config(path: str | Path) -> QualityConfig:
    """The parameters a TOML file sets, the defaults for the rest."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the quality config: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not a TOML file: {exc}") from None
    return config_from_mapping(data, str(path))


def config_from_mapping(data: Mapping[str, Any], source: str = "quality config") -> QualityConfig:
    """The parameters a mapping sets (a TOML file's tables, read), checked as ``load_config``
    checks them; ``source`` names it in errors."""
    config = QualityConfig()
    filters = {f.name: f for f in fields(QualityConfig)}
    for name, table in data.items():
        if name not in filters:
            raise ConfigError(f"{source}: unknown filter [{name}] (the filters are "
                              f"{', '.join(filters)})")
        if not isinstance(table, Mapping):
            raise ConfigError(f"{source}: {name} must be a table of parameters ([{name}])")
        params = getattr(config, name)
        hints = typing.get_type_hints(type(params))
        changes = {}
        for key, value in table.items():
            if key not in hints:
                raise ConfigError(f"{source}: unknown key {name}.{key} (the keys of [{name}] "
                                  f"are {', '.join(hints)})")
            changes[key] = _checked(value, hints[key], f"{source}: {name}.{key}")
        config = replace(config, **{name: replace(params, **changes)})
    return config


def _checked(value: Any, kind: Any, where: str) -> Any:
    """``value`` as a parameter of type ``kind``, or a ConfigError naming ``where``."""
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where} must be true or false, not {value!r}")
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        raise ConfigError(f"{where} must be a whole number >= 0, not {value!r}")
    if kind is float:
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return float(value)
        raise ConfigError(f"{where} must be a number >= 0, not {value!r}")
    if kind is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{where} must be a string, not {value!r}")
    origin = typing.get_origin(kind)
    if origin is tuple:
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return tuple(value)
        raise ConfigError(f"{where} must be a list of strings, not {value!r}")
    if origin in (Mapping, dict, types.MappingProxyType) or origin is typing.get_origin(Mapping):
        if isinstance(value, Mapping):
            value_kind = typing.get_args(kind)[1]
            return {str(k): _checked(v, value_kind, f"{where}.{k}") for k, v in value.items()}
        raise ConfigError(f"{where} must be a table, not {value!r}")
    raise TypeError(f"no check for parameters of type {kind!r}")  # a new parameter's type
