"""explorer: the live-streaming platform from Python and Jupyter, with the platform embedded.

``explorer.connect()`` gives a blocking client whose REST results are pandas DataFrames;
``explorer.AsyncClient`` is its async twin. Errors live in ``explorer.errors``.
"""

from explorer.auth import Grant
from explorer.rest import AsyncClient, ChatDetails, Client, connect
from explorer.tables import time_series

__all__ = ["AsyncClient", "ChatDetails", "Client", "Grant", "connect", "time_series"]
