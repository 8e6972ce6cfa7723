#!/bin/sh
# Regenerate the R `survey` reference fixtures (data + r_reference.json).
# Needs: python with numpy + pandas; R with survey, MASS, jsonlite
#   (apt-get install -y r-base-core r-cran-survey r-cran-mass r-cran-jsonlite)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
PYTHON=${PYTHON:-python}
"$PYTHON" tools/r_reference/make_data.py
Rscript tools/r_reference/reference.R
