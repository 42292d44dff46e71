"""autograder/reports"""
