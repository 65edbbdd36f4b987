"""The SDK's edge: what an application hands a public method is checked there, and nothing but learnloop's own
errors comes back.

`@sdk_edge` on a facade class (`Loop`, `loop.tools`, `loop.agent`) wraps each public coroutine and async
generator method:

- every text argument, including text inside lists, mappings and models, is checked once by
  `learnloop.textcheck` (no lone surrogates, NUL or control characters): a `ValidationError` names the argument
  and the path inside it, before anything is embedded or stored;
- an error of a library underneath (pydantic, sqlite3, a recursion or Unicode error) that escapes a method is
  raised as the `LearnloopError` it amounts to, with the original chained as its cause. Errors that are bugs
  (a `TypeError` from learnloop's own code) are left as they are: hiding them would help no one.
"""

from __future__ import annotations

import functools
import inspect
import sqlite3
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

from pydantic import ValidationError as PydanticValidationError

from .errors import LearnloopError, StoreError, ValidationError
from .textcheck import check_value

__all__ = ["as_learnloop_error", "sdk_edge"]

C = TypeVar("C", bound=type)

# Arguments that are not walked here, and why: an import checks each line itself and reports the bad ones
# without refusing the good ones; vectors are numbers.
_CHECKED_ELSEWHERE = frozenset({"lines", "query_vector", "vector", "vectors"})
_MARK = "__learnloop_sdk_edge__"


def as_learnloop_error(exc: BaseException) -> LearnloopError | None:
    """The learnloop error a library error amounts to, or None for errors that are not the caller's to fix."""
    if isinstance(exc, PydanticValidationError):
        errors = exc.errors(include_url=False)
        first = errors[0] if errors else {"loc": (), "msg": str(exc)}
        where = ".".join(str(part) for part in first.get("loc", ())) or "value"
        return ValidationError(f"{where}: {first.get('msg', 'invalid')}", field=where)
    if isinstance(exc, RecursionError):
        return ValidationError("input is nested too deeply")
    if isinstance(exc, UnicodeError):
        return ValidationError(f"text is not valid Unicode: {exc}")
    if isinstance(exc, OverflowError):
        return ValidationError(f"a number is too large: {exc}")
    if isinstance(exc, sqlite3.Error):
        return StoreError(f"the database failed: {exc}")
    return None


def _argument_checker(method: Callable[..., Any]) -> Callable[[tuple[Any, ...], dict[str, Any]], None]:
    signature = inspect.signature(method)
    # Names of a plain signature (no *args or **kwargs) in order: a call then pairs its positional arguments
    # with them directly. `bind_partial` costs tens of microseconds, paid on every retrieval.
    kinds = {p.kind for p in signature.parameters.values()}
    plain = kinds <= {inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY}
    positional = [p.name for p in signature.parameters.values() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    names = set(signature.parameters)

    def arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
        if plain and len(args) <= len(positional) and names.issuperset(kwargs):
            given = dict(zip(positional, args, strict=False))
            if given.keys().isdisjoint(kwargs):
                return given | kwargs
        try:
            return dict(signature.bind_partial(*args, **kwargs).arguments)
        except TypeError:
            return None  # the call itself will say what is wrong with it

    def check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        bound = arguments(args, kwargs)
        if bound is None:
            return
        for name, value in bound.items():
            if name == "self" or name in _CHECKED_ELSEWHERE or callable(value):
                continue
            check_value(value, name)

    return check


def _coroutine(method: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Coroutine[Any, Any, Any]]:
    check = _argument_checker(method)

    @functools.wraps(method)
    async def edge(*args: Any, **kwargs: Any) -> Any:
        check(args, kwargs)
        try:
            return await method(*args, **kwargs)
        except LearnloopError:
            raise
        except Exception as exc:
            translated = as_learnloop_error(exc)
            if translated is None:
                raise
            raise translated from exc

    setattr(edge, _MARK, True)
    return edge


def _generator(method: Callable[..., AsyncIterator[Any]]) -> Callable[..., AsyncIterator[Any]]:
    check = _argument_checker(method)

    @functools.wraps(method)
    async def edge(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        check(args, kwargs)
        try:
            async for item in method(*args, **kwargs):
                yield item
        except LearnloopError:
            raise
        except Exception as exc:
            translated = as_learnloop_error(exc)
            if translated is None:
                raise
            raise translated from exc

    setattr(edge, _MARK, True)
    return edge


def sdk_edge(cls: C) -> C:
    """Wrap every public coroutine and async-generator method of `cls`, its inherited ones included."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(cls, name)
        if getattr(attr, _MARK, False):
            continue
        if inspect.iscoroutinefunction(attr):
            setattr(cls, name, _coroutine(attr))
        elif inspect.isasyncgenfunction(attr):
            setattr(cls, name, _generator(attr))
    return cls
