"""``python -m server.protocol [--check]``: write (or check) ``docs/protocol.schema.json``."""

import sys

from server.protocol import main

sys.exit(main())
