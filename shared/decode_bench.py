"""``python -m shared.decode_bench``: the decode benchmark's entry point (see shared/decode/)."""
from shared.decode.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
