"""The why17 lesson's student-visible checking code (see ``gpu``)."""
