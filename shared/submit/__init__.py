"""``python -m shared.submit``: check a lab folder and build the zip to hand in.

It reads what is graded from course.yml (each task's modules and ``files``, the list the grader
uses), says per task which files will be graded and which are missing, runs the public tests and
says per task how they went, then writes the zip. A missing graded file refuses the zip (exit 1)
unless ``--allow-missing`` is given. Modules: ``plan.py`` (what is graded, what is there),
``public.py`` (the public tests, per task), ``report_plugin.py`` (the pytest plugin behind it),
``archive.py`` (the zip), ``cli.py`` (the command).
"""
