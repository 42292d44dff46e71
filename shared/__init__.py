"""Code that students, reference solutions and the grader all use.

Modules: ``tables`` (hardware and model data with sources), ``validate`` (argument checks),
``devices`` (picking and describing a torch device), ``simgpu`` (the simulated GPU).
"""
