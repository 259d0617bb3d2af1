"""Play: rooms as sans-I/O state machines, the runner that orders each room's commands
(store first, announce after), clocks, where rooms run (placement) and their locks."""
