"""The survey report layer: codebooks, value labels, and SPSS, Stata and Excel files.

Example:
    >>> import surveykit as sk
    >>> df = client.surveys.results("CSAT-SMS-2026")            # doctest: +SKIP
    >>> codebook = sk.Codebook.infer(df)                         # doctest: +SKIP
    >>> labelled = sk.label(df, codebook)                        # doctest: +SKIP
    >>> sk.to_spss(labelled, "results.sav")                      # doctest: +SKIP
"""

from surveykit.report._codebook import KINDS, Codebook, Question, QuestionKind
from surveykit.report._errors import CodebookError, ExportError, LabelError
from surveykit.report._excel import to_excel
from surveykit.report._export import to_spss, to_stata
from surveykit.report._frozen import CoercedAnswers, RowReasons
from surveykit.report._label import label

__all__ = [
    "KINDS",
    "Codebook",
    "CodebookError",
    "CoercedAnswers",
    "ExportError",
    "LabelError",
    "Question",
    "QuestionKind",
    "RowReasons",
    "label",
    "to_excel",
    "to_spss",
    "to_stata",
]
