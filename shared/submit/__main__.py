"""``python -m shared.submit``: see shared/submit/cli.py."""
from shared.submit.cli import main

raise SystemExit(main())
