# The R oracle of sk.report.banner's design-based letters (tests/report/test_banner_r.py).
#
# Reads tests/analysis/fixtures/data/tbg_sms.csv and tbg_apiclus1.csv (written by
# tests_between_groups.R) and writes tests/report/fixtures/r_banner.json:
#   estimates: svyby(~y, ~by, design, svymean, na.rm = TRUE) and svymean(~y, design,
#              na.rm = TRUE) for every row y of the banner (0/1 indicators of options and
#              nets, or the answer for the mean)
#   columns:   svyttest(y ~ I(by == b), subset(design, by %in% c(a, b))) for every pair of
#              levels a < b of the banner variable, then p.adjust within each row and
#              banner variable ("bonferroni", "holm", "BH")
#   total:     svyttest(y ~ I(!is.na(by) & by == a), design): each level against every
#              other respondent who answered (those without a banner value included),
#              then p.adjust within each row and banner variable
# Run from the repository root: Rscript tools/r_reference/banner.R
# (R 4.2.2, survey 4.1-1, jsonlite).
suppressPackageStartupMessages({
  library(survey)
  library(jsonlite)
})
dir <- "tests/analysis/fixtures/data"
read <- function(name) {
  read.csv(file.path(dir, name), na.strings = "", stringsAsFactors = FALSE)
}
sms <- read("tbg_sms.csv")
clus1 <- read("tbg_apiclus1.csv")

data(api)
stype_totals <- as.data.frame(table(stype = apipop$stype))
schwide_totals <- as.data.frame(table(sch.wide = apipop$sch.wide))
designs <- list(
  sms = svydesign(id = ~household, strata = ~region, weights = ~w, fpc = ~fpc,
                  nest = TRUE, data = sms),
  sms_weights = svydesign(id = ~1, weights = ~w, data = sms)
)
apiclus1 <- svydesign(id = ~dnum, weights = ~pw, fpc = ~fpc, data = clus1)
designs$apiclus1_raked <- rake(
  apiclus1, list(~stype, ~sch.wide), list(stype_totals, schwide_totals),
  control = list(epsilon = 1e-12, maxit = 1000)
)

# rows of a question: name -> R expression of y
sms_rows <- list(
  q_choice = list(Price = 'I(q_choice == "Price")', Service = 'I(q_choice == "Service")',
                  Speed = 'I(q_choice == "Speed")',
                  `Not price` = 'I(q_choice %in% c("Service", "Speed"))'),
  q_sat = list(`1` = "I(q_sat == 1)", `2` = "I(q_sat == 2)", `3` = "I(q_sat == 3)",
               `4` = "I(q_sat == 4)", `5` = "I(q_sat == 5)",
               `Top 2` = "I(q_sat >= 4)", `Bottom 2` = "I(q_sat <= 2)", Mean = "q_sat")
)
clus1_rows <- list(
  awards = list(No = 'I(awards == "No")', Yes = 'I(awards == "Yes")'),
  api00 = list(Mean = "api00")
)
cases <- list(
  list(design = "sms", rows = sms_rows, banner = c("channel", "wave")),
  list(design = "sms_weights", rows = sms_rows, banner = c("channel", "wave")),
  list(design = "apiclus1_raked", rows = clus1_rows, banner = c("stype", "both"))
)

# a row y with NA where the question is unanswered (a %in% net of an NA answer is NA too)
with_y <- function(design, question, expression) {
  values <- design$variables
  y <- eval(parse(text = expression), values)
  y[is.na(values[[question]])] <- NA
  design$variables$y_ <- as.numeric(y)
  design
}

adjusted <- function(p) {
  list(bonferroni = p.adjust(p, "bonferroni"), holm = p.adjust(p, "holm"),
       fdr_bh = p.adjust(p, "BH"))
}

out <- list(estimates = list(), columns = list(), total = list())
for (case in cases) {
  for (question in names(case$rows)) {
    for (row in names(case$rows[[question]])) {
      design <- with_y(designs[[case$design]], question, case$rows[[question]][[row]])
      total <- svymean(~y_, design, na.rm = TRUE)
      out$estimates[[length(out$estimates) + 1]] <- list(
        design = case$design, question = question, row = row, banner = "Total",
        column = "Total", estimate = unname(coef(total)))
      for (by in case$banner) {
        values <- design$variables
        levels <- sort(unique(na.omit(values[[by]])))
        est <- svyby(~y_, as.formula(paste0("~", by)), design, svymean, na.rm = TRUE)
        for (k in seq_len(nrow(est))) {
          out$estimates[[length(out$estimates) + 1]] <- list(
            design = case$design, question = question, row = row, banner = by,
            column = as.character(est[[by]][k]), estimate = unname(est$y_[k]))
        }
        pairs <- list()
        for (i in seq_along(levels)) for (j in seq_along(levels)) if (i < j) {
          a <- levels[i]; b <- levels[j]
          keep <- !is.na(values[[by]]) & values[[by]] %in% c(a, b)
          pair <- design[keep, ]
          pair$variables$g_ <- pair$variables[[by]] == b
          t <- svyttest(y_ ~ g_, pair)
          pairs[[length(pairs) + 1]] <- list(
            a = as.character(a), b = as.character(b), difference = unname(t$estimate),
            statistic = unname(t$statistic), df = unname(t$parameter), p_value = t$p.value)
        }
        p <- sapply(pairs, function(x) x$p_value)
        adj <- adjusted(p)
        for (k in seq_along(pairs)) {
          r <- pairs[[k]]
          r$design <- case$design; r$question <- question; r$row <- row; r$banner <- by
          r$p_adjusted <- lapply(adj, function(v) v[k])
          out$columns[[length(out$columns) + 1]] <- r
        }
        rest <- list()
        for (a in levels) {
          design$variables$g_ <- !is.na(values[[by]]) & values[[by]] == a
          t <- svyttest(y_ ~ g_, design)
          rest[[length(rest) + 1]] <- list(
            a = as.character(a), difference = unname(t$estimate),
            statistic = unname(t$statistic), df = unname(t$parameter), p_value = t$p.value)
        }
        p <- sapply(rest, function(x) x$p_value)
        adj <- adjusted(p)
        for (k in seq_along(rest)) {
          r <- rest[[k]]
          r$design <- case$design; r$question <- question; r$row <- row; r$banner <- by
          r$p_adjusted <- lapply(adj, function(v) v[k])
          out$total[[length(out$total) + 1]] <- r
        }
      }
    }
  }
}
out$versions <- list(R = R.version.string, survey = as.character(packageVersion("survey")))
out$rake_targets <- list(
  stype = setNames(as.list(stype_totals$Freq), as.character(stype_totals$stype)),
  sch.wide = setNames(as.list(schwide_totals$Freq), as.character(schwide_totals$sch.wide)))
dir.create("tests/report/fixtures", showWarnings = FALSE)
write_json(out, "tests/report/fixtures/r_banner.json", digits = NA, auto_unbox = TRUE,
           pretty = TRUE)
