"""``python -m vcr_kit``: see ``vcr_kit._cli``."""

from ._cli import main

raise SystemExit(main())
