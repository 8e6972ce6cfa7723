"""The public face: ``surveykit.__all__`` is exactly what users can import, and is documented."""

from __future__ import annotations

import inspect

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


def test_doctor_and_lookup_failed_error_are_public() -> None:
    from surveykit import _doctor, errors

    assert sk.doctor is _doctor.doctor and "doctor" in sk.__all__
    assert sk.LookupFailedError is errors.LookupFailedError
    assert issubclass(sk.LookupFailedError, sk.BadRequestError)
