# R's survey package: tests and quantiles on replicate-weight designs, the oracle for the
# crosstab / compare / quantiles tests in tests/analysis/test_replicates.py.
#
#   Rscript tools/r_reference/replicates_tests.R    (from the repository root, after
#                                                    replicates.R has written the data)
#
# Reads tests/analysis/fixtures/data/rep_*.csv and writes
# tests/analysis/fixtures/r_replicates_tests.json:
#   chisq:     svychisq(~q + by, design, statistic = "F" and "Chisq")
#   ttest:     svyttest(y ~ group, design)
#   letters:   svyttest(I(q == level) ~ I(by == b), design[by %in% c(a, b), ])
#   quantiles: svyquantile(~x, design, q, ci = TRUE, na.rm = TRUE), whole and per group
#              (design[by == g, ], what svyby does)
# on a JK1 (apiclus1), a JKn (apistrat), a raked JKn, BRR (26 strata of 2 schools), Fay
# (rho 0.5, 7 strata of 2 clusters) and a bootstrap whose replicate weights are supplied
# with the data (svrepdesign(..., combined.weights = TRUE)).
# Needs R >= 4.2, survey 4.1-1, jsonlite.

suppressMessages({
  library(survey)
  library(jsonlite)
})
options(survey.replicates.mse = FALSE)

data_dir <- "tests/analysis/fixtures/data"
read <- function(name) read.csv(file.path(data_dir, name), stringsAsFactors = FALSE)
prepare <- function(d) {
  # a derived answer with missing values: the schools' parents' education, high or low
  d$ed <- ifelse(is.na(d$avg.ed), NA, ifelse(d$avg.ed >= 3, "high", "low"))
  d$nps_score <- ifelse(d$nps_q >= 9, 100, ifelse(d$nps_q >= 7, 0, -100))
  d
}
apiclus1 <- prepare(read("rep_apiclus1.csv"))
apistrat <- prepare(read("rep_apistrat.csv"))
repweights <- as.matrix(read("rep_apiclus1_boot_repweights.csv"))
boot_scale <- fromJSON("tests/analysis/fixtures/r_replicates.json")$apiclus1_boot$scale

dclus1 <- svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)
dstrat <- svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)
jkn <- as.svrepdesign(dstrat, type = "JKn")
designs <- list(
  apiclus1_jk1 = as.svrepdesign(dclus1, type = "JK1"),
  apistrat_jkn = jkn,
  apistrat_jkn_raked = rake(
    jkn, list(~sch.wide, ~awards),
    list(data.frame(sch.wide = c("No", "Yes"), Freq = c(1100, 5094)),
         data.frame(awards = c("No", "Yes"), Freq = c(2300, 3894))),
    control = list(maxit = 1000, epsilon = 1e-13)
  ),
  brr_26 = as.svrepdesign(
    svydesign(id = ~1, strata = ~pair, weights = ~pw,
              data = prepare(read("rep_brr_strat.csv"))[1:52, ]),
    type = "BRR"
  ),
  fay_clus = as.svrepdesign(
    svydesign(id = ~dnum, strata = ~pair, weights = ~pw,
              data = prepare(read("rep_brr_clus.csv"))),
    type = "Fay", fay.rho = 0.5
  ),
  apiclus1_supplied_boot = svrepdesign(
    data = apiclus1, weights = ~pw, repweights = repweights, type = "bootstrap",
    combined.weights = TRUE, scale = boot_scale, rscales = 1
  )
)

chisq <- function(design, q, by) {
  f <- as.formula(paste0("~", q, "+", by))
  rs_f <- svychisq(f, design, statistic = "F")
  rs_c <- suppressWarnings(svychisq(f, design, statistic = "Chisq"))
  list(question = q, by = by,
       F = unname(rs_f$statistic), ndf = unname(rs_f$parameter[["ndf"]]),
       ddf = unname(rs_f$parameter[["ddf"]]), p_F = rs_f$p.value,
       chisq = unname(rs_c$statistic), chisq_df = unname(rs_c$parameter[["df"]]),
       p_chisq = rs_c$p.value, degf = degf(design))
}

ttest <- function(design, y, group, label = y) {
  t <- svyttest(as.formula(paste0(y, "~", group)), design)
  list(y = label, group = group,
       statistic = unname(t$statistic), df = unname(t$parameter),
       p_value = t$p.value, difference = unname(t$estimate),
       ci_low = t$conf.int[1], ci_high = t$conf.int[2])
}

letters <- function(design, q, by) {
  values <- design$variables
  groups <- sort(unique(na.omit(values[[by]])))
  levels <- sort(unique(na.omit(values[[q]])))
  out <- list()
  for (i in seq_along(groups)) for (j in seq_along(groups)) if (i < j) {
    a <- groups[i]; b <- groups[j]
    pair <- design[!is.na(values[[by]]) & values[[by]] %in% c(a, b), ]
    for (level in levels) {
      r <- ttest(pair, sprintf('I(%s == "%s")', q, level), sprintf('I(%s == "%s")', by, b))
      r$question <- q; r$by <- by; r$level <- level; r$a <- a; r$b <- b
      out[[length(out) + 1]] <- r
    }
  }
  out
}

quantile_rows <- function(design, x, probs, group = NA) {
  q <- svyquantile(as.formula(paste0("~", x)), design, probs, ci = TRUE, na.rm = TRUE)[[1]]
  kept <- design[!is.na(design$variables[[x]]), ]
  list(variable = x, group = group, q = probs, estimate = unname(q[, 1]),
       ci_low = unname(q[, 2]), ci_high = unname(q[, 3]), se = unname(q[, 4]),
       df = degf(kept))
}

quantiles <- function(design, x, by, probs = c(0.25, 0.5, 0.75)) {
  out <- list(quantile_rows(design, x, probs))
  for (g in sort(unique(na.omit(design$variables[[by]])))) {
    part <- design[!is.na(design$variables[[by]]) & design$variables[[by]] == g, ]
    out[[length(out) + 1]] <- quantile_rows(part, x, probs, g)
  }
  out
}

cases <- function(d) {
  list(
    degf = degf(d),
    chisq = list(chisq(d, "sch.wide", "stype"), chisq(d, "awards", "stype"),
                 chisq(d, "ed", "stype")),
    ttest = list(ttest(d, "api00", "awards"), ttest(d, 'I(sch.wide == "Yes")', "awards"),
                 ttest(d, "nps_score", "awards"), ttest(d, "avg.ed", "awards")),
    letters = c(letters(d, "awards", "stype"), letters(d, "ed", "stype")),
    quantiles = c(quantiles(d, "api00", "stype"), quantiles(d, "avg.ed", "awards"))
  )
}

result <- lapply(designs, cases)
result$versions <- list(R = R.version.string,
                        survey = as.character(packageVersion("survey")))
write_json(result, "tests/analysis/fixtures/r_replicates_tests.json", digits = NA,
           auto_unbox = TRUE, pretty = TRUE)
