"""The survey report layer: codebooks, value labels, banner tables, SPSS, Stata and Excel files.

Example:
    >>> import surveykit as sk
    >>> df = client.surveys.results("CSAT-SMS-2026")            # doctest: +SKIP
    >>> codebook = sk.Codebook.infer(df)                         # doctest: +SKIP
    >>> labelled = sk.label(df, codebook)                        # doctest: +SKIP
    >>> sk.to_spss(labelled, "results.sav")                      # doctest: +SKIP
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit.errors import CodebookError, ExportError, LabelError
    from surveykit.report._banner import Banner, banner
    from surveykit.report._build import Report, build_report
    from surveykit.report._codebook import Codebook
    from surveykit.report._excel import to_excel
    from surveykit.report._export import to_spss, to_stata
    from surveykit.report._frozen import CoercedAnswers, RowReasons
    from surveykit.report._label import label
    from surveykit.report._question import KINDS, Question, QuestionKind

# Each name is imported from its module on first use (PEP 562), so that importing a
# light module of this package does not load the heavy ones (pandas, lxml, ...).
_LAZY: dict[str, str] = {
    "Banner": "surveykit.report._banner",
    "banner": "surveykit.report._banner",
    "Report": "surveykit.report._build",
    "build_report": "surveykit.report._build",
    "KINDS": "surveykit.report._question",
    "Codebook": "surveykit.report._codebook",
    "Question": "surveykit.report._question",
    "QuestionKind": "surveykit.report._question",
    "CodebookError": "surveykit.errors",
    "ExportError": "surveykit.errors",
    "LabelError": "surveykit.errors",
    "to_excel": "surveykit.report._excel",
    "to_spss": "surveykit.report._export",
    "to_stata": "surveykit.report._export",
    "CoercedAnswers": "surveykit.report._frozen",
    "RowReasons": "surveykit.report._frozen",
    "label": "surveykit.report._label",
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
    "KINDS",
    "Banner",
    "Codebook",
    "CodebookError",
    "CoercedAnswers",
    "ExportError",
    "LabelError",
    "Question",
    "QuestionKind",
    "Report",
    "RowReasons",
    "banner",
    "build_report",
    "label",
    "to_excel",
    "to_spss",
    "to_stata",
]
