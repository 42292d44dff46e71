"""The why17 lesson's student-visible checking code: the GPU verdicts (``gpu``) and what the
student command prints before them (``show``)."""
