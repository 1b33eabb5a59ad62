"""The field codec every custom header shares: the errors, the checked field readers the hot headers fall back to,
and the declarative form the cold headers use — each field declared once, with its wire name, by ``wire()`` inside
a ``@header`` class; its kind comes from the annotation.

How a declared field reads and writes (``d`` = the extFields, text on the wire):

| annotation    | declared as                      | absent / ``""`` on read                 | write                         |
|---------------|----------------------------------|-----------------------------------------|-------------------------------|
| str           | wire(n)                          | MissingHeaderFieldError / ``""``        | the text                      |
| str           | wire(n, default=x, required=True)| MissingHeaderFieldError / ``""``        | the text                      |
| str \\| None   | wire(n, default=None)            | None / ``""``                           | left out when None            |
| str \\| None   | wire(n, default=None, empty=None)| None / None (C++ sends ``""``)          | left out when None            |
| int           | wire(n)                          | MissingHeaderFieldError / BadHeader…    | decimal                       |
| int           | wire(n, default=x)               | x / x                                   | decimal                       |
| int           | wire(n, required=False)          | 0 / 0                                   | decimal                       |
| int \\| None   | wire(n, default=None)            | None / None                             | left out when None            |
| bool          | wire(n)                          | MissingHeaderFieldError / false         | ``true``/``false``            |
| bool          | wire(n, required=False)          | false / false                           | ``true``/``false``            |
| bool          | wire(n, default=x)               | x / x                                   | ``true``/``false``            |
| bool          | wire(n, default=False, omit_false=True) | false / false                    | ``true``, left out when false |
| bool \\| None  | wire(n, default=None)            | None / false                            | left out when None            |

Numbers that do not parse raise ``BadHeaderFieldError``; booleans read ``true``/``false`` in any case and ``1``/``0``.
"""

from __future__ import annotations

import sys
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Final, Protocol, Self, TypeVar, cast, dataclass_transform

from protocol.errors import MalformedFrameError


class MalformedHeaderError(MalformedFrameError, ValueError):
    """A custom header that cannot be read (missing or malformed field)."""


class MissingHeaderFieldError(MalformedHeaderError):
    """A required field is absent; the text is J's, ``the custom field <x> is null``."""

    def __init__(self, name: str) -> None:
        super().__init__(f"the custom field <{name}> is null")
        self.field = name


class BadHeaderFieldError(MalformedHeaderError):
    """A field whose text does not parse as its type (``"abc"`` for a Long); names the field and the value."""

    def __init__(self, name: str, value: str, kind: str) -> None:
        super().__init__(f"the custom field <{name}> is not a valid {kind}: {value!r}")
        self.field = name
        self.value = value


Fields = dict[str, str]


class CustomHeader(Protocol):
    """What every header object offers."""

    def to_ext_fields(self) -> Fields: ...


class HeaderClass(Protocol):
    """What every header class offers (``type[SendMessageRequestHeader]`` matches)."""

    def from_ext_fields(self, d: Fields, /) -> CustomHeader: ...


# -- field readers (the checked path) --------------------------------------------------------------------------------


def _s(d: Fields, name: str) -> str:
    v = d.get(name)
    if v is None:
        raise MissingHeaderFieldError(name)
    return v


def _os(d: Fields, name: str) -> str | None:
    return d.get(name)


def _i(d: Fields, name: str) -> int:
    v = d.get(name)
    if v is None:
        raise MissingHeaderFieldError(name)
    try:
        return int(v)
    except ValueError:
        raise BadHeaderFieldError(name, v, "number") from None


def _oi(d: Fields, name: str, default: int | None = None) -> int | None:
    v = d.get(name)
    if v is None or v == "":
        return default
    try:
        return int(v)
    except ValueError:
        raise BadHeaderFieldError(name, v, "number") from None


def _b(d: Fields, name: str, default: bool = False) -> bool:
    v = d.get(name)
    if v is None or v == "":
        return default
    low = v.lower()
    if low in ("true", "1"):
        return True
    if low in ("false", "0"):
        return False
    raise BadHeaderFieldError(name, v, "boolean")


def _rb(d: Fields, name: str) -> bool:
    """A required boolean."""
    if name not in d:
        raise MissingHeaderFieldError(name)
    return _b(d, name)


