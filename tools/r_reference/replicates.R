# R's survey package on replicate-weight designs: the oracle for
# tests/analysis/test_replicates.py.
#
#   Rscript tools/r_reference/replicates.R        (from the repository root)
#
# Writes the api samples to tests/analysis/fixtures/data/rep_*.csv (first run; with an added
# 0-10 column `nps_q` for the Net Promoter Score), R's bootstrap replicate weights to
# rep_apiclus1_boot_repweights.csv, and every figure to
# tests/analysis/fixtures/r_replicates.json. Needs R >= 4.2, survey 4.1-1, jsonlite.

suppressMessages({
  library(survey)
  library(jsonlite)
})
data(api)
options(survey.replicates.mse = FALSE)

out_dir <- "tests/analysis/fixtures"
data_dir <- file.path(out_dir, "data")
dir.create(data_dir, recursive = TRUE, showWarnings = FALSE)

with_nps <- function(d) {
  d$nps_q <- pmin(10L, (d$api00 - 300L) %/% 55L)
  d$dgroup <- d$dnum %% 7L  # apiclus1: groups of 1-4 clusters (some replicates lack one)
  d
}
apiclus1 <- with_nps(apiclus1)
apistrat <- with_nps(apistrat)
apisrs <- with_nps(apisrs)
keep <- c("cds", "stype", "dnum", "snum", "sch.wide", "awards", "api00", "api99",
          "enroll", "avg.ed", "acs.46", "meals", "nps_q", "dgroup", "pw", "fpc")
write.csv(apiclus1[, keep], file.path(data_dir, "rep_apiclus1.csv"), row.names = FALSE)
write.csv(apistrat[, keep], file.path(data_dir, "rep_apistrat.csv"), row.names = FALSE)
write.csv(apisrs[, keep], file.path(data_dir, "rep_apisrs.csv"), row.names = FALSE)

# The figures of one svrepstat or svyby result: estimate, variance, deff (NULL: none).
figures <- function(x) {
  v <- vcov(x)
  d <- if (inherits(x, "svyby")) {
    as.vector(as.matrix(as.data.frame(x)[, grep("^DEff", names(x)), drop = FALSE]))
  } else {
    tryCatch(as.vector(deff(x)), error = function(e) NULL)
  }
  list(estimate = as.vector(coef(x)), variance = as.vector(diag(as.matrix(v))),
       deff = d)
}

ratio_figures <- function(x) {
  if (inherits(x, "svyby")) {
    return(list(estimate = as.vector(coef(x)), variance = as.vector(SE(x))^2))
  }
  list(estimate = as.vector(coef(x)), variance = as.vector(x$var))
}

# Every statistic the tests compare, on one replicate design.
statistics <- function(d, mean_na) {
  na_formula <- as.formula(paste0("~`", mean_na, "`"))
  list(
    mean = figures(svymean(~api00, d, deff = "replace")),
    mean_missing = figures(svymean(na_formula, d, na.rm = TRUE, deff = "replace")),
    proportions = figures(svymean(~stype, d, deff = "replace")),
    total = figures(svytotal(~enroll, d, deff = "replace")),
    ratio = ratio_figures(svyratio(~api00, ~api99, d)),
    nps = figures(svymean(~I(ifelse(nps_q >= 9, 100, ifelse(nps_q >= 7, 0, -100))), d,
                          deff = "replace")),
    mean_by = figures(svyby(~api00, ~stype, d, svymean, deff = "replace")),
    mean_missing_by = figures(svyby(na_formula, ~sch.wide, d, svymean, na.rm = TRUE,
                                    deff = "replace")),
    proportions_by = figures(svyby(~awards, ~stype, d, svymean, deff = "replace")),
    total_by = figures(svyby(~enroll, ~stype, d, svytotal, deff = "replace")),
    ratio_by = ratio_figures(svyby(~api00, ~stype, d, svyratio, denominator = ~api99)),
    mean_sparse_by = figures(svyby(~api00, ~dgroup, d, svymean, deff = "replace")),
    degf = degf(d),
    scale = d$scale,
    rscales = d$rscales
  )
}

dclus1 <- svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)
dstrat <- svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)
dsrs <- svydesign(id = ~1, weights = ~pw, data = apisrs)

result <- list()

