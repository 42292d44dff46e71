"""The people loop of a graded class: what a person scores and decides, and what goes back to the
students.

``answers`` reads the notebook's hand-graded questions and a student's answers to them;
``review`` walks them student by student and writes the scores to OUT/overrides.csv;
``requests`` lists students' regrade requests with the checks they concern and writes the
decisions there too; ``ledger`` appends those rows; ``roster`` is the graded class as
OUT/gradebook.csv names it; ``delivery`` packs the feedback pages as Canvas and Moodle take
feedback files in bulk; ``moodle_sheet`` writes Moodle's offline grading worksheet.
"""
