# The R oracle of surveykit's tests between groups and waves (crosstab, compare).
#
# Reads tests/analysis/fixtures/data/tbg_*.csv (the api samples are written here from R's
# `survey` package on the first run; tbg_sms.csv comes from
# make_tests_between_groups_data.py) and writes
# tests/analysis/fixtures/r_tests_between_groups.json:
#   chisq:   svychisq(~q + by, design, statistic = "F" and "Chisq")
#   ttest:   svyttest(y ~ group, design) (means, 0/1 indicators, NPS scores)
#   letters: svyttest(I(q == level) ~ I(by == b), subset(design, by %in% c(a, b)))
# Run from the repository root: Rscript tools/r_reference/tests_between_groups.R
# (R 4.2.2, survey 4.1-1, jsonlite).
suppressPackageStartupMessages({
  library(survey)
  library(jsonlite)
})
data(api)
dir <- "tests/analysis/fixtures/data"
write_api <- function(frame, name) {
  path <- file.path(dir, name)
  write.csv(frame, path, row.names = FALSE, na = "")
}
write_api(apistrat, "tbg_apistrat.csv")
write_api(apiclus1, "tbg_apiclus1.csv")
read <- function(name) {
  read.csv(file.path(dir, name), na.strings = "", stringsAsFactors = FALSE)
}
strat_data <- read("tbg_apistrat.csv")
clus1_data <- read("tbg_apiclus1.csv")
sms <- read("tbg_sms.csv")
sms$nps_score <- ifelse(sms$q_nps >= 9, 100, ifelse(sms$q_nps >= 7, 0, -100))

stype_totals <- as.data.frame(table(stype = apipop$stype))
schwide_totals <- as.data.frame(table(sch.wide = apipop$sch.wide))

designs <- list(
  apistrat = svydesign(id = ~1, strata = ~stype, weights = ~pw, fpc = ~fpc,
                       data = strat_data),
  apiclus1 = svydesign(id = ~dnum, weights = ~pw, fpc = ~fpc, data = clus1_data)
)
designs$apiclus1_raked <- rake(
  designs$apiclus1, list(~stype, ~sch.wide), list(stype_totals, schwide_totals),
  control = list(epsilon = 1e-12, maxit = 1000)
)
designs$sms <- svydesign(id = ~household, strata = ~region, weights = ~w, fpc = ~fpc,
                         nest = TRUE, data = sms)
designs$sms_weights <- svydesign(id = ~1, weights = ~w, data = sms)
designs$sms_waves <- svydesign(id = ~1, strata = ~wave, weights = ~w, data = sms)
# subsets: R drops the other rows of a design, keeps them (weight 0) in a calibrated one
designs$apistrat_E <- subset(designs$apistrat, stype == "E")
designs$apiclus1_raked_E <- subset(designs$apiclus1_raked, stype == "E")

chisq <- function(design_name, q, by) {
  design <- designs[[design_name]]
  f <- as.formula(paste0("~", q, "+", by))
  rs_f <- svychisq(f, design, statistic = "F")
  rs_c <- svychisq(f, design, statistic = "Chisq")
  list(design = design_name, question = q, by = by,
       F = unname(rs_f$statistic), ndf = unname(rs_f$parameter[["ndf"]]),
       ddf = unname(rs_f$parameter[["ddf"]]), p_F = rs_f$p.value,
       chisq = unname(rs_c$statistic), chisq_df = unname(rs_c$parameter[["df"]]),
       p_chisq = rs_c$p.value)
}

ttest <- function(design_name, y, group, label = y, levels = NULL, design = NULL) {
  if (is.null(design)) design <- designs[[design_name]]
  f <- as.formula(paste0(y, "~", group))
  t <- svyttest(f, design)
  list(design = design_name, y = label, group = group, levels = levels,
       statistic = unname(t$statistic), df = unname(t$parameter),
       p_value = t$p.value, difference = unname(t$estimate),
       ci_low = t$conf.int[1], ci_high = t$conf.int[2])
}

letters <- function(design_name, q, by) {
  design <- designs[[design_name]]
  values <- design$variables
  groups <- sort(unique(na.omit(values[[by]])))
  levels <- sort(unique(na.omit(values[[q]])))
  out <- list()
  for (i in seq_along(groups)) for (j in seq_along(groups)) if (i < j) {
    a <- groups[i]; b <- groups[j]
    keep <- !is.na(values[[by]]) & values[[by]] %in% c(a, b)
    pair <- design[keep, ]
    for (level in levels) {
      y <- sprintf('I(%s == "%s")', q, level)
      g <- sprintf('I(%s == "%s")', by, b)
      r <- ttest(design_name, y, g, label = y, design = pair)
      r$question <- q; r$by <- by; r$level <- level; r$a <- a; r$b <- b
      out[[length(out) + 1]] <- r
    }
  }
  out
}

api_designs <- c("apistrat", "apiclus1", "apiclus1_raked")
result <- list(
  versions = list(R = R.version.string, survey = as.character(packageVersion("survey"))),
  rake_targets = list(stype = setNames(as.list(stype_totals$Freq), stype_totals$stype),
                      sch.wide = setNames(as.list(schwide_totals$Freq),
                                          schwide_totals$sch.wide)),
  chisq = c(
    lapply(api_designs, chisq, q = "sch.wide", by = "stype"),
    lapply(api_designs, chisq, q = "awards", by = "stype"),
    list(chisq("sms", "q_choice", "channel"), chisq("sms", "q_choice", "tiny"),
         chisq("sms", "q_sat", "wave"), chisq("sms_weights", "q_choice", "channel"),
         chisq("sms_weights", "q_sat", "channel"),
         chisq("apistrat_E", "sch.wide", "awards"),
         chisq("apiclus1_raked_E", "sch.wide", "awards"))
  ),
  ttest = c(
    lapply(api_designs, ttest, y = "api00", group = "awards"),
    lapply(api_designs, ttest, y = 'I(sch.wide == "Yes")', group = "awards"),
    lapply(c("apistrat_E", "apiclus1_raked_E"), ttest, y = "api00", group = "awards"),
    unlist(lapply(c("sms", "sms_weights", "sms_waves"), function(d) c(
      list(ttest(d, "q_sat", "wave"), ttest(d, "nps_score", "wave")),
      lapply(c("Price", "Service", "Speed"), function(level)
        ttest(d, sprintf('I(q_choice == "%s")', level), "wave"))
    )), recursive = FALSE),
    list(ttest("sms", "q_sat", "tiny", levels = c("pair", "solo"),
               design = subset(designs$sms, tiny %in% c("pair", "solo"))),
         ttest("sms", "q_sat", "channel", levels = c("email", "sms"),
               design = subset(designs$sms, channel %in% c("email", "sms"))))
  ),
  letters = c(
    unlist(lapply(api_designs, letters, q = "sch.wide", by = "stype"), recursive = FALSE),
    unlist(lapply(api_designs, letters, q = "awards", by = "stype"), recursive = FALSE),
    letters("sms", "q_choice", "channel"),
    letters("sms_weights", "q_choice", "channel")
  )
)
write_json(result, "tests/analysis/fixtures/r_tests_between_groups.json",
           digits = NA, auto_unbox = TRUE, pretty = TRUE)