def _bs(value: bool) -> str:
    return "true" if value else "false"


def _put(out: Fields, name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool):
        out[name] = _bs(value)
    else:
        out[name] = str(value)


# The fast paths' boolean table: exact spellings only; anything else (``"TRUE"``) takes the checked path.
_BOOL_F: Final[dict[str, bool]] = {"": False, "false": False, "true": True, "0": False, "1": True}
_BOOL_T: Final[dict[str, bool]] = {"": True, "false": False, "true": True, "0": False, "1": True}


# -- the declarative form (cold headers) -----------------------------------------------------------------------------

_WIRE: Final = "wire"


def wire(
    name: str,
    *,
    default: Any = MISSING,
    required: bool | None = None,
    empty: Any = MISSING,
    omit_false: bool = False,
) -> Any:
    """Declare a header field: ``name`` on the wire (table above). ``required`` defaults to "no default";
    ``empty`` is what an empty text reads as (``None`` for C++'s ``""`` groups)."""
    meta = {_WIRE: (name, default is MISSING if required is None else required, empty, omit_false)}
    return field(metadata=meta) if default is MISSING else field(default=default, metadata=meta)


def _read_expr(name: str, kind: Any, required: bool, default: Any, empty: Any) -> str:
    """The Python expression that reads one field from ``d`` (the table above)."""
    n = repr(name)
    if kind is str or kind == str | None:
        if required:
            return f"_s(d, {n})"
        if empty is None:
            return f"(d.get({n}) or None)"
        return f"d.get({n}, {None if default is MISSING else default!r})"
    if kind is int or kind == int | None:
        if required:
            return f"_i(d, {n})"
        return f"_oi(d, {n}, {(0 if kind is int else None) if default is MISSING else default!r})"
    if kind is bool:
        return f"_rb(d, {n})" if required else f"_b(d, {n}, {False if default is MISSING else default!r})"
    if kind == bool | None:
        return f"(None if d.get({n}) is None else _b(d, {n}))"
    raise TypeError(f"header field {name}: no wire kind for {kind!r}")


def _write(attr: str, name: str, kind: Any, omit_false: bool) -> tuple[str, str, str | None]:
    """How one field is written into ``out`` (the table above): key, value expression, condition (None: always)."""
    n, v = repr(name), f"self.{attr}"
    if kind is str or kind == str | None:
        return n, v, None if kind is str else f"{v} is not None"
    if kind is int or kind == int | None:
        return n, f"str({v})", None if kind is int else f"{v} is not None"
    if kind is bool and omit_false:
        return n, "'true'", v
    return n, f"'true' if {v} else 'false'", None if kind is bool else f"{v} is not None"


class WireHeader:
    """Base of the ``@header`` classes. ``@header`` replaces these methods with ones generated from the class's
    declarations (as ``dataclasses`` generates ``__init__``), so a declared header costs what a hand-written one
    does. A hot header (send, pull) keeps its hand-tuned ``from_ext_fields`` and gets the generated reader as
    ``_from_ext_fields_checked``, its exact-error fallback; ``_wire_to_ext_fields`` stays available to a class that
    wraps ``to_ext_fields``."""

    __slots__ = ()

    @classmethod
    def from_ext_fields(cls, d: Fields) -> Self:
        raise NotImplementedError(f"{cls.__name__} is not decorated with @header")

    @classmethod
    def _from_ext_fields_checked(cls, d: Fields) -> Self:
        raise NotImplementedError(f"{cls.__name__} is not decorated with @header")

    def to_ext_fields(self) -> Fields:
        return self._wire_to_ext_fields()

    def _wire_to_ext_fields(self) -> Fields:
        raise NotImplementedError(f"{type(self).__name__} is not decorated with @header")


_W = TypeVar("_W", bound=WireHeader)
_HELPERS: Final = {"_s": _s, "_i": _i, "_oi": _oi, "_b": _b, "_rb": _rb}


