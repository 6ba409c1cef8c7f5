"""Handles and the methods derived from endpoint rows, in an async and a blocking mode.

A handle is what a notebook thinks in: the client itself, a channel, a game. Its methods are
declared once, as :class:`Op` descriptors, and come out in the handle's mode: awaitables on an
:class:`Async` handle (``AsyncClient`` and what it hands out), values on a :class:`Sync` one
(``Client``, whose calls run on the toolkit's private loop, ``core/loop.py``). So the blocking and
the async surface are one declaration and cannot drift apart; mypy sees both (the mode is the
handle's type parameter) and ``help()`` sees each method's signature and docstring.

Most methods are one endpoint row each (:func:`endpoint`): the decorated function turns its
arguments into a :class:`Call` (query, body, paging limits) and the row says the rest: path,
bucket, schema and result kind. Path placeholders are filled from the handle's own values (a
channel handle fills ``{channel}``) and the method's arguments of the same name. Methods that
need more than one request are :func:`action` coroutines composing rows by calling them
on the class (``await Channel.info(self)``), which gives the coroutine in either mode.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import html
import inspect
import os
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import (
    Any,
    ClassVar,
    Concatenate,
    Generic,
    ParamSpec,
    TypeAlias,
    TypedDict,
    TypeVar,
    overload,
)

import httpx

from explorer.core import loop
from explorer.errors import ExplorerError, NotFound
from explorer.rest import pagecolumns, schemas, tables
from explorer.rest.endpoints import Binding, Choice, Result
from explorer.rest.schemas import Schema
from explorer.rest.transport import Transport, decode_object, rows
from explorer.wire.endpoint import Endpoint
from explorer.wire.query import MAX_LIMIT

P = ParamSpec("P")
R = TypeVar("R")
#: An image to upload: its bytes, or the path of a PNG or JPEG file.
Image: TypeAlias = bytes | str | os.PathLike[str]


class Mode:
    """How a handle's methods answer (a type parameter, never instantiated)."""


class Async(Mode):
    """Methods return awaitables: the mode of ``AsyncClient`` and its handles."""


class Sync(Mode):
    """Methods block until done and return the value: the mode of ``Client``."""


M = TypeVar("M", bound=Mode)


@dataclass(frozen=True, slots=True)
class Call(Generic[R]):
    """One call of an endpoint row: what its method's arguments ask of the request.

    Query ``params`` that are None are left out. ``size``/``pages``/``max_rows`` steer a
    listing's paging (``size`` None: the row's default), ``progress`` its bar. ``schema``
    overrides the row's (one per analytics series), ``fields`` projects the frame.
    """

    params: Mapping[str, Any] | None = None
    json: Any = None
    image: Image | None = None
    size: int | None = None
    pages: int | None = None
    max_rows: int | None = None
    progress: bool | None = None
    schema: Schema | None = None
    fields: tuple[str, ...] | None = None


class ListingOptions(TypedDict, total=False):
    """The options every listing method takes, declared once (``**options:
    Unpack[ListingOptions]``, passed on to its :class:`Call`): ``pages`` and ``max_rows`` stop
    early, ``progress`` shows a bar (None: the client's setting)."""

    max_rows: int | None
    pages: int | None
    progress: bool | None


class Handle(Generic[M]):
    """Something of the platform's, reached through one client's :class:`Transport`.

    ``values`` fill the path placeholders of its rows (``channel=...``). Cheap and lazy: no
    request is made until a method is called.
    """

    #: The placeholders a handle of this class fills itself.
    _bound: ClassVar[tuple[str, ...]] = ()

    def __init__(self, transport: Transport, mode: type[M], **values: object) -> None:
        self._transport = transport
        self._mode = mode
        self._values = values

    @property
    def base_url(self) -> str:
        """The REST base address, ending in ``/api/v1``."""
        return self._transport.base_url

    def _handle(self, cls: type[H], **values: object) -> H:
        """A handle of ``cls`` on the same transport and in the same mode."""
        return cls(self._transport, self._mode, **values)

    def __dir__(self) -> list[str]:
        """Public names only, so tab completion shows what one can ask."""
        return sorted(name for name in super().__dir__() if not name.startswith("_"))

    def _repr_html_(self) -> str:
        """A small card: the handle's ``info()`` record, fetched when shown. Only on sync
        handles: an async handle's client belongs to the caller's event loop, so its card
        says how to ask instead."""
        head = f"<b>{html.escape(repr(self))}</b>"
        info = getattr(type(self), "info", None)
        if not isinstance(info, Op):
            return f"<div>{head}</div>"
        if self._mode is not Sync:
            return f"<div>{head}<br><i>await .info() for its record</i></div>"
        try:
            frame = loop.run(self._card())
        except ExplorerError as exc:
            return f"<div>{head}<br>{html.escape(str(exc))}</div>"
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(str(key))}</th>"
            f"<td style='text-align:left'>{html.escape(str(value))}</td></tr>"
            for key, value in frame.reset_index().iloc[0].items()
        )
        return f"<div>{head}<table>{rows}</table></div>"

    async def _not_found(self, missing: NotFound) -> NotFound:
        """The error to raise for a 404 of one of this handle's methods: the platform's, unless
        the handle can say more (a channel suggests close names)."""
        return missing

    async def _card(self) -> Any:
        """The one-row frame a card shows: the whole ``info()`` record unless narrowed."""
        return await getattr(type(self), "info")(self)  # noqa: B009 (checked by the caller)

    def _identity(self) -> str:
        """Who is signed in, for reprs."""
        transport = self._transport
        who = transport.username or transport.scheme
        return (
            who if transport.scheme in ("anonymous", "session") else f"{who} ({transport.scheme})"
        )


