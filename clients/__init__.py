"""Programs that speak Discus's protocol to a server, as any client may: ``clients.bot`` is
the reference bot (``discus bot``). They import the protocol's message types and nothing else
of the server."""
