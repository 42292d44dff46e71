"""autograder/lessons"""
