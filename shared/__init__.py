"""Code that students, reference solutions and the grader all use.

Modules: ``tables`` (hardware and model data with sources), ``validate`` (argument checks),
``devices`` (picking and describing a torch device), ``simgpu`` (the simulated GPU),
``sweep_reading`` (what a bandwidth sweep shows: a cache cliff or not, and why), ``spread``
(repeated measurements as median and min-max).
"""