# JK1 on a one-stage cluster sample (with its fpc), centred on the replicates' mean, and
# the same design with mse = TRUE (centred on the full-sample estimate).
jk1 <- as.svrepdesign(dclus1, type = "JK1")
result$apiclus1_jk1 <- statistics(jk1, "avg.ed")
result$apiclus1_jk1_mse <- statistics(as.svrepdesign(dclus1, type = "JK1", mse = TRUE),
                                      "avg.ed")

# JKn on a stratified sample (with its fpc).
jkn <- as.svrepdesign(dstrat, type = "JKn")
result$apistrat_jkn <- statistics(jkn, "acs.46")

# JK1 on a simple random sample without fpc.
result$apisrs_jk1 <- statistics(as.svrepdesign(dsrs, type = "JK1"), "acs.46")

# Canty and Davison's bootstrap: random, so its replicate weights (analysis weights,
# rows x replicates) are exported and the tests rebuild the same design from them.
set.seed(20261126)
boot <- as.svrepdesign(dclus1, type = "bootstrap", replicates = 50)
repweights <- weights(boot, "analysis")
colnames(repweights) <- sprintf("rw%02d", seq_len(ncol(repweights)))
write.csv(repweights, file.path(data_dir, "rep_apiclus1_boot_repweights.csv"),
          row.names = FALSE)
result$apiclus1_boot <- statistics(boot, "avg.ed")

# Raking each JKn replicate: R's rake() of the replicate design (the replicates are raked
# with the full-sample weights, so a raked margin has no variance).
margins <- list(~sch.wide, ~awards)
population <- list(
  data.frame(sch.wide = c("No", "Yes"), Freq = c(1100, 5094)),
  data.frame(awards = c("No", "Yes"), Freq = c(2300, 3894))
)
control <- list(maxit = 1000, epsilon = 1e-13)
raked <- rake(jkn, margins, population, control = control)
result$apistrat_jkn_raked <- statistics(raked, "acs.46")
result$apistrat_jkn_raked$margin <- figures(svymean(~sch.wide, raked))

# What R 4.1 does with an already calibrated design: as.svrepdesign() keeps the calibrated
# weights and builds plain replicates from the design's PSUs (no recalibration), so the
# raked margin keeps a variance. surveykit recalibrates instead (as rake(jkn) above).
raked_first <- rake(dstrat, margins, population, control = control)
result$apistrat_raked_then_jkn <- list(
  margin = figures(svymean(~sch.wide, as.svrepdesign(raked_first, type = "JKn"))),
  mean = figures(svymean(~api00, as.svrepdesign(raked_first, type = "JKn")))
)

# Post-stratification of JK1 replicates.
ps <- postStratify(jk1, ~stype, data.frame(stype = c("E", "H", "M"),
                                           Freq = c(4421, 755, 1018)))
result$apiclus1_jk1_post <- statistics(ps, "avg.ed")

# Linear (GREG) calibration of JK1 replicates (R's regcalibrate: each replicate its own g).
greg <- calibrate(jk1, ~stype + enroll, population = c(`(Intercept)` = 6194, stypeH = 755,
                                                        stypeM = 1018, enroll = 3700000))
result$apiclus1_jk1_greg <- statistics(greg, "avg.ed")

# calibrate() with the raking and logit functions and with bounds: R runs grake on every
# replicate's own weights (calibrate.svyrep.design), to the same totals.
cal_population <- c(`(Intercept)` = 6194, stypeH = 755, stypeM = 1018, enroll = 3700000)
result$apiclus1_jk1_cal_raking <- statistics(
  calibrate(jk1, ~stype + enroll, population = cal_population, calfun = "raking",
            epsilon = 1e-12, maxit = 1000), "avg.ed")
result$apiclus1_jk1_cal_logit <- statistics(
  calibrate(jk1, ~stype + enroll, population = cal_population, calfun = "logit",
            bounds = c(0.5, 2.5), epsilon = 1e-12, maxit = 1000), "avg.ed")
result$apiclus1_boot_cal_raking <- statistics(
  calibrate(boot, ~stype + enroll, population = cal_population, calfun = "raking",
            epsilon = 1e-12, maxit = 1000), "avg.ed")
# calibrate(trim=): factors outside the bounds set to them, the rest spread over the others
# in proportion to their weights, on the full sample and on every replicate (with its own
# weights); and the same trimmed calibration of the linearised design, for comparison.
trim_call <- function(d) suppressMessages(calibrate(
  d, ~stype + enroll, population = cal_population, calfun = "raking", trim = c(0.95, 1.4),
  epsilon = 1e-12, maxit = 1000))
