"""DataFrames to import lists, phone number normalisation, and join-back of import results.

>>> import surveykit as sk  # doctest: +SKIP
>>> plan = sk.build_import_list(df, default_region="GB")  # doctest: +SKIP
>>> plan.records[:2], plan.rejected, plan.summary  # doctest: +SKIP
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit.errors import ColumnMappingError, ImportStoppedError
    from surveykit.respondents._import import import_frame
    from surveykit.respondents._join import join_import_results
    from surveykit.respondents._mapping import RESPONDENT_FIELDS, infer_field, infer_mapping
    from surveykit.respondents._numbers import (
        PhoneNormalization,
        normalize_phone_number,
        normalize_phone_numbers,
    )
    from surveykit.respondents._plan import (
        ImportPlan,
        ImportSummary,
        RecordSequence,
        build_import_list,
    )
    from surveykit.respondents._values import EMAIL_PATTERN

# Each name is imported from its module on first use (PEP 562), so that importing a
# light module of this package does not load the heavy ones (pandas, lxml, ...).
_LAZY: dict[str, str] = {
    "ImportStoppedError": "surveykit.errors",
    "import_frame": "surveykit.respondents._import",
    "join_import_results": "surveykit.respondents._join",
    "RESPONDENT_FIELDS": "surveykit.respondents._mapping",
    "ColumnMappingError": "surveykit.errors",
    "infer_field": "surveykit.respondents._mapping",
    "infer_mapping": "surveykit.respondents._mapping",
    "PhoneNormalization": "surveykit.respondents._numbers",
    "normalize_phone_number": "surveykit.respondents._numbers",
    "normalize_phone_numbers": "surveykit.respondents._numbers",
    "ImportPlan": "surveykit.respondents._plan",
    "ImportSummary": "surveykit.respondents._plan",
    "RecordSequence": "surveykit.respondents._plan",
    "build_import_list": "surveykit.respondents._plan",
    "EMAIL_PATTERN": "surveykit.respondents._values",
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(_importlib.import_module(_LAZY[name]), name)
    globals()[name] = value  # later uses find it without calling back here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "EMAIL_PATTERN",
    "RESPONDENT_FIELDS",
    "ColumnMappingError",
    "ImportPlan",
    "ImportStoppedError",
    "ImportSummary",
    "PhoneNormalization",
    "RecordSequence",
    "build_import_list",
    "import_frame",
    "infer_field",
    "infer_mapping",
    "join_import_results",
    "normalize_phone_number",
    "normalize_phone_numbers",
]
