"""A command's boundary as it travels from the gate to the client that applies it (S16): one
typed wire record, :class:`Spec`, made by every producer and read back by every consumer, refusing
anything but its own form.

Standard library only and no ``dataclasses`` (its import costs more than this module): the ``-c``
client decodes the record on the way to its command (S14). The kernel's side of the boundary,
what the record's names mean as flags and numbers, is :mod:`gatesh.boundary._kernel`.
"""

from gatesh._errors import BoundaryError

__all__ = ["HANDED", "LIMIT_NAMES", "SCOPE_NAMES", "WIRE_VERSION", "Ports", "Rules", "Spec"]


class _Record:
    """A frozen record compared and hashed by its fields: what ``@dataclass(frozen=True)`` gives,
    without importing ``dataclasses`` (~3 ms, more than this whole module: see above)."""

    __slots__: "tuple[str, ...]" = ()

    def _fields(self) -> "tuple[object, ...]":
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({inner})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")


class Ports(_Record):
    """The TCP ports a closed network still allows (the gate draws none)."""

    __slots__ = ("bind", "connect")
    connect: "tuple[int, ...]"
    bind: "tuple[int, ...]"

    def __init__(self, connect: "tuple[int, ...]" = (), bind: "tuple[int, ...]" = ()) -> None:
        object.__setattr__(self, "connect", connect)
        object.__setattr__(self, "bind", bind)


class Rules(_Record):
    """Everything a Landlock ruleset is built from (:func:`ruleset`): the places of each kind,
    the network (None: open) and the scopes. ``abi`` is the ABI the boundary was drawn for: it
    is not built into the ruleset, but two rule sets drawn for different ABIs are different."""

    __slots__ = ("abi", "list", "net", "read", "scope", "write")
    abi: int
    read: "tuple[str, ...]"
    write: "tuple[str, ...]"
    list: "tuple[str, ...]"
    net: "Ports | None"
    scope: "tuple[str, ...]"

    def __init__(
        self,
        abi: int,
        read: "tuple[str, ...]" = (),
        write: "tuple[str, ...]" = (),
        list: "tuple[str, ...]" = (),
        net: "Ports | None" = None,
        scope: "tuple[str, ...]" = (),
    ) -> None:
        set_ = object.__setattr__
        set_(self, "abi", abi)
        set_(self, "read", read)
        set_(self, "write", write)
        set_(self, "list", list)
        set_(self, "net", net)
        set_(self, "scope", scope)


#: The version of the boundary's wire form (:class:`Spec`): a spec that says another is refused.
WIRE_VERSION = 1
#: The scopes a boundary can name (the kernel's flags for them: ``_kernel._SCOPES``, ABI 6).
SCOPE_NAMES = ("signal", "abstract-unix")
#: The resource limits a boundary can lower (their numbers: ``_kernel._RLIMITS``).
LIMIT_NAMES = ("cpu", "fsize", "data", "nproc")
#: What a boundary may set in its command's environment: its private temporary folder
#: (:func:`gatesh.boundary.compute.temp_env`), nothing else.
_ENV = ("TMPDIR", "TMPPREFIX")
#: The wire's word for a ruleset that travels as a file descriptor beside the reply.
HANDED = "fd"
# The members of a spec's wire form: with its places, or with a handed ruleset instead (the
# word ``ruleset`` and the number of its ``rules``). Every one is required; no other is read.
_COMMON = frozenset(("v", "abi", "net", "scope", "limits", "env", "id", "note"))
_WITH_PLACES = _COMMON | {"list", "read", "write"}
_WITH_HANDED = _COMMON | {"ruleset", "rules"}


