"""``python -m engine.dumps``: see ``engine/dumps/cli.py``."""

import sys

from engine.dumps.cli import main

sys.exit(main())
