"""autograder/runtime"""
