"""What `make check`, `make test`'s self-checks, `cudalab` and the grader share: the labs and their
rubrics (labs, rubric), the rules of what a student's code may define and call (symbols), build
logs (build_log), and how a GoogleTest test is run and its verdict decided (gtest).

Scripts beside this package (common/tools/*.py) import it directly; the grader reaches it through
grader/cudalab_tools, a link to this folder.
"""
