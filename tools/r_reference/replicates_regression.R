# R's svyglm on replicate-weight designs (survey:::svyglm.svyrep.design): the oracle for
# sk.analysis.regress on a ReplicateDesign (tests/analysis/test_replicates_regression.py).
#
#   Rscript tools/r_reference/replicates_regression.R        (from the repository root)
#
# Reads the samples replicates.R wrote (tests/analysis/fixtures/data/rep_*.csv and R's
# bootstrap replicate weights rep_apiclus1_boot_repweights.csv), and writes every figure to
# tests/analysis/fixtures/r_replicates_regression.json. Needs R >= 4.2, survey 4.1-1,
# jsonlite.
#
# What R does (survey 4.1, svyglm.svyrep.design): the full-sample fit is glm() with the
# weights rescaled to mean 1; every replicate is refitted by glm.fit() with its analysis
# weights (rescaled to sum 1) from the full-sample coefficients (start = beta0) and the
# same glm.control; the variance is svrVar() of the replicate coefficients with the
# design's scale, rscales and mse; df.residual is degf(design) + 1 - (coefficients), with
# degf() of the design as given (before the rows missing a model variable are dropped);
# confint() is confint.svyglm's Wald interval with the t quantile on df.residual.

suppressMessages({
  library(survey)
  library(jsonlite)
})
options(survey.replicates.mse = FALSE)
data_dir <- "tests/analysis/fixtures/data"
read <- function(name) read.csv(file.path(data_dir, paste0("rep_", name, ".csv")))
apiclus1 <- read("apiclus1")
apistrat <- read("apistrat")
brr_clus <- read("brr_clus")
brr_strat <- read("brr_strat")

dclus1 <- svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)
dstrat <- svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)
repweights <- read.csv(file.path(data_dir, "rep_apiclus1_boot_repweights.csv"))
margins <- list(~sch.wide, ~awards)
population <- list(
  data.frame(sch.wide = c("No", "Yes"), Freq = c(1100, 5094)),
  data.frame(awards = c("No", "Yes"), Freq = c(2300, 3894))
)
control <- list(maxit = 1000, epsilon = 1e-13)
jkn <- as.svrepdesign(dstrat, type = "JKn")

designs <- list(
  apiclus1_jk1 = as.svrepdesign(dclus1, type = "JK1"),
  apiclus1_jk1_mse = as.svrepdesign(dclus1, type = "JK1", mse = TRUE),
  apistrat_jkn = jkn,
  apiclus1_boot = svrepdesign(data = apiclus1, repweights = repweights, weights = ~pw,
                              type = "bootstrap", combined.weights = TRUE),
  brr_clus = as.svrepdesign(svydesign(id = ~dnum, strata = ~pair, weights = ~pw,
                                      data = brr_clus), type = "BRR"),
  fay_26 = as.svrepdesign(svydesign(id = ~1, strata = ~pair, weights = ~pw,
                                    data = brr_strat[1:52, ]), type = "Fay", fay.rho = 0.3),
  apistrat_jkn_raked = rake(jkn, margins, population, control = control)
)
designs$apiclus1_jk1_e <- subset(designs$apiclus1_jk1, stype == "E")
# GREG and raking calibrate() of JK1 replicates (each replicate calibrated with its weights)
cal_population <- c(`(Intercept)` = 6194, stypeH = 755, stypeM = 1018, enroll = 3700000)
designs$apiclus1_jk1_greg <- calibrate(designs$apiclus1_jk1, ~stype + enroll,
                                       population = cal_population)
designs$apiclus1_jk1_cal_raking <- calibrate(designs$apiclus1_jk1, ~stype + enroll,
                                             population = cal_population, calfun = "raking",
                                             epsilon = 1e-12, maxit = 1000)

# The missing-valued predictor of each sample (avg.ed: 4 NAs in apiclus1; acs.46 in
# apistrat), so that the rows dropped and the degrees of freedom are exercised.
predictor <- c(apiclus1_jk1 = "avg.ed", apiclus1_jk1_mse = "avg.ed", apistrat_jkn = "acs.46",
               apiclus1_boot = "avg.ed", brr_clus = "avg.ed", fay_26 = "acs.46",
               apistrat_jkn_raked = "acs.46", apiclus1_jk1_e = "avg.ed",
               apiclus1_jk1_greg = "avg.ed", apiclus1_jk1_cal_raking = "avg.ed")

fit <- function(name, formula, family) {
  d <- designs[[name]]
  warnings <- 0L
  g <- withCallingHandlers(
    svyglm(formula, design = d, family = family,
           control = glm.control(epsilon = 1e-30, maxit = 100), return.replicates = TRUE),
    warning = function(w) {
      warnings <<- warnings + 1L
      invokeRestart("muffleWarning")
    })
  s <- summary(g)$coefficients
  ci <- confint(g, level = 0.95)
  ci90 <- confint(g, level = 0.90)
  quasi <- family$family == "quasibinomial"
  vars <- all.vars(formula)
  complete <- complete.cases(d$variables[, vars])
  out <- list(design = name, formula = deparse(formula), family = family$family,
              terms = rownames(s), estimate = unname(s[, 1]), se = unname(s[, 2]),
              statistic = unname(s[, 3]), p_value = unname(s[, 4]),
              df_residual = g$df.residual, degf = degf(d),
              degf_complete = degf(d[complete, ]),
              ci_low = unname(ci[, 1]), ci_high = unname(ci[, 2]),
              ci90_low = unname(ci90[, 1]), ci90_high = unname(ci90[, 2]),
              vcov = unname(as.matrix(vcov(g))), n = sum(complete & weights(d, "sampling") > 0),
              dropped = sum(!complete), warnings = warnings,
              replicates_first = unname(g$replicates[1, ]),
              scale = d$scale, rscales = d$rscales, mse = isTRUE(d$mse))
  if (quasi) {
    out$odds_ratio <- unname(exp(coef(g)))
    out$or_ci_low <- unname(exp(ci[, 1]))
    out$or_ci_high <- unname(exp(ci[, 2]))
  }
  out
}

result <- list()
for (name in names(designs)) {
  x <- predictor[[name]]
  factor <- if (name == "apiclus1_jk1_e") "sch.wide" else "stype"  # a domain of one stype
  gaussian_formula <- as.formula(paste("api00 ~ meals +", factor, "+", x))
  binomial_formula <- as.formula(paste("I(awards == \"Yes\") ~ meals + ", x))
  result[[paste0(name, "_gaussian")]] <- fit(name, gaussian_formula, gaussian())
  result[[paste0(name, "_binomial")]] <- fit(name, binomial_formula, quasibinomial())
}
result$apiclus1_jk1_interaction <- fit("apiclus1_jk1", api00 ~ meals * stype - 1, gaussian())

result$versions <- list(R = R.version.string,
                        survey = as.character(packageVersion("survey")))
write_json(result, "tests/analysis/fixtures/r_replicates_regression.json", digits = NA,
           auto_unbox = TRUE, pretty = TRUE)
