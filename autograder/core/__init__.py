"""autograder/core"""
