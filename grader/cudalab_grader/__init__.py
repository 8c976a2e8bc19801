"""cudalab's grader: a whole class's submissions, each lab built and tested in a sandbox."""
