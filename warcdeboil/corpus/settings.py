"""What a run is asked to do with the quality filters (``--quality-filters``,
``--quality-config``, ``--drop-flagged``, ``--excluded``): the filters chosen, their
parameters, and whether flagged pages are left out of the outputs."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

from ..errors import ConfigError
from .config import QualityConfig, load_config
from .filters import QualityFilters, filter_names

__all__ = ["QualitySettings", "quality_settings"]


@dataclass(frozen=True)
class QualitySettings:
    """The filters a run computes (in :data:`~.filters.FILTERS`' order), their parameters;
    ``drop``: flagged pages are left out of the outputs; ``excluded``: where the run lists
    them (a local path, written by the driver)."""

    names: tuple[str, ...]
    config: QualityConfig = field(default_factory=QualityConfig)
    drop: bool = False
    excluded: str | None = None

    def filters(self) -> QualityFilters:
        return QualityFilters(self.config, self.names)

    def config_digest(self) -> str:
        """The parameters as one digest: a run's record of its options names it, so that
        ``--resume`` refuses outputs flagged with other parameters."""
        text = json.dumps(asdict(self.config), sort_keys=True, ensure_ascii=False)
        return "sha1:" + hashlib.sha1(text.encode("utf-8")).hexdigest()

    def record_values(self) -> list[tuple[str, str]]:
        """What the record of an output's options says of the filters (see
        :mod:`warcdeboil.run.madewith`); the excluded list is no part of an output."""
        return [("quality-filters", ",".join(self.names)),
                ("quality-config", self.config_digest()),
                ("drop-flagged", "yes" if self.drop else "no")]


def quality_settings(names: str | None, config: str | None = None, drop: bool = False,
                     excluded: str | None = None) -> QualitySettings | None:
    """The settings of the options as given (None without ``names``); a ConfigError of one
    line for an unknown filter, a bad config file, or an option that needs another."""
    if names is None:
        for given, option in ((config is not None, "--quality-config"),
                              (drop, "--drop-flagged"), (excluded is not None, "--excluded")):
            if given:
                raise ConfigError(f"{option} needs --quality-filters (all or NAME,...)")
        return None
    if excluded is not None and not drop:
        raise ConfigError("--excluded lists the pages --drop-flagged leaves out: give both")
    chosen = filter_names(names)
    parameters = load_config(config) if config is not None else QualityConfig()
    return QualitySettings(chosen, parameters, drop, excluded)
