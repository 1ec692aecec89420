"""``python -m vcr_kit``, the same as the ``vcr_kit`` console script: see ``vcr_kit._cli``."""

from ._cli import main

raise SystemExit(main())
