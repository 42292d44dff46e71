"""A student's zip, bounded before the standard library reads it.

``zipfile.ZipFile`` reads the whole central directory when it opens an archive, one Python object
per entry: a 110 MB zip of 2 million entries cost 10-35 s and 1 GiB before any per-entry check
could refuse it. ``open_zip`` first reads only the end of the file, the same End of Central
Directory record zipfile will use (its zip64 form too), and refuses, with one line naming the zip,
an archive larger than ``MAX_ZIP_BYTES``, one declaring more than ``MAX_ENTRIES`` entries, or one
whose central directory is larger than ``MAX_DIRECTORY_BYTES`` (zipfile parses entries only
within it, 46 bytes at least each, so this bounds its work whatever the count says). After
opening, the entries are counted again.

A zip inside a zip is never opened: it is a plain file, under the per-file size bound.
Every place that opens a student's zip goes through here: ``grade`` (autograder/core/submission.py),
grade-all's discovery (autograder/classdata/discover.py), its plots (autograder/lessons/why17/plotdata.py)
and the similarity report (autograder/similarity/compare.py).
"""
from __future__ import annotations

import lzma
import os
import zipfile
import zlib
from pathlib import Path

#: Largest zip opened, in bytes (a submission holds at most 50 MiB: autograder/core/submission.py).
MAX_ZIP_BYTES = 64 * 2**20
#: Most entries (files, folders, macOS droppings) a zip may declare.
MAX_ENTRIES = 2000
#: Largest central directory read, in bytes (2,000 entries with 300-byte names fit in 0.7 MiB).
MAX_DIRECTORY_BYTES = 2 * 2**20
#: Everything reading an entry of an opened zip may raise on damaged or unusual data: a bad CRC
#: or header (BadZipFile), a truncated stream (EOFError), an unsupported compression method
#: (NotImplementedError), an encrypted entry (RuntimeError), damaged deflate (zlib.error), bzip2
#: (OSError) or LZMA (LZMAError) data, a bad field (ValueError). Every reader of a student's zip
#: catches exactly these, so a damaged entry is one line, never a traceback.
READ_ERRORS = (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError, ValueError,
               zlib.error, lzma.LZMAError)


class ZipRefused(ValueError):
    """A zip over a bound or without a readable end record. ``reason`` is one line; the message
    is the zip's name, a colon and the reason."""

    def __init__(self, path: Path, reason: str, *, unreadable: bool = False):
        super().__init__(f"{path.name}: {reason}")
        #: True when the file is no zip zipfile can read (no end record, damaged), not over a bound
        self.path, self.reason, self.unreadable = path, reason, unreadable


def check(path: Path | str) -> None:
    """Raise ZipRefused unless the zip at ``path`` is within every bound (reads its tail only)."""
    path = Path(path)
    try:
        size = os.stat(path).st_size
        if size > MAX_ZIP_BYTES:
            raise ZipRefused(path, f"the zip is {size / 2**20:.0f} MiB, more than {MAX_ZIP_BYTES // 2**20} MiB")
        with open(path, "rb") as fh:
            # zipfile's own reader of the end record: it reads the last 64 KiB at most.
            end = zipfile._EndRecData(fh)
    except OSError as exc:
        raise ZipRefused(path, f"cannot read the zip ({exc.strerror or one_line(exc)})") from None
    if end is None:
        raise ZipRefused(path, "unreadable zip (no end of central directory record)", unreadable=True)
    entries, directory = end[zipfile._ECD_ENTRIES_TOTAL], end[zipfile._ECD_SIZE]
    if entries > MAX_ENTRIES:
        raise ZipRefused(path, f"the zip holds {entries} entries, more than {MAX_ENTRIES}; submit only your work")
    if directory > MAX_DIRECTORY_BYTES:
        raise ZipRefused(path, f"the zip's central directory is {directory} bytes, more than "
                               f"{MAX_DIRECTORY_BYTES // 2**20} MiB")


def open_zip(path: Path | str) -> zipfile.ZipFile:
    """The zip at ``path``, opened once ``check`` passed and its entries recounted.

    Raises:
        ZipRefused: over a bound, or not a zip zipfile can read (one line, the zip's name first).
    """
    path = Path(path)
    check(path)
    try:
        archive = zipfile.ZipFile(path)
    except READ_ERRORS as exc:
        raise ZipRefused(path, f"unreadable zip ({one_line(exc)})", unreadable=True) from None
    if len(archive.filelist) > MAX_ENTRIES:
        archive.close()
        raise ZipRefused(path, f"the zip holds more than {MAX_ENTRIES} entries; submit only your work")
    if any(not info.filename for info in archive.filelist):
        archive.close()   # zipfile itself trips over such an entry (ZipInfo.is_dir)
        raise ZipRefused(path, "an entry of the zip has an empty name")
    return archive


def one_line(exc: BaseException) -> str:
    """An exception's text on one short line."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]
