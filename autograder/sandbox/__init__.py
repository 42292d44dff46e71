"""autograder/sandbox"""
