"""The chat side of the platform, one concept per module.

``node`` (the websocket server and connection-level methods) hands every other method to
``dispatch``, whose table each rule module fills with the methods it owns (``talk``: msg,
whisper; ``history``; ``moderation``; ``polls``; ``giveaways``). Rule modules act on a
``rooms.Room`` for a ``members.Member``; ``presence`` counts who is there; ``messages`` and
``emoticons`` build message data; ``roles`` and ``authkeys`` are shared with REST; ``cluster``
is the chat side of one process, seen by REST through ``hub``.
"""
