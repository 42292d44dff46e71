"""Whether a recorded run (a measurements.json's ``device``) came from the simulated GPU.

The lab notebook records it explicitly: ``device.simulated`` is true for a run on the simulated
GPU (``settings.RUN_ON`` set to ``sim``, shared/settings.py), false otherwise. A file written
before that field existed is told by the device's name, which the simulated GPU has marked
``(simulated)``. Either shows a simulated run: the simulated GPU's name may come to read as the
real part's, so the field is the record that lasts, and a name that says "simulated" is never taken
for a real device whatever the field says.

The grader (task5's checks) and ``python -m shared.submit`` both ask ``is_simulated``, so a
student's hand-in and its grade agree on what a simulated run is.
"""
from __future__ import annotations

#: The key the notebook writes in measurements.json's ``device`` object (a JSON boolean).
FIELD = "simulated"
#: What marks a simulated device's name, in any case ("NVIDIA H100 SXM (simulated)").
NAME_MARK = "simulated"


def is_simulated(device) -> bool:
    """True when ``device`` (measurements.json's ``device`` object, a dict) records a simulated run:
    its ``simulated`` field is true, or, without that field, its name carries the simulator's mark.
    Anything that is not such a dict is not a simulated run (the schema check names what is wrong)."""
    if not isinstance(device, dict):
        return False
    flag = device.get(FIELD)
    if flag is True:
        return True
    name = device.get("name")
    return isinstance(name, str) and NAME_MARK in name.lower()


def why(device: dict) -> str:
    """One clause saying how ``device`` shows it is simulated, for a message."""
    if device.get(FIELD) is True:
        return f"the notebook recorded a simulated run ('device.{FIELD}': true, device {device.get('name')!r})"
    return f"the device {device.get('name')!r} is the simulated GPU"
