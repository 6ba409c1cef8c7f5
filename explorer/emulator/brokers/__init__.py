"""Fan-out between chat nodes: the Broker seam (:mod:`.broker`), the in-process broker
(:mod:`.inprocess`, the default) and the Redis broker (:mod:`.redis`, a platform over
processes). Brokers carry deliveries and know which processes are alive; they hold no room
state and import nothing of chat (stored messages they missed come through a ``Backlog``).
"""
