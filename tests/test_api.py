"""The public API is what __all__ says, and stays that way on purpose."""

from __future__ import annotations

import warcdeboil


def test_public_api_is_pinned() -> None:
    assert sorted(warcdeboil.__all__) == [
        "CleanPage", "Codec", "ConfigError", "Deboiler", "FitParams", "InputError",
        "LanguageModel", "Options", "OutputFormat", "PayloadError", "RandomAccessError",
        "RecordError", "RunSummary",
        "SiteKeyMode", "SiteProfile", "WarcDeboilError", "WarcRecord", "WorkDirError",
        "__version__", "apply_profiles", "build_index", "clean", "fit_profiles", "iter_records",
        "read_record_at",
    ]
    for name in warcdeboil.__all__:
        assert hasattr(warcdeboil, name)


def test_every_error_has_one_root() -> None:
    errors = [getattr(warcdeboil, n) for n in warcdeboil.__all__ if n.endswith("Error")]
    assert all(issubclass(e, warcdeboil.WarcDeboilError) for e in errors)
