"""One definition of a batch's options: send_batch, preview_batch, BatchComposer and
``surveykit send`` take theirs from ``surveykit.batch._options`` and cannot drift apart."""

from __future__ import annotations

import inspect
import typing

import httpx
import pandas as pd
import pytest
import typer

import surveykit as sk
from surveykit.batch._options import (
    OPTIONS,
    BatchOptions,
    PreviewOptions,
    SendOptions,
    option_names,
    resolve,
)
from surveykit.cli import _data as _commands
from surveykit.widgets import BatchComposer
from tests.helpers.fake_platform import FakePlatform

NOT_OPTIONS = {"client", "df"}


def keyword_options(function: object) -> dict[str, inspect.Parameter]:
    params = inspect.signature(function).parameters  # type: ignore[arg-type]
    return {name: p for name, p in params.items() if name not in NOT_OPTIONS}


def typed_keys(kind: type) -> set[str]:
    # A TypedDict's annotations hold its bases' keys too.
    return set(kind.__annotations__)


def test_every_option_is_typed_defaulted_and_documented_once() -> None:
    assert set(OPTIONS) == typed_keys(SendOptions) | typed_keys(PreviewOptions)
    assert typed_keys(BatchOptions) <= typed_keys(SendOptions) & typed_keys(PreviewOptions)
    for name, option in OPTIONS.items():
        assert option.doc.strip(), name


@pytest.mark.parametrize(
    ("function", "kind"),
    [(sk.send_batch, SendOptions), (sk.preview_batch, PreviewOptions)],
    ids=["send_batch", "preview_batch"],
)
def test_signatures_and_help_come_from_the_definition(function: object, kind: type) -> None:
    params = keyword_options(function)
    assert list(params) == list(option_names(kind))
    assert set(params) == typed_keys(kind)
    for name, param in params.items():
        assert param.kind is inspect.Parameter.KEYWORD_ONLY
        assert param.default == OPTIONS[name].default or (
            param.default is inspect.Parameter.empty and name == "source"
        )
    doc = inspect.getdoc(function) or ""
    for name in params:
        first_words = " ".join(OPTIONS[name].doc.split()[:4])
        assert f"{name}: {first_words}" in " ".join(doc.split()), name


def test_unknown_and_missing_options_are_refused_like_python_does() -> None:
    with pytest.raises(
        TypeError, match="send_batch\\(\\) got an unexpected keyword argument 'concurency'"
    ):
        resolve(SendOptions, {"source": "S", "concurency": 2}, function="send_batch")
    with pytest.raises(TypeError, match="missing required keyword argument: 'source'"):
        resolve(PreviewOptions, {"message": "m"}, function="preview_batch")
    client = sk.Client(
        "https://api.example.test", "tok", transport=httpx.MockTransport(FakePlatform())
    )
    df = pd.DataFrame({"mobileNumber": ["447700900001"]})
    with pytest.raises(TypeError, match="'journal'"):
        sk.preview_batch(client, df, message="m", source="S", journal="j.sqlite")  # type: ignore[call-arg]


def command_options() -> dict[str, inspect.Parameter]:
    params = inspect.signature(_commands.send).parameters
    return {
        _commands.SEND_OPTIONS.get(name, name): p
        for name, p in params.items()
        if _commands.SEND_OPTIONS.get(name, name) in OPTIONS
    }


def test_the_send_command_offers_every_option_the_definition_gives_it() -> None:
    on_command_line = {name for name, option in OPTIONS.items() if option.cli is not None}
    given = command_options()
    assert set(given) == on_command_line
    hints = typing.get_type_hints(_commands.send, include_extras=True)
    names = {_commands.SEND_OPTIONS.get(n, n): n for n in hints}
    for name, param in given.items():
        param = param.replace(annotation=hints[names[name]])
        info = next(
            m for m in param.annotation.__metadata__ if isinstance(m, typer.models.ParameterInfo)
        )  # type: ignore[attr-defined]
        assert info.help == OPTIONS[name].cli, name
        if param.default is not inspect.Parameter.empty and name not in ("windows", "only"):
            assert param.default == OPTIONS[name].default, name


def test_the_composer_speaks_the_options_names() -> None:
    client = sk.Client(
        "https://api.example.test", "tok", transport=httpx.MockTransport(FakePlatform())
    )
    df = pd.DataFrame({"mobileNumber": ["447700900001"]})
    composer = BatchComposer(client, df, source="S", message="Hi")
    assert set(composer._options()) <= set(option_names(SendOptions))
    arguments = set(inspect.signature(BatchComposer).parameters) - NOT_OPTIONS
    assert arguments <= set(OPTIONS)
