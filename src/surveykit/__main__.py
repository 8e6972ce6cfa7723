"""``python -m surveykit``: the command line where ``surveykit`` is not on PATH."""

from surveykit.cli import main

if __name__ == "__main__":
    main()
