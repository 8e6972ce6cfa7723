"""The public face: ``surveykit.__all__`` is exactly what users can import, and is documented."""

from __future__ import annotations

import inspect

import pytest

import surveykit as sk


def test_all_is_exactly_the_public_names() -> None:
    listed = set(sk.__all__)
    assert len(sk.__all__) == len(listed), "no duplicates in __all__"
    for name in sk.__all__:
        assert hasattr(sk, name), name  # lazy modules (plots, widgets) load here
    public = {name for name in vars(sk) if not name.startswith("_")} | {"__version__"}
    # Subpackages imported as a side effect of importing surveykit are not API unless listed.
    modules = {name for name in public if inspect.ismodule(getattr(sk, name))}
    assert public - modules <= listed, "every public name is listed"
    assert listed - public == set(), "every listed name can be imported"


def test_public_names_have_docstrings() -> None:
    for name in sk.__all__:
        obj = getattr(sk, name)
        if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismodule(obj):
            assert inspect.getdoc(obj), f"{name} has no docstring"


def test_every_endpoint_method_is_documented() -> None:
    client = sk.Client("https://api.example.test", "t")
    groups = ["data", "keywords", "messages", "surveys", "tinyurl", "webhooks"]
    for group in groups:
        resource = getattr(client, group)
        methods = [n for n in dir(type(resource)) if not n.startswith("_")]
        assert methods, group
        for name in methods:
            assert inspect.getdoc(getattr(resource, name)), f"{group}.{name}"


def test_client_methods_show_their_parameters() -> None:
    client = sk.Client("https://api.example.test", "t")
    signature = inspect.signature(client.messages.send)
    assert list(signature.parameters)[:5] == [
        "request",
        "destination",
        "source",
        "message",
        "reply",
    ]
    assert "self" not in signature.parameters
    assert client.messages.send.__qualname__ == "Messages.send"
    assert "survey_reference" in inspect.signature(client.surveys.results).parameters


