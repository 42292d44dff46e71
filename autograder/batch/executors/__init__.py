"""autograder/batch/executors"""