result$apiclus1_jk1_cal_trim <- statistics(trim_call(jk1), "avg.ed")
trimmed_linear <- trim_call(dclus1)
result$apiclus1_cal_trim_linearised <- list(
  mean = figures(svymean(~api00, trimmed_linear, deff = "replace")),
  mean_by = figures(svyby(~api00, ~stype, trimmed_linear, svymean, deff = "replace")),
  total = figures(svytotal(~enroll, trimmed_linear, deff = "replace")),
  weights_sum = sum(weights(trimmed_linear))
)

# (Bounded linear calibration is left out: R's Newton steps with the truncated linear
# function fail to converge on most replicates for bounds that bind, and R keeps such
# replicates with a warning; surveykit raises an error naming the replicate instead.)

# BRR and Fay's method from designs with exactly 2 PSUs per stratum (R's brrweights and
# hadamard): strata numbered 1.. (R orders them as text: 1, 10, 11, ..., 2, ...) and PSUs
# in the order they first appear. 7 strata take R's doubled 4 x 4 matrix (8 replicates),
# 26 its stored 28 x 28 one, 40 a Paley matrix (44 replicates).
clusters <- unique(apiclus1$dnum)[1:14]
brr_clus <- apiclus1[apiclus1$dnum %in% clusters, ]
brr_clus$pair <- (match(brr_clus$dnum, clusters) - 1) %% 7 + 1
brr_strat <- apistrat[1:80, ]
brr_strat$pair <- (seq_len(80) - 1) %/% 2 + 1
write.csv(brr_clus[, c(keep, "pair")], file.path(data_dir, "rep_brr_clus.csv"),
          row.names = FALSE)
write.csv(brr_strat[, c(keep, "pair")], file.path(data_dir, "rep_brr_strat.csv"),
          row.names = FALSE)
d_brr_clus <- svydesign(id = ~dnum, strata = ~pair, weights = ~pw, data = brr_clus)
d_brr_26 <- svydesign(id = ~1, strata = ~pair, weights = ~pw, data = brr_strat[1:52, ])
d_brr_40 <- svydesign(id = ~1, strata = ~pair, weights = ~pw, data = brr_strat)
result$brr_clus <- statistics(as.svrepdesign(d_brr_clus, type = "BRR"), "avg.ed")
result$brr_26 <- statistics(as.svrepdesign(d_brr_26, type = "BRR"), "acs.46")
result$fay_26 <- statistics(as.svrepdesign(d_brr_26, type = "Fay", fay.rho = 0.3), "acs.46")
result$brr_40 <- statistics(as.svrepdesign(d_brr_40, type = "BRR"), "acs.46")
result$brr_clus_raked <- statistics(
  rake(as.svrepdesign(d_brr_clus, type = "Fay", fay.rho = 0.5), list(~sch.wide),
       list(data.frame(sch.wide = c("No", "Yes"), Freq = c(1100, 5094))),
       control = control), "avg.ed")
result$brr_26$multipliers <- weights(as.svrepdesign(d_brr_26, type = "BRR"), "analysis") /
  brr_strat$pw[1:52]

# A stratum with one PSU (the first school on its own), under R's lonely-PSU options.
lonely <- apistrat
lonely$stratum <- as.character(lonely$stype)
lonely$stratum[1] <- "Z"
write.csv(cbind(lonely[, keep], stratum = lonely$stratum),
          file.path(data_dir, "rep_apistrat_lonely.csv"), row.names = FALSE)
for (rule in c("adjust", "remove", "certainty")) {
  options(survey.lonely.psu = rule)
  d <- svydesign(id = ~1, strata = ~stratum, weights = ~pw, data = lonely)
  result[[paste0("apistrat_lonely_", rule)]] <- statistics(as.svrepdesign(d, type = "JKn"),
                                                            "acs.46")
}
options(survey.lonely.psu = "fail")

# R's Hadamard matrices (rows as 0/1 text) for a few numbers of strata: stored, doubled
# and Paley matrices.
result$hadamard <- lapply(c(3, 7, 12, 26, 40, 50, 100, 150), function(n) {
  list(n = n, rows = apply(survey:::hadamard(n), 1, paste, collapse = ""))
})

result$versions <- list(R = R.version.string,
                        survey = as.character(packageVersion("survey")))

write_json(result, file.path(out_dir, "r_replicates.json"), digits = NA,
           auto_unbox = TRUE, pretty = TRUE)
