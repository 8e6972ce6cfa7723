# Reference figures for sk.analysis.regress (R's svyglm) and sk.analysis.quantiles
# (R's svyquantile, survey 4.1 defaults: qrule="math", interval.type="mean" (Woodruff)).
#
# Run from the repository root:
#   python tools/r_reference/rq_sms_data.py        # the seeded SMS-like data set
#   Rscript tools/r_reference/regression_quantiles.R
# It writes the api samples it uses to tests/analysis/fixtures/data/rq_*.csv, reads every
# data set back from those CSVs (so both sides see the same numbers) and writes
# tests/analysis/fixtures/r_regression_quantiles.json.  Needs survey (4.1-1) and jsonlite.

suppressPackageStartupMessages({
  library(survey)
  library(jsonlite)
})
data(api)
dir <- "tests/analysis/fixtures/data"
cols <- c("stype", "dnum", "snum", "api00", "api99", "ell", "meals", "mobility",
          "sch.wide", "pw", "fpc")
write.csv(apistrat[, cols], file.path(dir, "rq_apistrat.csv"), row.names = FALSE)
write.csv(apiclus1[, cols], file.path(dir, "rq_apiclus1.csv"), row.names = FALSE)
strat <- read.csv(file.path(dir, "rq_apistrat.csv"))
clus1 <- read.csv(file.path(dir, "rq_apiclus1.csv"))
sms <- read.csv(file.path(dir, "rq_sms.csv"))
ties <- read.csv(file.path(dir, "rq_ties.csv"))

dstrat <- svydesign(id = ~1, strata = ~stype, weights = ~pw, fpc = ~fpc, data = strat)
dclus1 <- svydesign(id = ~dnum, weights = ~pw, fpc = ~fpc, data = clus1)
stype_pop <- as.vector(table(apipop$stype))        # E, H, M
wide_pop <- as.vector(table(apipop$sch.wide))      # No, Yes
draked <- rake(dclus1, list(~stype, ~sch.wide),
               list(data.frame(stype = c("E", "H", "M"), Freq = stype_pop),
                    data.frame(sch.wide = c("No", "Yes"), Freq = wide_pop)),
               control = list(epsilon = 1e-12, maxit = 1000))
dsms <- svydesign(id = ~cluster, strata = ~region, weights = ~w, fpc = ~fpc, data = sms,
                  nest = TRUE)
dties <- svydesign(id = ~1, weights = ~w, data = ties)
designs <- list(strat = dstrat, clus1 = dclus1, raked = draked, sms = dsms, ties = dties,
                clus1_e = subset(dclus1, stype == "E"),
                raked_e = subset(draked, stype == "E"))

# epsilon = 1e-30, not 1e-12: at 1e-12 (or 1e-15) glm stops one IRLS step early for a logistic fit
# (its sandwich uses the working weights of the step before), 1.7e-8 off the converged
# se on apistrat and 1.4e-6 off a p-value on the raked domain; surveykit converges fully.
fit <- function(design, formula, family) {
  g <- svyglm(formula, design = designs[[design]], family = family,
              control = glm.control(epsilon = 1e-30, maxit = 100))
  s <- summary(g)$coefficients
  ci <- confint(g, level = 0.95)
  quasi <- family$family == "quasibinomial"
  stopifnot(g$converged)
  out <- list(design = design, iterations = g$iter, formula = deparse(formula), family = family$family,
              terms = rownames(s), estimate = unname(s[, 1]), se = unname(s[, 2]),
              statistic = unname(s[, 3]), p_value = unname(s[, 4]),
              df_residual = g$df.residual, degf = degf(g$survey.design),
              ci_low = unname(ci[, 1]), ci_high = unname(ci[, 2]),
              n = sum(g$prior.weights > 0))
  if (quasi) {
    out$odds_ratio <- unname(exp(coef(g)))
    out$or_ci_low <- unname(exp(ci[, 1]))
    out$or_ci_high <- unname(exp(ci[, 2]))
  }
  out
}