H = TypeVar("H", bound=Handle[Any])


class Op(Generic[P, R]):
    """A handle method declared once; bound, it is a coroutine function on an async handle and
    a blocking function on a sync one, with the declared signature and docstring."""

    def __init__(
        self,
        run: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]],
        source: Callable[..., Any],
        binding: Binding | None,
        returns: object,
    ) -> None:
        self.run = run
        self.binding = binding
        self.__doc__ = source.__doc__
        self.__name__ = self.__qualname__ = source.__name__
        self.__module__ = source.__module__
        signature = _listing_spelt_out(inspect.signature(source))
        self.__signature__ = signature.replace(
            parameters=list(signature.parameters.values())[1:], return_annotation=returns
        )

    def __set_name__(self, owner: type, name: str) -> None:
        self.__qualname__ = f"{owner.__qualname__}.{name}"
        if self.binding is None:
            return
        missing = self.binding.unfilled(
            {*getattr(owner, "_bound", ()), *self.__signature__.parameters}
        )
        if missing:
            raise TypeError(f"{self.__qualname__}: nothing fills {sorted(missing)} of its path")
        self.binding = dataclasses.replace(self.binding, name=self.__qualname__)

    def __call__(
        self, handle: Handle[Any], /, *args: P.args, **kwargs: P.kwargs
    ) -> Coroutine[Any, Any, R]:
        """The method's coroutine for ``handle`` whatever its mode: how actions compose rows
        (``await Channel.info(self)``)."""
        return self.run(handle, *args, **kwargs)

    @overload
    def __get__(self, instance: None, owner: type) -> Op[P, R]: ...

    @overload
    def __get__(self, instance: Handle[Async], owner: type) -> Callable[P, Awaitable[R]]: ...

    @overload
    def __get__(self, instance: Handle[Sync], owner: type) -> Callable[P, R]: ...

    def __get__(self, instance: Handle[Any] | None, owner: type) -> Any:
        if instance is None:
            return self
        run = self.run
        method: Callable[..., Any]
        if instance._mode is Sync:

            def method(*args: Any, **kwargs: Any) -> Any:
                return loop.run(run(instance, *args, **kwargs))

        else:

            async def method(*args: Any, **kwargs: Any) -> Any:
                return await run(instance, *args, **kwargs)

        method.__name__, method.__qualname__ = self.__name__, self.__qualname__
        method.__doc__, method.__module__ = self.__doc__, self.__module__
        setattr(method, "__signature__", self.__signature__)  # noqa: B010 (mypy: no such attr)
        return method


def action(fn: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]]) -> Op[P, R]:
    """A handle method written as a coroutine (several requests, or none)."""
    return Op(fn, fn, None, inspect.signature(fn).return_annotation)


_RETURNS = {
    Result.TABLE: "pd.DataFrame",
    Result.PAGED: "pd.DataFrame",
    Result.SERIES: "pd.DataFrame",
    Result.RECORD: "pd.DataFrame",
    Result.OBJECT: "dict[str, Any]",
    Result.TEXT: "str",
    Result.BYTES: "bytes",
    Result.NONE: "None",
}


def _listing_spelt_out(signature: inspect.Signature) -> inspect.Signature:
    """``signature`` with a ``**options: Unpack[ListingOptions]`` shown as the keyword
    arguments it stands for (what ``help()`` and tab completion show)."""
    params = list(signature.parameters.values())
    if not params or not _takes_listing(signature):
        return signature
    spelt = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=getattr(kind, "__forward_arg__", kind),
        )
        for name, kind in ListingOptions.__annotations__.items()
    ]
    return signature.replace(parameters=[*params[:-1], *spelt])


#: What a listing gives back: its rows, read in pages.
LISTINGS = (Result.TABLE, Result.PAGED, Result.SERIES)