def test_plots_and_widgets_load_on_first_use() -> None:
    import subprocess
    import sys

    code = (
        "import sys, surveykit as sk; assert 'matplotlib' not in sys.modules; "
        "assert callable(sk.plots.plot_funnel); assert sk.widgets.BatchComposer; "
        "print('ok')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "ok", result.stderr


def test_campaign_loop_names_are_the_campaign_package_objects() -> None:
    from surveykit import campaign

    assert sk.campaign_status is campaign.campaign_status
    assert sk.plan_reminders is campaign.plan_reminders
    assert sk.OptOutList is campaign.OptOutList
    assert {"campaign_status", "plan_reminders", "OptOutList"} <= set(sk.__all__)


HEAVY = (
    "starlette",
    "uvicorn",
    "aiohttp",
    "lxml",
    "matplotlib",
    "ipywidgets",
    "scipy",
    "statsmodels",
    "pyreadstat",
    "openpyxl",
)
"""What `import surveykit` must not load: servers, aiohttp, parsers and plotting for later."""

CORE = (
    "Client",
    "AsyncClient",
    "read_results",
    "build_import_list",
    "import_frame",
    "send_batch",
    "preview_batch",
    "lookup_frame",
    "sync_results",
    "campaign_funnel",
    "callback_signature",
    "models",
)
"""Names a notebook touches first; touching them loads no server, aiohttp, lxml or plots."""


def _loaded_after(code: str) -> list[str]:
    import json
    import subprocess
    import sys

    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    loaded: list[str] = json.loads(result.stdout.splitlines()[-1])
    return loaded


def _heavy(loaded: list[str]) -> list[str]:
    return [name for name in loaded if name.split(".")[0] in HEAVY]


def test_import_surveykit_loads_no_heavy_module() -> None:
    loaded = _loaded_after("import surveykit")
    assert "surveykit" in loaded
    assert _heavy(loaded) == []
    # Only the exception classes are loaded: not even pandas, httpx or pydantic.
    assert [name for name in loaded if name.split(".")[0] in ("pandas", "httpx", "pydantic")] == []


def test_the_core_names_load_no_server_parser_or_plot() -> None:
    touch = "; ".join(f"sk.{name}" for name in CORE)
    loaded = _loaded_after(f"import surveykit as sk; {touch}")
    assert _heavy(loaded) == []


def test_a_client_without_results_needs_no_pandas() -> None:
    loaded = _loaded_after("import surveykit as sk; sk.Client('https://api.example.test', 't')")
    assert "pandas" not in loaded and _heavy(loaded) == []


@pytest.mark.parametrize(
    ("name", "module"),
    [("Sandbox", "starlette"), ("listen", "uvicorn"), ("Receiver", "starlette")],
)
def test_server_names_load_their_server_on_first_use(name: str, module: str) -> None:
    before = _loaded_after("import surveykit as sk")
    after = _loaded_after(f"import surveykit as sk; sk.{name}")
    assert module not in before and module in after


def test_command_line_help_loads_no_data_or_server_library() -> None:
    loaded = _loaded_after(
        "import contextlib, io, surveykit.cli as cli\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    cli.main(['--help'])"
    )
    assert "surveykit.cli" in loaded
    unwanted = {"pandas", "pyarrow", "numpy", "httpx", "pydantic", *HEAVY}
    assert [name for name in loaded if name.split(".")[0] in unwanted] == []


def test_lazy_names_are_the_objects_of_their_modules() -> None:
    import surveykit.batch
    import surveykit.callbacks
    import surveykit.client
    import surveykit.respondents
    import surveykit.results
    import surveykit.sandbox

    assert sk.Client is surveykit.client.Client
    assert sk.Sandbox is surveykit.sandbox.Sandbox
    assert sk.listen is surveykit.callbacks.listen
    assert sk.Receiver is surveykit.callbacks.Receiver
    assert sk.BatchInterrupted is surveykit.batch.BatchInterrupted
    assert sk.read_results is surveykit.results.read_results
    assert sk.ImportStoppedError is surveykit.respondents.ImportStoppedError
    assert set(sk.__all__) <= set(dir(sk))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sk.nope  # noqa: B018


def test_doctor_and_lookup_failed_error_are_public() -> None:
    from surveykit import errors
    from surveykit._doctor import _checks as _doctor

    assert sk.doctor is _doctor.doctor and "doctor" in sk.__all__
    assert sk.LookupFailedError is errors.LookupFailedError
    assert issubclass(sk.LookupFailedError, sk.BadRequestError)


def test_the_analysis_package_loads_scipy_only_when_a_figure_needs_it() -> None:
    """sk.Design and sk.analysis are reached without paying for scipy's import."""
    code = (
        "import sys, surveykit as sk; sk.Design; sk.analysis.regress; sk.analysis.quantiles; "
        "sk.analysis.ReplicateDesign; assert 'scipy' not in sys.modules, 'scipy loaded'"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def _all_modules() -> list[str]:
    import pkgutil

    return [
        info.name
        for info in pkgutil.walk_packages(sk.__path__, "surveykit.")
        if ".sample_data" not in info.name
    ]


def test_every_public_exception_is_in_errors_and_exported() -> None:
    import importlib

    from surveykit import errors

    for name in _all_modules():
        importlib.import_module(name)
    defined = {
        cls
        for cls in _subclasses(sk.SurveykitError) | _subclasses(KeyboardInterrupt)
        if cls.__module__.startswith("surveykit")
    }
    assert {cls.__module__ for cls in defined} == {"surveykit.errors"}
    for cls in defined:
        assert getattr(sk, cls.__name__) is cls, cls.__name__
        assert cls.__name__ in sk.__all__ and cls.__name__ in errors.__all__
    assert sk.AnalysisInputError is errors.AnalysisInputError


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _subclasses(sub)
    return found


def test_control_flow_exceptions_are_not_surveykit_errors() -> None:
    from surveykit.cli._support import CommandError
    from surveykit.sandbox.state._errors import Rejection

    for internal in (CommandError, Rejection):
        assert not issubclass(internal, sk.SurveykitError), internal
        assert internal.__name__ not in sk.__all__