class Spec(_Record):
    """A command's boundary as it travels from the gate to the client that applies it (S16): the
    one wire record of the boundary, for every producer (:mod:`gatesh.boundary.compute`, the
    check reply, a ticket, :mod:`gatesh.boundary.handoff`) and consumer (:func:`gatesh.boundary._kernel.apply`).

    ``rules``: what the Landlock ruleset is built from (its places empty when the ruleset is
    ``handed``: the daemon built it and passes it as a file descriptor; ``handed`` is then its
    number of rules, else -1). ``limits``: (name, value) of the resource limits to lower
    (names of :data:`LIMIT_NAMES`); ``env``: what the command's environment gets (:data:`_ENV`);
    ``id``: the boundary's short name; ``note``: what the agent is told after a failure.

    :meth:`encode` makes it JSON; :meth:`decode` reads it back, refusing anything else.
    """

    __slots__ = ("env", "handed", "id", "limits", "note", "rules")
    rules: Rules
    limits: "tuple[tuple[str, int], ...]"
    env: "tuple[tuple[str, str], ...]"
    id: str
    note: str
    handed: int

    def __init__(
        self,
        rules: Rules,
        limits: "tuple[tuple[str, int], ...]" = (),
        env: "tuple[tuple[str, str], ...]" = (),
        id: str = "",
        note: str = "",
        handed: int = -1,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "rules", rules)
        set_(self, "limits", limits)
        set_(self, "env", env)
        set_(self, "id", id)
        set_(self, "note", note)
        set_(self, "handed", handed)

    def noted(self, note: str) -> "Spec":
        """This spec with ``note`` to tell the agent after a failure."""
        return Spec(self.rules, self.limits, self.env, self.id, note, self.handed)

    def handing(self, rules: int) -> "Spec":
        """This spec as it travels beside its ruleset built by the daemon (``rules`` rules):
        without its places, which the ruleset holds."""
        r = self.rules
        bare = Rules(r.abi, net=r.net, scope=r.scope)
        return Spec(bare, self.limits, self.env, self.id, self.note, rules)

    def encode(self) -> "dict[str, object]":
        """The spec as a JSON object: :meth:`decode` reads it back equal."""
        r = self.rules
        out: dict[str, object] = {"v": WIRE_VERSION, "abi": r.abi}
        if self.handed < 0:
            out.update(list=[*r.list], read=[*r.read], write=[*r.write])
        out.update(
            net=None if r.net is None else {"connect": [*r.net.connect], "bind": [*r.net.bind]},
            scope=[*r.scope],
            limits=dict(self.limits),
            env=dict(self.env),
            id=self.id,
            note=self.note,
        )
        if self.handed >= 0:
            out.update(ruleset=HANDED, rules=self.handed)
        return out

    @classmethod
    def decode(cls, raw: object) -> "Spec":
        """The spec ``raw`` (a JSON object) describes. Raises BoundaryError, naming what is
        wrong, for anything but exactly :meth:`encode`'s form: another wire version, a member
        missing or unknown (an unknown one could be a restriction this client would drop), a
        value of another type, an ABI that is no positive integer, a place that is no absolute
        path, a port, scope, limit or environment variable that is not one the boundary draws.
        Nothing is built or run from a spec that does not decode."""
        if not isinstance(raw, dict):
            raise BoundaryError(f"the boundary is not an object: {type(raw).__name__}")
        v = raw.get("v")
        if type(v) is not int or v != WIRE_VERSION:
            raise BoundaryError(f"the boundary's wire version is {v!r}, not {WIRE_VERSION}")
        handed = "ruleset" in raw
        want = _WITH_HANDED if handed else _WITH_PLACES
        keys = set(raw)
        if keys != want:
            missing, unknown = sorted(want - keys), sorted(keys - want, key=repr)
            what = f"lacks {', '.join(missing)}" if missing else f"has unknown {unknown!r}"
            raise BoundaryError(f"the boundary {what}")
        level = raw["abi"]
        if type(level) is not int or level < 1:
            raise BoundaryError(f"the boundary names no Landlock ABI: {level!r}")
        count = -1
        if handed:
            count = raw["rules"]
            if raw["ruleset"] != HANDED or type(count) is not int or count < 0:
                raise BoundaryError("the boundary's handed ruleset does not say its rules")
        net = raw["net"]
        rules = Rules(
            abi=level,
            read=() if handed else _places(raw["read"]),
            write=() if handed else _places(raw["write"]),
            list=() if handed else _places(raw["list"]),
            net=None if net is None else _ports(net),
            scope=_strings(raw["scope"], "scope", SCOPE_NAMES),
        )
        limits: list[tuple[str, int]] = []
        for name, value in _members(raw["limits"], "limits").items():
            if name not in LIMIT_NAMES or type(value) is not int or value <= 0:
                raise BoundaryError(f"the boundary names a bad limit {name!r}={value!r}")
            limits.append((name, value))
        if len(limits) != len(LIMIT_NAMES):
            raise BoundaryError(f"the boundary's limits are not {', '.join(sorted(LIMIT_NAMES))}")
        env: list[tuple[str, str]] = []
        for name, value in _members(raw["env"], "environment").items():
            if (
                name not in _ENV
                or not isinstance(value, str)
                or value[:1] != "/"
                or "\x00" in value
            ):
                raise BoundaryError(f"the boundary sets a bad variable {name!r}={value!r}")
            env.append((name, value))
        for key in ("id", "note"):
            if not isinstance(raw[key], str):
                raise BoundaryError(f"the boundary's {key} is not a string: {raw[key]!r}")
        return cls(rules, tuple(limits), tuple(env), raw["id"], raw["note"], count)


def _items(value: object, what: str) -> "list[object]":
    """A wire list. Raises BoundaryError for anything else."""
    if not isinstance(value, list):
        raise BoundaryError(f"the boundary's {what} is not a list: {value!r}")
    return value


def _members(value: object, what: str) -> "dict[object, object]":
    """A wire object. Raises BoundaryError for anything else."""
    if not isinstance(value, dict):
        raise BoundaryError(f"the boundary's {what} is not an object: {value!r}")
    return value


def _strings(value: object, what: str, known: "tuple[str, ...]") -> "tuple[str, ...]":
    items = _items(value, what)
    for item in items:
        if not isinstance(item, str) or item not in known:
            raise BoundaryError(f"the boundary names a bad {what} {item!r}")
    return tuple(str(item) for item in items)


def _places(value: object) -> "tuple[str, ...]":
    """The places of one kind; each is an absolute path (see :func:`_add_paths`)."""
    out: list[str] = []
    for place in _items(value, "places"):
        if not isinstance(place, str) or not place.startswith("/") or "\x00" in place:
            raise BoundaryError(
                f"the boundary names a place that is not an absolute path: {place!r}"
            )
        out.append(place)
    return tuple(out)


def _ports(net: object) -> Ports:
    rule = _members(net, "network rule")
    if set(rule) != {"connect", "bind"}:
        raise BoundaryError(f"the boundary's network rule is not connect and bind: {net!r}")
    got: list[tuple[int, ...]] = []
    for key in ("connect", "bind"):
        ports = _items(rule[key], "ports")
        for port in ports:
            if type(port) is not int or not 0 <= port < 65536:
                raise BoundaryError(f"the boundary names a bad port {port!r}")
        got.append(tuple(int(str(port)) for port in ports))
    return Ports(connect=got[0], bind=got[1])
