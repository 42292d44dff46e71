"""autograder/gpu"""