gauss <- gaussian()
logit <- quasibinomial()
regressions <- list(
  strat_gaussian = fit("strat", api00 ~ ell + meals + mobility, gauss),
  strat_binomial = fit("strat", I(sch.wide == "Yes") ~ ell + meals + stype, logit),
  clus1_gaussian = fit("clus1", api00 ~ ell + meals + mobility, gauss),
  clus1_binomial = fit("clus1", I(sch.wide == "Yes") ~ ell + meals + stype, logit),
  raked_gaussian = fit("raked", api00 ~ ell + meals + mobility, gauss),
  raked_binomial = fit("raked", I(sch.wide == "Yes") ~ ell + meals + stype, logit),
  strat_no_intercept = fit("strat", api00 ~ ell + stype - 1, gauss),
  clus1_e_gaussian = fit("clus1_e", api00 ~ ell + meals + mobility, gauss),
  raked_e_binomial = fit("raked_e", I(sch.wide == "Yes") ~ ell + meals, logit),
  sms_gaussian = fit("sms", spend ~ age + channel + nps + age:channel, gauss),
  sms_binomial = fit("sms", renew ~ age + channel + nps, logit),
  sms_factors = fit("sms", spend ~ channel * region, gauss)
)

probs <- c(0.25, 0.5, 0.75)
whole <- function(design, variable) {
  q <- svyquantile(as.formula(paste0("~", variable)), designs[[design]], probs, ci = TRUE,
                   na.rm = TRUE)
  ci <- confint(q)
  list(design = design, variable = variable, q = probs, group = rep(NA, length(probs)),
       estimate = unname(coef(q)), se = unname(SE(q)),
       ci_low = unname(ci[, 1]), ci_high = unname(ci[, 2]))
}
by_group <- function(design, variable, by) {
  r <- svyby(as.formula(paste0("~", variable)), as.formula(paste0("~", by)),
             designs[[design]], svyquantile, quantiles = probs, ci = TRUE, na.rm = TRUE,
             vartype = c("se", "ci"))
  groups <- as.character(r[[by]])
  k <- length(probs)
  est <- as.matrix(r[, 1 + seq_len(k)])
  se <- as.matrix(r[, 1 + k + seq_len(k)])
  low <- as.matrix(r[, 1 + 2 * k + seq_len(k)])
  high <- as.matrix(r[, 1 + 3 * k + seq_len(k)])
  list(design = design, variable = variable, by = by,
       columns = names(r),
       group = rep(groups, each = k), q = rep(probs, length(groups)),
       estimate = as.vector(t(est)), se = as.vector(t(se)),
       ci_low = as.vector(t(low)), ci_high = as.vector(t(high)))
}
quantiles <- list(
  strat = whole("strat", "api00"),
  clus1 = whole("clus1", "api00"),
  raked = whole("raked", "api00"),
  strat_by_stype = by_group("strat", "api00", "stype"),
  clus1_by_stype = by_group("clus1", "api00", "stype"),
  raked_by_sch_wide = by_group("raked", "api00", "sch.wide"),
  sms_satisfaction = whole("sms", "satisfaction"),
  sms_nps = whole("sms", "nps"),
  sms_satisfaction_by_channel = by_group("sms", "satisfaction", "channel"),
  sms_nps_by_region = by_group("sms", "nps", "region"),
  ties = whole("ties", "x")
)

out <- list(
  r_version = R.version.string,
  survey_version = as.character(packageVersion("survey")),
  rake_targets = list(stype = list(E = stype_pop[1], H = stype_pop[2], M = stype_pop[3]),
                      sch.wide = list(No = wide_pop[1], Yes = wide_pop[2])),
  regressions = regressions,
  quantiles = quantiles
)
write_json(out, "tests/analysis/fixtures/r_regression_quantiles.json", digits = NA,
           auto_unbox = TRUE, pretty = TRUE)
