"""Read-only checks of a live platform's answers and layouts (``sk.doctor``).

The package is private (``_doctor``): a subpackage named ``doctor`` would replace the
public function ``surveykit.doctor`` once imported, as Python binds a subpackage on its
parent. Its modules: the checks (``_checks``), the support bundle (``_bundle``), and
the comparison of two reads of one payload (``_compare``).
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from surveykit._doctor._checks import DoctorCheck, DoctorReport, doctor

# Each name is imported from its module on first use (PEP 562).
_LAZY: dict[str, str] = {
    "DoctorCheck": "surveykit._doctor._checks",
    "DoctorReport": "surveykit._doctor._checks",
    "doctor": "surveykit._doctor._checks",
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
    "DoctorCheck",
    "DoctorReport",
    "doctor",
]
