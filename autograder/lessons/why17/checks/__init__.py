"""The hidden checks, one module per concept; importing a module registers its checks.

What the engine needs besides the checks (the files roofline.py's checks also run, the files a
submission holds) is declared in the package's LESSON (autograder/lessons/why17/__init__.py).
"""