def _fast_init(cls: type) -> None:
    """Replace the frozen dataclass's ``__init__`` (one guarded ``object.__setattr__`` a field) by one that sets each
    slot through its descriptor: the same object, built in half the time, so ``Header(...)`` is the fast way to
    build any header (the readers below and the clients call it once per message)."""
    fs = fields(cls)
    ns: dict[str, Any] = {f"_set{i}": getattr(cls, f.name).__set__ for i, f in enumerate(fs)}
    params = []
    for i, f in enumerate(fs):
        if f.default is MISSING:
            params.append(f.name)
        else:
            ns[f"_default{i}"] = f.default
            params.append(f"{f.name}=_default{i}")
    body = "".join(f"    _set{i}(self, {f.name})\n" for i, f in enumerate(fs)) or "    pass\n"
    code: dict[str, Any] = {}
    exec(compile(f"def __init__(self, {', '.join(params)}):\n{body}", f"<init {cls.__name__}>", "exec"), ns, code)
    init = code["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cast(Any, cls).__init__ = init


@dataclass_transform(frozen_default=True, field_specifiers=(wire,))
def header(cls: type[_W]) -> type[_W]:
    """Make ``cls`` a frozen slotted dataclass whose ``from_ext_fields``/``to_ext_fields`` follow its ``wire()``
    declarations. They and ``__init__`` are generated on the class's first use (:func:`_generate`): a process pays
    only for the headers it speaks (a Spark driver, a client), not for all of them at import."""
    made = dataclass(frozen=True, slots=True, init=False)(cls)  # __init__: _fast_init's, generated with the rest
    for f in fields(cast(Any, made)):
        if _WIRE not in f.metadata:
            raise TypeError(f"{made.__name__}.{f.name} is not declared with wire()")
    custom_from, custom_to = "from_ext_fields" in cls.__dict__, "to_ext_fields" in cls.__dict__

    def generate() -> None:
        _generate(made, custom_from=custom_from, custom_to=custom_to)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        generate()
        made.__init__(self, *args, **kwargs)

    def from_ext_fields(c: Any, d: Fields) -> Any:
        generate()
        return c.from_ext_fields(d)

    def from_ext_fields_checked(c: Any, d: Fields) -> Any:
        generate()
        return c._from_ext_fields_checked(d)

    def to_ext_fields(self: Any) -> Fields:
        generate()
        return cast(Fields, self.to_ext_fields())

    def wire_to_ext_fields(self: Any) -> Fields:
        generate()
        return cast(Fields, self._wire_to_ext_fields())

    target = cast(Any, made)
    target.__init__ = __init__
    target._from_ext_fields_checked = classmethod(from_ext_fields_checked)
    if not custom_from:
        target.from_ext_fields = classmethod(from_ext_fields)
    target._wire_to_ext_fields = wire_to_ext_fields
    if not custom_to:
        target.to_ext_fields = to_ext_fields
    return made


def _generate(made: type, *, custom_from: bool, custom_to: bool) -> None:
    """Generate ``made``'s ``__init__`` and its readers and writers from its declarations (the table above) and put
    them in place of :func:`header`'s first-use stand-ins."""
    ns = vars(sys.modules[made.__module__])
    reads: list[str] = []
    writes: list[tuple[str, str, str | None]] = []
    for f in fields(cast(Any, made)):
        name, required, empty, omit_false = f.metadata[_WIRE]
        kind = eval(f.type, ns) if isinstance(f.type, str) else f.type  # the class's own annotation
        reads.append(_read_expr(name, kind, required, f.default, empty))
        writes.append(_write(f.name, name, kind, omit_false))
    always = 0
    while always < len(writes) and writes[always][2] is None:
        always += 1
    literal = ", ".join(f"{k}: {e}" for k, e, _c in writes[:always])
    rest = "".join(f"    if {c}: out[{k}] = {e}\n" if c else f"    out[{k}] = {e}\n" for k, e, c in writes[always:])
    src = (
        f"def from_ext_fields(cls, d):\n    return cls({', '.join(reads)})\n"
        f"def to_ext_fields(self):\n    out = {{{literal}}}\n{rest}    return out\n"
    )
    code: dict[str, Any] = {}
    exec(compile(src, f"<header {made.__name__}>", "exec"), dict(_HELPERS), code)  # our own declarations only
    target = cast(Any, made)
    target._from_ext_fields_checked = classmethod(code["from_ext_fields"])
    if not custom_from:
        target.from_ext_fields = classmethod(code["from_ext_fields"])
    target._wire_to_ext_fields = code["to_ext_fields"]
    if not custom_to:
        target.to_ext_fields = code["to_ext_fields"]
    _fast_init(made)
