"""The AI pool: how the server gets its AI moves, from engine processes of its own
(``local``) or from ``discus worker`` processes through Redis (``queued``, ``remote_worker``)."""
