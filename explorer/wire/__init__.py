"""The contract the toolkit and the platform share, declared once and importing nothing else
of ``explorer``.

Both halves bind to these modules instead of restating them (``tests/test_imports.py`` checks
that the platform imports nothing else of the toolkit but the process supervisor)::

    query.py      the list-query grammar (where, order, fields, limit, page, q)
    ratelimit.py  the rate-limit buckets and their window math
    codes.py      chat error codes, error objects and the wire-level refusal
    packets.py    chat packets: decode and encode method, reply and event
    endpoint.py   how a REST endpoint row is declared, and the one place a path is filled
    routes.py     every REST endpoint once (channel_routes.py: those of one channel)
    chatmethods.py  every chat method once: wire name and arguments
    events.py     chat event names and the event log's columns (pandas kind, Arrow type)
    records.py    how a record is declared; the Channel, User and Type fields once
    models.py     every other record an endpoint answers with, and its enumerations
    topics.py     every live event by name, who may subscribe, the subscribe methods
    kinds.py      the kinds a record field or an event-log column holds
"""
