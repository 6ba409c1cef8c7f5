"""Live events: what changed on the platform, pushed to those who subscribed.

The historical platform's Constellation service (subprotocol ``cnstl``) pushed model changes
and happenings as ``live`` events named like ``channel:{id}:update``. Here:

* :mod:`.topics` names every event the developer docs list and who may subscribe to it;
* :mod:`.outbox` is where events are written: a table in the platform's database, filled by
  triggers (every write to a channel or user row, from any module or process) and by the
  handlers that make the other happenings (follows, hosts), in their own transaction;
* :mod:`.constellation` is the websocket service that reads the outbox and delivers.
"""
