"""``python -m shared.decode``: the same as ``python -m shared.decode_bench``."""
from shared.decode.cli import main

raise SystemExit(main())
