"""Functions that take a sync or an async client and answer in kind.

``@returns(BatchResult)`` over a function whose first argument is a client gives it two
typed faces: with a :class:`~surveykit.Client` it returns the value, with an
:class:`~surveykit.AsyncClient` an awaitable of it. The keyword signature stays visible to
type checkers and IDEs.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

if TYPE_CHECKING:
    from surveykit.client import AsyncClient, Client

P = ParamSpec("P")
T = TypeVar("T")


class DualFunction(Generic[P, T]):
    """A function of a client that returns ``T`` for a sync client, an awaitable for async."""

    def __init__(self, fn: Callable[Concatenate[Any, P], Any]) -> None:
        self._fn = fn
        functools.update_wrapper(self, fn)

    @overload
    def __call__(self, client: Client, /, *args: P.args, **kwargs: P.kwargs) -> T: ...
    @overload
    def __call__(
        self, client: AsyncClient, /, *args: P.args, **kwargs: P.kwargs
    ) -> Awaitable[T]: ...
    def __call__(self, client: Any, /, *args: Any, **kwargs: Any) -> Any:
        return self._fn(client, *args, **kwargs)


def returns(
    result: type[T],
) -> Callable[[Callable[Concatenate[Any, P], Any]], DualFunction[P, T]]:
    """Declare what a client function returns (see the module docstring)."""

    def wrap(fn: Callable[Concatenate[Any, P], Any]) -> DualFunction[P, T]:
        return DualFunction(fn)

    return wrap
