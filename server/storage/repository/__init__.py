"""Every SQL statement the program runs, as functions named for what they do: callers say
``from server.storage import repository as repo`` and call ``repo.<function>``."""

from server.storage.repository.games import *  # noqa: F403 - the one module, for now
