"""JSON records to pandas DataFrames, with declared columns and dtypes per resource.

Every REST listing ends here once, after all its pages arrived: one list of values per column,
each converted to its dtype in one vectorised call. On 5,000 channels that is about twice as
fast as ``json_normalize`` + ``concat`` per page, and the columns come out typed (see
``benchmarks/rest_client.py``).

What a frame looks like:

- Embedded objects flatten to dotted columns (``user.username``, ``type.name``); a null object
  gives missing values in all its columns. Lists and free-form objects (``user.social``,
  ``groups``) stay as Python objects in one column.
- Declared dtypes: ``Int64`` for integers (nullable), ``boolean``, ``float64``, the default
  ``str`` for text, ``category`` for small enums (``audience``, ``languageId``) and
  ``datetime64[ns, UTC]`` for timestamps (ISO strings or epoch milliseconds).
- The column set is the schema's, whatever the records hold, so code written against a frame
  keeps working on an empty page. A column marked optional (``streamKey``, only in the
  owner's view) appears only when a record has it. Fields the schema does not declare are
  kept after the declared ones, with inferred dtypes.
- ``fields=`` (the API's projection) keeps exactly the named fields in that order (an object
  field brings all of its dotted columns), still typed.
- ``id`` becomes the index where it identifies the record (channels, users, types, games,
  invoices, ...); a few records are keyed otherwise (achievements by ``slug``, chat users by
  ``userId``, ingests by ``name``, emoticons by ``code``). Single records without a key
  (follow state, hosting) keep a ``RangeIndex``.
- :func:`time_series` gives a sorted UTC ``DatetimeIndex`` for time-series endpoints
  (``ANALYTICS`` declares the points of every analytics series).

Pure: pandas, numpy and the standard library only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Literal, TypeAlias, Union

import numpy as np
import pandas as pd

Kind = Literal["int", "float", "bool", "str", "category", "time", "object"]
Spec: TypeAlias = Union[Kind, "Schema"]
Record: TypeAlias = Mapping[str, Any]

_EMPTY: dict[str, Any] = {}
_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)")


@dataclass(frozen=True, slots=True)
class Schema:
    """The declared shape of one resource: its fields in display order and their kinds.

    A field whose spec is another :class:`Schema` is an embedded object, flattened with its
    name as prefix. ``categories`` fixes the category order of an enum column (values outside
    it are still kept); ``optional`` fields appear only when present.
    """

    fields: Mapping[str, Spec]
    index: str | None = None
    categories: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    optional: frozenset[str] = frozenset()


TYPE = Schema(
    {
        "id": "int",
        "name": "str",
        "parent": "str",
        "description": "str",
        "source": "str",
        "viewersCurrent": "int",
        "coverUrl": "str",
        "backgroundUrl": "str",
        "online": "int",
        "availableAt": "time",
    },
    index="id",
)

USER = Schema(
    {
        "id": "int",
        "username": "str",
        "level": "int",
        "experience": "int",
        "sparks": "int",
        "avatarUrl": "str",
        "bio": "str",
        "social": "object",
        "primaryTeam": "int",
        "verified": "bool",
        "createdAt": "time",
        "updatedAt": "time",
        "deletedAt": "time",
    },
    index="id",
)

_CHANNEL_FIELDS: dict[str, Spec] = {
    "id": "int",
    "userId": "int",
    "token": "str",
    "name": "str",
    "online": "bool",
    "featured": "bool",
    "partnered": "bool",
    "suspended": "bool",
    "interactive": "bool",
    "hasVod": "bool",
    "vodsEnabled": "bool",
    "hasTranscodes": "bool",
    "featureLevel": "int",
    "ftl": "int",
    "audience": "category",
    "viewersTotal": "int",
    "viewersCurrent": "int",
    "numFollowers": "int",
    "description": "str",
    "typeId": "int",
    "languageId": "category",
    "interactiveGameId": "int",
    "transcodingProfileId": "int",
    "coverId": "int",
    "thumbnailId": "int",
    "badgeId": "int",
    "hosteeId": "int",
    "bannerUrl": "str",
    "costreamId": "str",
    "createdAt": "time",
    "updatedAt": "time",
    "deletedAt": "time",
    "streamKey": "str",
}
_AUDIENCES = {"audience": ("family", "teen", "18+")}

#: A channel as listed and fetched: with its ``type`` and owner ``user`` embedded.
CHANNEL = Schema(
    {**_CHANNEL_FIELDS, "type": TYPE, "user": USER},
    index="id",
    categories=_AUDIENCES,
    optional=frozenset({"streamKey"}),
)

#: ``GET /users/current``: the user with their own channel, groups, email and preferences.
CURRENT_USER = Schema(
    {
        **USER.fields,
        "channel": Schema(
            _CHANNEL_FIELDS, categories=_AUDIENCES, optional=frozenset({"streamKey"})
        ),
        "groups": "object",
        "email": "str",
        "preferences": "object",
    },
    index="id",
)

#: A user with the time they followed a channel (``GET /channels/{id}/follow``).
FOLLOWER = Schema({**USER.fields, "followedAt": "time"}, index="id")

#: The caller's follow of a channel after following or unfollowing it.
FOLLOW_STATE = Schema(
    {
        "channelId": "int",
        "userId": "int",
        "following": "bool",
        "followedAt": "time",
        "numFollowers": "int",
    }
)

#: Whom a channel hosts: ``hostee`` is the hosted channel (null columns when not hosting).
HOSTING = Schema({"channelId": "int", "hosteeId": "int", "hostee": CHANNEL})

#: A user with their roles in one channel (``Owner``, ``Mod``, ``Subscriber``, ...).
CHANNEL_USER = Schema({**USER.fields, "roles": "object"}, index="id")

#: One user's standing in a channel: roles and follow.
RELATIONSHIP = Schema(
    {
        "channelId": "int",
        "userId": "int",
        "status": Schema(
            {
                "roles": "object",
                "follows": Schema({"user": "int", "channel": "int", "createdAt": "time"}),
            }
        ),
    }
)

#: One emoticon of a channel's pack: its code and place on the sprite sheet.
EMOTICON = Schema(
    {"code": "str", "x": "int", "y": "int", "width": "int", "height": "int"}, index="code"
)

#: A channel's partnership application.
PARTNERSHIP = Schema(
    {
        "channelId": "int",
        "status": "category",
        "message": "str",
        "followers": "int",
        "viewersTotal": "int",
        "createdAt": "time",
        "updatedAt": "time",
        "decidedAt": "time",
        "decidedBy": "int",
        "reason": "str",
    },
    categories={"status": ("pending", "accepted", "denied")},
)

#: A partner's redeemable code.
REDEEMABLE = Schema(
    {
        "id": "int",
        "ownerId": "int",
        "state": "category",
        "code": "str",
        "redeemedById": "int",
        "redeemedAt": "time",
        "createdAt": "time",
        "updatedAt": "time",
    },
    index="id",
    categories={"state": ("unredeemed", "redeemed")},
)

#: A text or voice channel, or a role, of a channel's (simulated) Discord guild.
DISCORD_CHANNEL = Schema({"id": "str", "name": "str", "type": "category"}, index="id")
DISCORD_ROLE = Schema({"id": "str", "name": "str", "color": "int"}, index="id")

#: A past broadcast; ``vods`` lists its files (HLS, raw, thumbnail, chat) as objects.
RECORDING = Schema(
    {
        "id": "int",
        "channelId": "int",
        "name": "str",
        "typeId": "int",
        "state": "category",
        "viewsTotal": "int",
        "duration": "float",
        "expiresAt": "time",
        "createdAt": "time",
        "updatedAt": "time",
        "vods": "object",
    },
    index="id",
    categories={"state": ("PROCESSING", "AVAILABLE", "DELETED")},
)

#: An uploaded image (thumbnail, badge, banner, game cover); ``url`` serves its bytes.
RESOURCE = Schema(
    {
        "id": "int",
        "type": "category",
        "relid": "int",
        "url": "str",
        "contentType": "category",
        "size": "int",
        "createdAt": "time",
    },
    index="id",
)

#: The outcome of unlocking transcodes: the channel's flag and the owner's sparks.
TRANSCODE_UNLOCK = Schema(
    {"channelId": "int", "hasTranscodes": "bool", "sparksSpent": "int", "sparks": "int"}
)

#: A signed-in user present in a channel's chat, with their roles there.
CHAT_USER = Schema({"userId": "int", "userName": "str", "userRoles": "object"}, index="userId")

#: An achievement; ``earned``/``earnedAt`` only for a signed-in caller.
ACHIEVEMENT = Schema(
    {
        "slug": "str",
        "name": "str",
        "description": "str",
        "sparks": "int",
        "earned": "bool",
        "earnedAt": "time",
    },
    index="slug",
    optional=frozenset({"earned", "earnedAt"}),
)

_LEVELS = {"level": ("info", "warning", "critical")}

#: A staff announcement and how many users it reached.
ANNOUNCEMENT = Schema(
    {
        "id": "int",
        "authorId": "int",
        "message": "str",
        "level": "category",
        "createdAt": "time",
        "recipients": "int",
    },
    index="id",
    categories=_LEVELS,
)

#: A confetti burst; ``channelId`` is missing for platform-wide ones.
CONFETTI = Schema(
    {
        "id": "int",
        "channelId": "int",
        "creatorId": "int",
        "name": "str",
        "particles": "object",
        "count": "int",
        "durationMs": "int",
        "createdAt": "time",
        "updatedAt": "time",
    },
    index="id",
)

#: A released build of a client app.
FRONTEND_VERSION = Schema(
    {
        "id": "int",
        "app": "category",
        "version": "str",
        "commit": "str",
        "releasedAt": "time",
        "current": "bool",
    },
    index="id",
    categories={"app": ("web", "xbox", "ios", "android")},
)

#: An ingest server and its current load (share of capacity in use), indexed by name.
INGEST = Schema(
    {"name": "str", "host": "str", "pingTest": "str", "protocols": "object", "load": "float"},
    index="name",
)

_GAME_FIELDS: dict[str, Spec] = {
    "id": "int",
    "ownerId": "int",
    "name": "str",
    "description": "str",
    "controlVersion": "str",
    "installation": "str",
    "coverUrl": "str",
    "hasPublishedVersions": "bool",
    "createdAt": "time",
    "updatedAt": "time",
}

#: An interactive game.
GAME = Schema(_GAME_FIELDS, index="id")

#: An editor of an interactive game.
GAME_EDITOR = Schema({"userId": "int", "username": "str", "addedAt": "time"}, index="userId")

_VERSION_STATES = {"state": ("draft", "pending", "published")}

#: A version of an interactive game; ``controls`` is the game's scene tree as an object.
GAME_VERSION = Schema(
    {
        "id": "int",
        "gameId": "int",
        "versionOrder": "int",
        "state": "category",
        "version": "str",
        "changelog": "str",
        "installation": "str",
        "download": "str",
        "controlVersion": "str",
        "controls": "object",
        "createdAt": "time",
        "updatedAt": "time",
    },
    index="id",
    categories=_VERSION_STATES,
)

#: An interactive host viewers join.
INTERACTIVE_HOST = Schema({"address": "str"})

#: The interactive game a channel runs: its newest published ``version`` and the address.
INTERACTIVE_CHANNEL = Schema(
    {
        "channelId": "int",
        "interactive": "bool",
        "gameId": "int",
        "version": Schema(GAME_VERSION.fields, categories=_VERSION_STATES),
        "address": "str",
    }
)

#: Where and with which key a channel's game client (the robot) connects.
INTERACTIVE_ROBOT = Schema(
    {"channelId": "int", "gameId": "int", "versionId": "int", "address": "str", "key": "str"}
)

#: A purchase in sparks; ``items`` lists its lines as objects, ``sparks`` is their net.
INVOICE = Schema(
    {
        "id": "int",
        "userId": "int",
        "status": "category",
        "items": "object",
        "sparks": "int",
        "createdAt": "time",
        "updatedAt": "time",
        "capturedAt": "time",
    },
    index="id",
    categories={"status": ("pending", "captured")},
)

#: A language with its channel counts, indexed by language id.
LANGUAGE = Schema(
    {"id": "str", "name": "str", "channels": "int", "online": "int", "viewersCurrent": "int"},
    index="id",
)

#: A notification; ``payload`` (who did what, where) differs by trigger, so stays an object.
NOTIFICATION = Schema(
    {
        "id": "int",
        "userId": "int",
        "trigger": "category",
        "payload": "object",
        "sentAt": "time",
        "shared": "bool",
    },
    index="id",
    categories={
        "trigger": (
            "followed",
            "subscribed",
            "resubscribed",
            "hosted",
            "achievement",
            "announcement",
        )
    },
)

#: A category of notification e-mail the user opted out of, and since when.
EMAIL_OPT_OUT = Schema({"category": "str", "since": "time"}, index="category")

#: An OAuth client; ``secret`` appears once, in the answer that registered a confidential one.
OAUTH_CLIENT = Schema(
    {
        "id": "str",
        "name": "str",
        "website": "str",
        "ownerId": "int",
        "redirectUris": "object",
        "confidential": "bool",
        "createdAt": "time",
        "secret": "str",
    },
    index="id",
    optional=frozenset({"secret"}),
)


def _series(**fields: Kind) -> Schema:
    """The point of an analytics series: ``time``, ``channel`` and its values."""
    return Schema({"time": "time", "channel": "int", **fields})


_COUNTER = _series(total="int", delta="int")
_GAME_RANK = _series(type="int", rank="int", streams="int", views="int", shared="int")

#: Every analytics series by name: ``viewerSummary`` is ``/analytics/viewers`` (daily), the
#: others are ``/analytics/tsdb/{name}``. Points are hourly, daily or events (see the platform).
ANALYTICS: dict[str, Schema] = {
    "viewerSummary": _series(peak="int", average="float", viewerHours="int", hoursLive="int"),
    "viewers": _series(anon="int", authed="int"),
    "viewersMetrics": _series(
        country="category", browser="category", platform="category", count="int"
    ),
    "streamSessions": _series(online="bool", partnered="bool", duration="int", type="int"),
    "streamHosts": _series(hoster="int", hostee="int"),
    "followers": _COUNTER,
    "subscriptions": _COUNTER,
    "subRevenue": _series(gateway="category", count="int", gross="int", total="int"),
    "cpm": _series(impressions="int", payout="int"),
    "sparkSpent": _series(sparks="int"),
    "emojiUsageRanks": _series(emoji="category", count="int", rank="int"),
    "emojiUsage": _series(emoji="category", count="int"),
    "gameRanks": _GAME_RANK,
    "gameRanksGlobal": _GAME_RANK,
}

#: Anything without a declared schema: every field inferred, ``id`` the index when present.
GENERIC = Schema({}, index="id")


def frame(
    records: Sequence[Record],
    schema: Schema = GENERIC,
    *,
    fields: Iterable[str] | None = None,
) -> pd.DataFrame:
    """One DataFrame from ``records`` shaped by ``schema`` (see the module docstring).

    ``fields`` is the projection the records were fetched with: only those columns come back.
    """
    rows = list(records)
    columns: dict[str, Any] = {}
    _flatten(rows, schema, "", columns, tuple(fields) if fields is not None else None)
    index = None
    if schema.index is not None and schema.index in columns:
        index = _index(columns.pop(schema.index), schema.index)
    result = pd.DataFrame(columns, index=index, copy=False)
    if index is None:
        result.index = pd.RangeIndex(len(rows))
    return result


def time_series(
    records: Sequence[Record], time_field: str = "time", schema: Schema = GENERIC
) -> pd.DataFrame:
    """A frame of ``records`` indexed by ``time_field`` as a sorted UTC ``DatetimeIndex``."""
    fields = {**schema.fields, time_field: "time"}
    table = frame(records, Schema(fields, None, schema.categories, schema.optional))
    return table.set_index(time_field).sort_index(kind="stable")


def _flatten(
    rows: Sequence[Record],
    schema: Schema,
    prefix: str,
    out: dict[str, Any],
    projection: tuple[str, ...] | None,
) -> None:
    """Add the columns of ``rows`` (records or embedded objects) to ``out``."""
    present: set[str] = set().union(*rows) if rows else set()
    declared = schema.fields
    names: list[str]
    if projection is not None:
        names = list(projection)
    else:
        names = [n for n in declared if n not in schema.optional or n in present]
        if not present.issubset(declared):
            names += [n for n in dict.fromkeys(chain.from_iterable(rows)) if n not in declared]
    for name in names:
        values = [row.get(name) for row in rows]
        spec = declared.get(name)
        objects = [v for v in values if v is not None]
        if spec is None and objects and all(isinstance(v, dict) for v in objects):
            spec = GENERIC
        if isinstance(spec, Schema):
            embedded = [v if isinstance(v, dict) else _EMPTY for v in values]
            _flatten(embedded, spec, f"{prefix}{name}.", out, None)
        else:
            kind = spec if spec is not None else _infer(values)
            out[prefix + name] = _column(values, kind, schema.categories.get(name))


def _infer(values: list[Any]) -> Kind:
    """The kind of an undeclared field, from its values (ISO-8601 text is a timestamp)."""
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return "object"
    if kinds == {bool}:
        return "bool"
    if kinds == {int}:
        return "int"
    if kinds <= {int, float}:
        return "float"
    if kinds == {str}:
        sample = next(v for v in values if v is not None)
        return "time" if _ISO.fullmatch(sample) else "str"
    return "object"


def _column(values: list[Any], kind: Kind, categories: tuple[str, ...] | None = None) -> Any:
    """An array of dtype ``kind`` from Python ``values`` (None for missing)."""
    if kind == "int":
        return pd.array(values, dtype="Int64")
    if kind == "bool":
        return pd.array(values, dtype="boolean")
    if kind == "float":
        return np.array([math.nan if v is None else v for v in values], dtype="float64")
    if kind == "str":
        return pd.array(values, dtype="str")
    if kind == "category":
        observed = sorted({v for v in values if v is not None} - set(categories or ()))
        return pd.Categorical(values, categories=[*(categories or ()), *observed])
    if kind == "time":
        return _timestamps(values)
    return np.fromiter(values, dtype=object, count=len(values))


def _timestamps(values: list[Any]) -> Any:
    """``datetime64[ns, UTC]`` from ISO-8601 strings or epoch milliseconds.

    The platform writes UTC as ``...Z``; numpy parses those (without the ``Z``) about three
    times faster than pandas' general ISO-8601 parser, which handles everything else.
    """
    sample = next((v for v in values if v is not None), None)
    if isinstance(sample, int | float) and not isinstance(sample, bool):
        return pd.to_datetime(values, unit="ms", utc=True).as_unit("ns").array
    if all(v is None or (type(v) is str and v.endswith("Z")) for v in values):
        try:
            naive = np.array([v[:-1] if v else "NaT" for v in values], dtype="datetime64[ns]")
        except ValueError:
            pass
        else:
            return pd.DatetimeIndex(naive).tz_localize("UTC").array
    return pd.to_datetime(values, utc=True, format="ISO8601").as_unit("ns").array


def _index(values: Any, name: str) -> pd.Index:
    """The index from an identifier column: plain ``int64`` when it has no gaps."""
    index = pd.Index(values, name=name)
    if isinstance(index.dtype, pd.Int64Dtype) and not index.hasnans:
        return index.astype("int64")
    return index
