"""The admin's side: the admin desk (levels live, rooms, silences), admin tokens,
level calibration runs and the pool and cache figures."""
