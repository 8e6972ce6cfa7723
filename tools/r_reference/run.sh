#!/bin/sh
# Regenerate the R `survey` reference fixtures (data + r_reference.json) and check
# that every double in the JSON reads back exactly.
# Needs: python with numpy + pandas; R with survey, MASS, jsonlite
#   (apt-get install -y r-base-core r-cran-survey r-cran-mass r-cran-jsonlite)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
PYTHON=${PYTHON:-python}
hex=$(mktemp)
trap 'rm -f "$hex"' EXIT
"$PYTHON" tools/r_reference/make_data.py
R_REFERENCE_HEX="$hex" Rscript tools/r_reference/reference.R
"$PYTHON" tools/r_reference/check_json.py "$hex"
# svyglm on replicate designs (reads the committed rep_*.csv that replicates.R writes)
Rscript tools/r_reference/replicates_regression.R
