"""Who is on the line and the one way out: a connection (``Client``), the player it
said hello as (``Player``), and the ``Outbox`` every frame leaves through. Every desk
writes through these, so they sit below every domain."""
