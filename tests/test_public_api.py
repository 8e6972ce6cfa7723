"""The public face: ``surveykit.__all__`` is exactly what users can import, and is documented."""

from __future__ import annotations

import inspect

import surveykit as sk


def test_all_is_exactly_the_public_names() -> None:
    public = {name for name in vars(sk) if not name.startswith("_")} | {"__version__"}
    # Subpackages imported as a side effect of importing surveykit are not API unless listed.
    modules = {name for name in public if inspect.ismodule(getattr(sk, name))}
    listed = set(sk.__all__)
    assert listed == (public - modules) | (listed & modules)
    for name in sk.__all__:
        assert hasattr(sk, name), name
    assert len(sk.__all__) == len(listed), "no duplicates in __all__"


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