def _takes_listing(signature: inspect.Signature) -> bool:
    """Whether a method's ``**`` parameter is the :class:`ListingOptions`."""
    return any(
        p.kind is p.VAR_KEYWORD and "ListingOptions" in str(p.annotation)
        for p in signature.parameters.values()
    )


def endpoint(
    target: Endpoint | Choice,
    schema: Schema | None = None,
    result: Result = Result.RECORD,
    *,
    shape: Callable[[dict[str, Any]], Any] | None = None,
) -> Callable[[Callable[Concatenate[Any, P], Call[R]]], Op[P, R]]:
    """A handle method bound to one wire row, or to a :class:`~explorer.rest.endpoints.Choice` of
    rows (see :class:`~explorer.rest.endpoints.Binding`); the decorated function maps its
    arguments to a :class:`Call`."""
    row = Binding(target, schema, result, shape)

    def declare(fn: Callable[Concatenate[Any, P], Call[R]]) -> Op[P, R]:
        signature = inspect.signature(fn)
        if result in LISTINGS and not _takes_listing(signature):
            raise TypeError(f"{fn.__qualname__}: a listing takes **options: Unpack[ListingOptions]")

        async def run(handle: Handle[Any], *args: P.args, **kwargs: P.kwargs) -> R:
            call = fn(handle, *args, **kwargs)
            bound = signature.bind(handle, *args, **kwargs)
            bound.apply_defaults()
            values = {**handle._values, **bound.arguments}
            assert op.binding is not None
            try:
                answer: R = await perform(handle._transport, op.binding, call, values)
            except NotFound as missing:
                raise await handle._not_found(missing) from None
            return answer

        returns = str(signature.return_annotation).removeprefix("Call[").removesuffix("]")
        op = Op(run, fn, row, returns if shape else _RETURNS[result])
        return op

    return declare


async def perform(
    transport: Transport, binding: Binding, call: Call[Any], values: Mapping[str, object]
) -> Any:
    """Send the request ``call`` asks of ``binding`` and shape its answer as it says."""
    row = binding.row(values)
    path = binding.url(values)
    params = {k: v for k, v in (call.params or {}).items() if v is not None}
    bucket = row.bucket_for(params)
    schema = call.schema or binding.schema or schemas.of_record(row.record)
    size = call.size or (MAX_LIMIT if binding.result is Result.PAGED else None)
    if binding.result is Result.SERIES:
        records = await transport.records(
            path,
            bucket,
            params,
            size=size,
            pages=call.pages,
            max_rows=call.max_rows,
            progress=call.progress,
        )
        return tables.time_series(records, "time", schema)
    if binding.result in (Result.TABLE, Result.PAGED):
        reader = pagecolumns.Reader(schema, call.fields)

        async def read(response: httpx.Response) -> pagecolumns.Page:
            return await reader.read(response.content, functools.partial(rows, response))

        pages = await transport.pages(
            path,
            bucket,
            params,
            read,
            size=size,
            pages=call.pages,
            max_rows=call.max_rows,
            progress=call.progress,
        )
        return reader.frame(pages, call.max_rows)
    files = {"file": await _image_part(call.image)} if call.image is not None else None
    response = await transport.send(
        row.method, path, bucket, params=params or None, json=call.json, files=files
    )
    if binding.result is Result.TEXT:
        return response.text
    if binding.result is Result.BYTES:
        return response.content
    if binding.result is Result.NONE:
        return None
    body = decode_object(response)
    if binding.shape is not None:
        return binding.shape(body)
    if binding.result is Result.OBJECT:
        return body
    return tables.frame([body], schema, fields=call.fields)


async def _image_part(image: Image) -> tuple[str, bytes, str]:
    """The multipart ``file`` part for ``image``. The platform judges the type by the bytes,
    so none is claimed here; a file is read in a worker thread to keep the loop free."""
    if isinstance(image, bytes | bytearray | memoryview):
        return "image", bytes(image), "application/octet-stream"
    path = Path(image)
    return path.name, await asyncio.to_thread(path.read_bytes), "application/octet-stream"


def endpoints_of(*classes: type) -> Iterator[Binding]:
    """The bindings declared on ``classes`` (and their bases), each once."""
    seen: set[int] = set()
    for cls in classes:
        for klass in cls.__mro__:
            for value in vars(klass).values():
                if isinstance(value, Op) and value.binding and id(value) not in seen:
                    seen.add(id(value))
                    yield value.binding


def names(value: str | Iterable[str]) -> list[str]:
    """One name or several as a list (a bare string is one name, not its letters)."""
    return [value] if isinstance(value, str) else list(value)


def field_names(fields: str | Iterable[str] | None) -> tuple[str, ...] | None:
    """A projection given as a comma string or a list, as a tuple of names (None: all)."""
    if fields is None:
        return None
    parts = fields.split(",") if isinstance(fields, str) else fields
    return tuple(n.strip() for n in parts if n.strip())
