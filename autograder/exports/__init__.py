"""autograder/exports"""
