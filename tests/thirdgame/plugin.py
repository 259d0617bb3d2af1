"""Importing this registers tic-tac-toe (``tests.thirdgame``): the module a process lists in
``$DISCUS_PLUGINS``."""

from tests.thirdgame import register

register()
