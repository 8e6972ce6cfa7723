"""``python -m surveykit.cli``: the command line."""

from surveykit.cli._app import main

if __name__ == "__main__":
    main()
