"""The submission zip: the graded files of the lab folder, at the top of the zip, nothing else.

Written to a temporary file beside the target and renamed into place, so a failed run never leaves
half a zip where the last good one was.
"""
from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path


def write(folder: Path, names: list[str] | tuple[str, ...], target: Path) -> Path:
    """Zip ``folder/<name>`` for each of ``names`` (those that exist) into ``target``; its path."""
    target = Path(target).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name in names:
                if (folder / name).is_file():
                    zf.write(folder / name, arcname=name)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
