"""DataFrames to import lists, phone number normalisation, and join-back of import results.

>>> import surveykit as sk  # doctest: +SKIP
>>> plan = sk.build_import_list(df, default_region="GB")  # doctest: +SKIP
>>> plan.records[:2], plan.rejected, plan.summary  # doctest: +SKIP
"""

from surveykit.frames._import import ImportStoppedError, import_frame
from surveykit.frames._join import join_import_results
from surveykit.frames._mapping import (
    RESPONDENT_FIELDS,
    ColumnMappingError,
    infer_field,
    infer_mapping,
)
from surveykit.frames._phone import (
    PhoneNormalization,
    normalize_phone_number,
    normalize_phone_numbers,
)
from surveykit.frames._plan import ImportPlan, ImportSummary, RecordSequence, build_import_list
from surveykit.frames._values import EMAIL_PATTERN

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
