# Reference values from R's `survey` package for surveykit's design-based
# estimators.  Writes
#   tests/analysis/fixtures/data/{apistrat,apiclus1,apisrs}.csv   (from data(api))
#   tests/analysis/fixtures/data/apiclus1_boot_repweights.csv      (bootstrap analysis weights)
#   tests/analysis/fixtures/r_reference.json                       (all cases)
# Reads tests/analysis/fixtures/data/sms.csv and sms_lonely.csv (written by
# tools/r_reference/make_data.py).  Run from anywhere:
#   Rscript tools/r_reference/reference.R
# Every value is computed by evaluating the exact text recorded in the JSON
# under "call" (in an environment holding the data, the population tables and
# the design objects; `design` is the design named by the case's "design").

suppressPackageStartupMessages({
  library(survey)
  library(jsonlite)
})
invisible(Sys.setlocale("LC_COLLATE", "C"))
options(survey.lonely.psu = "fail", survey.replicates.mse = FALSE,
        survey.ultimate.cluster = FALSE, survey.adjust.domain.lonely = FALSE)

script_path <- local({
  a <- commandArgs(trailingOnly = FALSE)
  f <- sub("^--file=", "", a[grepl("^--file=", a)])
  if (length(f)) normalizePath(f[1]) else normalizePath("tools/r_reference/reference.R")
})
root <- normalizePath(file.path(dirname(script_path), "..", ".."))
fixtures <- file.path(root, "tests", "analysis", "fixtures")
datadir <- file.path(fixtures, "data")
dir.create(datadir, recursive = TRUE, showWarnings = FALSE)

# ---------------------------------------------------------------- helpers ---

E <- new.env(parent = globalenv())       # where every recorded call is evaluated

run <- function(code, design = NULL) {
  env <- new.env(parent = E)
  if (!is.null(design)) assign("design", design, envir = env)
  eval(parse(text = code), envir = env)
}

# evaluate `expr`, turning an error into list(error = msg) and collecting warnings
capture <- function(expr) {
  warns <- character()
  val <- withCallingHandlers(
    tryCatch(expr, error = function(e) list(error = conditionMessage(e))),
    warning = function(w) {
      warns <<- c(warns, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  if (length(warns)) val$warnings <- I(unique(warns))
  val
}

num <- function(x) unname(as.numeric(x))
deff_of <- function(x) {
  d <- attr(x, "deff")
  if (is.null(d)) return(NA_real_)
  if (is.matrix(d)) diag(d) else num(d)
}

wilson <- function(p, se, level = 0.95) {
  v <- se^2
  n <- p * (1 - p) / v
  z <- qnorm(1 - (1 - level) / 2)
  centre <- p + z^2 / (2 * n)
  half <- z * sqrt(p * (1 - p) / n + z^2 / (4 * n^2))
  list(n_eff = n, ci_low = (centre - half) / (1 + z^2 / n),
       ci_high = (centre + half) / (1 + z^2 / n))
}

lonely_mode <- NULL                      # set while computing a lonely-PSU design
with_mode <- function(expr) {
  if (is.null(lonely_mode)) return(expr)
  old <- options(survey.lonely.psu = lonely_mode)
  on.exit(options(old))
  expr
}

case <- function(did, call, f) {
  val <- capture(with_mode(f(call)))
  c(list(design = did, call = call), val)
}

# ------------------------------------------------------------------- data ---

data(api)
api_keep <- c("cds", "stype", "dnum", "snum", "pw", "fpc", "api00", "api99",
              "enroll", "api.stu", "meals", "ell", "awards", "sch.wide",
              "comp.imp", "both", "growth", "mobility", "avg.ed")
# shortest decimal text (15, 16 or 17 significant digits) that reads back as the same double
shortest <- function(x) {
  vapply(x, function(v) {
    if (is.na(v)) return(NA_character_)
    for (k in 15:17) {
      s <- sprintf("%.*g", k, v)
      if (as.numeric(s) == v) return(s)
    }
    s
  }, "")
}
read_api <- function(name) {
  df <- get(name)[, api_keep]
  path <- file.path(datadir, paste0(name, ".csv"))
  csv <- df
  for (v in names(csv)) if (is.double(csv[[v]])) csv[[v]] <- shortest(csv[[v]])
  write.csv(csv, path, row.names = FALSE, na = "")
  back <- read.csv(path, stringsAsFactors = FALSE, na.strings = "", check.names = FALSE,
                   colClasses = c(cds = "character"))
  for (v in c("stype", "awards", "sch.wide", "comp.imp", "both")) back[[v]] <- factor(back[[v]])
  back$cds <- as.character(back$cds)
  orig <- df
  orig$cds <- as.character(orig$cds)
  rownames(orig) <- NULL
  stopifnot(isTRUE(all.equal(orig, back, tolerance = 0, check.attributes = FALSE)))
  back
}
E$apistrat <- read_api("apistrat")
E$apiclus1 <- read_api("apiclus1")
E$apisrs <- read_api("apisrs")
E$apipop <- apipop

sms_prep <- paste(
  'sms <- read.csv(file, stringsAsFactors = FALSE, na.strings = "", colClasses = c(hh = "character"))',
  'for (v in c("region", "channel", "q_choice", "tiny", "wave")) sms[[v]] <- factor(sms[[v]])  # levels sorted (C locale)',
  'sms$nps_score <- ifelse(sms$q_nps >= 9, 100, ifelse(sms$q_nps >= 7, 0, -100))  # NA where q_nps is NA',
  sep = "\n")
read_sms <- function(file) {
  env <- new.env()
  env$file <- file
  eval(parse(text = sms_prep), envir = env)
  env$sms
}
E$sms <- read_sms(file.path(datadir, "sms.csv"))
E$sms_lonely <- read_sms(file.path(datadir, "sms_lonely.csv"))

# ------------------------------------------------------------ populations ---

N <- 100000
pop_code <- paste(
  'N <- 100000',
  'pop_region <- data.frame(region = factor(c("North", "South", "East", "West")), Freq = N * c(0.3, 0.3, 0.2, 0.2))',
  'pop_channel <- data.frame(channel = factor(c("sms", "whatsapp", "email")), Freq = N * c(0.5, 0.3, 0.2))',
  'pop_cal <- c(`(Intercept)` = N, regionNorth = 0.3 * N, regionSouth = 0.3 * N, regionWest = 0.2 * N, channelsms = 0.5 * N, channelwhatsapp = 0.3 * N, age = 45.5 * N)',
  'pop_sch.wide <- data.frame(table(sch.wide = apipop$sch.wide))',
  'pop_awards <- data.frame(table(awards = apipop$awards))',
  sep = "\n")
eval(parse(text = pop_code), envir = E)

tab_list <- function(df) lapply(seq_len(nrow(df)), function(i)
  list(level = as.character(df[i, 1]), total = num(df$Freq[i])))

populations <- list(
  N = N,
  region_shares = list(North = 0.3, South = 0.3, East = 0.2, West = 0.2),
  channel_shares = list(sms = 0.5, whatsapp = 0.3, email = 0.2),
  age_total = 45.5 * N,
  code = pop_code,
  pop_region = tab_list(E$pop_region),
  pop_channel = tab_list(E$pop_channel),
  pop_cal = lapply(names(E$pop_cal), function(n) list(name = n, value = num(E$pop_cal[[n]]))),
  pop_sch.wide = tab_list(E$pop_sch.wide),
  pop_awards = tab_list(E$pop_awards)
)

# ---------------------------------------------------------------- designs ---

CTL <- "control = list(epsilon = 1e-12, maxit = 1000)"
CALCTL <- "epsilon = 1e-12, maxit = 1000"
dspec <- list(
  apistrat = list(obj = "dstrat", data = "apistrat.csv", family = "api", kind = "core",
    call = "svydesign(id = ~1, strata = ~stype, weights = ~pw, fpc = ~fpc, data = apistrat)"),
  apiclus1 = list(obj = "dclus1", data = "apiclus1.csv", family = "api", kind = "core",
    call = "svydesign(id = ~dnum, weights = ~pw, fpc = ~fpc, data = apiclus1)"),
  apisrs = list(obj = "dsrs", data = "apisrs.csv", family = "api", kind = "core",
    call = "svydesign(id = ~1, weights = ~pw, fpc = ~fpc, data = apisrs)"),
  apisrs_nofpc = list(obj = "dsrs_nofpc", data = "apisrs.csv", family = "api", kind = "core",
    call = "svydesign(id = ~1, weights = ~pw, data = apisrs)"),
  sms_w = list(obj = "sms_w", data = "sms.csv", family = "sms", kind = "core",
    call = "svydesign(id = ~1, weights = ~w, data = sms)"),
  sms_eq = list(obj = "sms_eq", data = "sms.csv", family = "sms", kind = "core",
    call = "svydesign(id = ~1, weights = ~one, data = sms)"),
  sms_design = list(obj = "sms_design", data = "sms.csv", family = "sms", kind = "core",
    call = "svydesign(id = ~hh, strata = ~region, weights = ~w, data = sms)"),
  sms_lonely_adjust = list(obj = "sms_lonely_design", data = "sms_lonely.csv", family = "sms",
    kind = "lonely", lonely = "adjust",
    call = "svydesign(id = ~hh, strata = ~region, weights = ~w, data = sms_lonely)"),
  sms_lonely_remove = list(obj = "sms_lonely_design", data = "sms_lonely.csv", family = "sms",
    kind = "lonely", lonely = "remove",
    call = "svydesign(id = ~hh, strata = ~region, weights = ~w, data = sms_lonely)"),
  sms_lonely_certainty = list(obj = "sms_lonely_design", data = "sms_lonely.csv", family = "sms",
    kind = "lonely", lonely = "certainty",
    call = "svydesign(id = ~hh, strata = ~region, weights = ~w, data = sms_lonely)"),
  sms_lonely_average = list(obj = "sms_lonely_design", data = "sms_lonely.csv", family = "sms",
    kind = "lonely", lonely = "average",
    call = "svydesign(id = ~hh, strata = ~region, weights = ~w, data = sms_lonely)"),
  sms_raked = list(obj = "sms_raked", data = "sms.csv", family = "sms", kind = "calibrated",
    call = sprintf("rake(sms_design, list(~region, ~channel), list(pop_region, pop_channel), %s)", CTL)),
  sms_poststrat = list(obj = "sms_poststrat", data = "sms.csv", family = "sms", kind = "calibrated",
    call = "postStratify(sms_design, ~region, pop_region)"),
  sms_cal_linear = list(obj = "sms_cal_linear", data = "sms.csv", family = "sms", kind = "calibrated",
    call = sprintf('calibrate(sms_design, ~region + channel + age, population = pop_cal, calfun = "linear", %s)', CALCTL)),
  sms_cal_raking = list(obj = "sms_cal_raking", data = "sms.csv", family = "sms", kind = "calibrated",
    call = sprintf('calibrate(sms_design, ~region + channel + age, population = pop_cal, calfun = "raking", %s)', CALCTL)),
  sms_cal_logit = list(obj = "sms_cal_logit", data = "sms.csv", family = "sms", kind = "calibrated",
    call = sprintf('calibrate(sms_design, ~region + channel + age, population = pop_cal, calfun = "logit", bounds = c(0.2, 5), %s)', CALCTL)),
  apistrat_raked = list(obj = "dstrat_raked", data = "apistrat.csv", family = "api", kind = "calibrated",
    call = sprintf("rake(dstrat, list(~sch.wide, ~awards), list(pop_sch.wide, pop_awards), %s)", CTL)),
  apiclus1_jk1 = list(obj = "dclus1_jk1", data = "apiclus1.csv", family = "api", kind = "replicate",
    call = 'as.svrepdesign(dclus1, type = "JK1")'),
  apistrat_jkn = list(obj = "dstrat_jkn", data = "apistrat.csv", family = "api", kind = "replicate",
    call = 'as.svrepdesign(dstrat, type = "JKn")'),
  sms_design_jkn = list(obj = "sms_design_jkn", data = "sms.csv", family = "sms", kind = "replicate",
    call = 'as.svrepdesign(sms_design, type = "JKn")'),
  sms_raked_jkn = list(obj = "sms_raked_jkn", data = "sms.csv", family = "sms", kind = "replicate",
    call = sprintf('rake(as.svrepdesign(sms_design, type = "JKn"), list(~region, ~channel), list(pop_region, pop_channel), %s)', CTL)),
  apiclus1_boot = list(obj = "dclus1_boot", data = "apiclus1.csv", family = "api", kind = "replicate",
    call = 'local({ set.seed(20261126); as.svrepdesign(dclus1, type = "bootstrap", replicates = 50) })',
    repweights = "apiclus1_boot_repweights.csv")
)

for (did in names(dspec)) {
  s <- dspec[[did]]
  assign(s$obj, run(s$call), envir = E)
}

# bootstrap analysis weights, full precision, rows in apiclus1's order
local({
  rw <- weights(E$dclus1_boot, "analysis")
  out <- apply(rw, 2, function(col) sprintf("%.17g", col))
  colnames(out) <- paste0("rep", seq_len(ncol(rw)))
  write.table(out, file.path(datadir, "apiclus1_boot_repweights.csv"), sep = ",",
              quote = FALSE, row.names = FALSE, col.names = TRUE)
})

rep_info <- function(d) {
  rs <- num(d$rscales)
  list(type = d$type, scale = num(d$scale),
       rscales = if (length(unique(rs)) == 1) rs[1] else rs,
       rscales_all_equal = length(unique(rs)) == 1,
       mse = isTRUE(d$mse), replicates = ncol(d$repweights))
}

# ------------------------------------------------------------ case makers ---

vars <- list(
  api = list(numeric = c("api00", "enroll", "api.stu"),
             prop = c("stype", "awards", "sch.wide"),
             by_mean = list(c("api00", "stype"), c("enroll", "awards")),
             by_prop = list(c("awards", "stype")),
             ratio = c("api.stu", "enroll"),
             quantile = c("api00", "enroll"),
             chisq = list(c("stype", "awards"), c("sch.wide", "awards")),
             ttest = list(c("api00", "awards"), c("enroll", "sch.wide")),
             glm_gaussian = "api00 ~ ell + meals + mobility",
             glm_binomial = 'I(sch.wide == "Yes") ~ ell + meals'),
  sms = list(numeric = c("q_nps", "q_sat", "age", "renew"),
             prop = c("q_choice", "channel", "region", "wave", "tiny"),
             by_mean = list(c("q_sat", "channel"), c("q_sat", "tiny"), c("q_nps", "region")),
             by_prop = list(c("q_choice", "channel")),
             ratio = c("q_sat", "age"),
             quantile = c("q_sat", "age"),
             chisq = list(c("q_choice", "channel"), c("channel", "wave")),
             ttest = list(c("q_sat", "wave"), c("renew", "wave"), c("nps_score", "wave")),
             glm_gaussian = "q_sat ~ age + region + q_nps",
             glm_binomial = "renew ~ age + region + q_nps")
)

mk_stat <- function(d, fun) function(call) {
  x <- run(call, d)
  list(estimate = num(coef(x)), se = num(SE(x)), deff = deff_of(x))
}

mk_prop <- function(d, v) function(call) {
  x <- run(call, d)
  pre <- sprintf("factor(%s)", v)
  levs <- sub(pre, "", names(coef(x)), fixed = TRUE)
  df_used <- degf(d)
  rows <- lapply(seq_along(levs), function(i) {
    p <- num(coef(x))[i]
    se <- num(SE(x))[i]
    r <- list(level = levs[i], estimate = p, se = se, deff = deff_of(x)[i])
    # a calibrated-on margin: se ~ 0, so the beta / Wilson intervals are numerically meaningless
    # (qbeta with n_eff ~ 1e25 warns "not accurate"); compare only estimate and se there
    r$degenerate <- isTRUE(se < 1e-8 * p)
    for (m in c("logit", "beta")) {
      cc <- sprintf('svyciprop(~I(%s == "%s"), design, method = "%s", na.rm = TRUE)', v, levs[i], m)
      r[[m]] <- capture({
        ci <- run(cc, d)
        list(call = cc, estimate = num(ci), ci_low = num(attr(ci, "ci"))[1],
             ci_high = num(attr(ci, "ci"))[2], df = df_used)
      })
    }
    r$wilson <- c(list(call = "by hand from estimate and se: n_eff = p(1-p)/se^2, z = qnorm(0.975)"),
                  wilson(p, se))
    r
  })
  list(levels = rows)
}

mk_by <- function(d, grp, prefix) function(call) {
  b <- run(call, d)
  cols <- setdiff(names(b), grp)
  est_cols <- cols[!grepl("^(se|DEff)", cols)]
  rows <- list()
  for (i in seq_len(nrow(b))) {
    for (ec in est_cols) {
      se_col <- if (length(est_cols) == 1) "se" else paste0("se.", ec)
      r <- list(group = as.character(b[[grp]][i]))
      if (!is.null(prefix)) r$level <- sub(prefix, "", ec, fixed = TRUE)
      r$estimate <- num(b[[ec]][i])
      r$se <- num(b[[se_col]][i])
      dc <- paste0("DEff.", ec)
      r$deff <- if (dc %in% names(b)) num(b[[dc]][i]) else NA_real_
      rows[[length(rows) + 1]] <- r
    }
  }
  list(rows = rows)
}

mk_ratio <- function(d) function(call) {
  r <- run(call, d)
  list(estimate = num(coef(r)), se = num(SE(r)))
}

mk_quantile <- function(d, v) function(call) {
  q <- run(call, d)[[v]]
  x <- d$variables[[v]]
  df_used <- degf(d[!is.na(x), ])
  rows <- lapply(seq_len(nrow(q)), function(i) list(
    q = as.numeric(rownames(q)[i]), estimate = num(q[i, 1]), ci_low = num(q[i, 2]),
    ci_high = num(q[i, 3]), se = num(q[i, 4])))
  meth <- if (inherits(d, "svyrep.design")) survey:::svyquantile.svyrep.design else survey:::svyquantile.survey.design
  fm <- formals(meth)
  list(interval_type = eval(fm$interval.type)[1], qrule = eval(fm$qrule)[1], alpha = eval(fm$alpha),
       df = df_used, df_note = "degf of the design with the NA rows of the variable dropped",
       quantiles = rows)
}

mk_chisq <- function(d, a, b, stat) function(call) {
  t <- run(call, d)
  r <- list(statistic = num(t$statistic), p_value = num(t$p.value), method = t$method)
  # the unadjusted Pearson X^2 R starts from: svytable scaled to N = nrow(design$variables)
  # (rows with a missing a or b included in N)
  n_all <- nrow(d$variables)
  x2 <- suppressWarnings(chisq.test(run(sprintf("svytable(~%s + %s, design, Ntotal = %d)", a, b, n_all), d),
                                    correct = FALSE))$statistic
  r$pearson_x2 <- num(x2)
  r$N_scaling <- n_all
  if (stat == "F") {
    r$ndf <- num(t$parameter["ndf"])
    r$ddf <- num(t$parameter["ddf"])
    r$trace_delta <- num(x2) / r$statistic
    r$design_df_nu <- r$ddf / r$ndf
  } else {
    r$df <- num(t$parameter)
    f <- run(sprintf("svychisq(~%s + %s, design)", a, b), d)
    tr <- num(x2) / num(f$statistic)
    r$mean_delta <- tr / r$df
    r$adjusted_statistic <- num(x2) / r$mean_delta
  }
  if (stat == "F") {
    dv <- d$variables
    ok <- !is.na(dv[[a]]) & !is.na(dv[[b]])
    u <- suppressWarnings(chisq.test(table(dv[[a]][ok], dv[[b]][ok]), correct = FALSE))
    r$unweighted <- list(call = sprintf("chisq.test(table(%s, %s), correct = FALSE)  # rows with both non-missing", a, b),
                         statistic = num(u$statistic), df = num(u$parameter),
                         p_value = num(u$p.value), n = sum(ok))
  }
  r
}

mk_ttest <- function(d) function(call) {
  t <- run(call, d)
  list(estimate = num(t$estimate), statistic = num(t$statistic), df = num(t$parameter),
       p_value = num(t$p.value), se = num(t$estimate / t$statistic),
       conf_int = num(t$conf.int))
}

mk_glm <- function(d, binomial) function(call) {
  fit <- run(call, d)
  s <- summary(fit)
  co <- coef(s)
  rows <- lapply(seq_len(nrow(co)), function(i) list(
    term = rownames(co)[i], estimate = num(co[i, 1]), se = num(co[i, 2]),
    t = num(co[i, 3]), p_value = num(co[i, 4])))
  r <- list(terms = rows, df_residual = num(fit$df.residual),
            dispersion = num(s$dispersion), converged = isTRUE(fit$converged),
            iterations = num(fit$iter))
  if (binomial) {
    ci <- exp(confint(fit))
    for (i in seq_along(rows)) {
      r$terms[[i]]$odds_ratio <- exp(num(co[i, 1]))
      r$terms[[i]]$or_ci_low <- num(ci[i, 1])
      r$terms[[i]]$or_ci_high <- num(ci[i, 2])
    }
    r$confint_call <- "exp(confint(fit))  # Wald, ddf = fit$df.residual"
    r$confint_df <- num(fit$df.residual)
  }
  r
}

# --------------------------------------------------------------- the cases ---

which_cases <- list(
  core = c("mean", "total", "prop", "by_mean", "by_prop", "nps", "ratio", "quantile", "chisq", "ttest", "glm"),
  calibrated = c("mean", "total", "prop", "by_mean", "by_prop", "nps", "chisq"),
  replicate = c("mean", "total", "prop", "by_mean", "by_prop", "nps", "ratio", "quantile", "chisq", "ttest", "glm"),
  lonely = character()
)

cases_for <- function(did) {
  s <- dspec[[did]]
  d <- get(s$obj, envir = E)
  V <- vars[[s$family]]
  want <- which_cases[[s$kind]]
  out <- list()
  add <- function(id, call, f) out[[id]] <<- case(did, call, f)
  if (s$kind == "lonely") {
    add("mean_q_sat", 'svymean(~q_sat, design, na.rm = TRUE, deff = "replace")', mk_stat(d))
    add("prop_q_choice", 'svymean(~factor(q_choice), design, na.rm = TRUE, deff = "replace")',
        mk_prop(d, "q_choice"))
    add("total_q_sat", 'svytotal(~q_sat, design, na.rm = TRUE, deff = "replace")', mk_stat(d))
  }
  if ("mean" %in% want) for (v in V$numeric)
    add(paste0("mean_", v), sprintf('svymean(~%s, design, na.rm = TRUE, deff = "replace")', v), mk_stat(d))
  if ("total" %in% want) for (v in V$numeric)
    add(paste0("total_", v), sprintf('svytotal(~%s, design, na.rm = TRUE, deff = "replace")', v), mk_stat(d))
  if ("prop" %in% want) for (v in V$prop)
    add(paste0("prop_", v), sprintf('svymean(~factor(%s), design, na.rm = TRUE, deff = "replace")', v),
        mk_prop(d, v))
  if ("by_mean" %in% want) {
    for (p in V$by_mean) {
      id <- sprintf("by_mean_%s_%s", p[1], p[2])
      add(id, sprintf('svyby(~%s, ~%s, design, svymean, na.rm = TRUE, deff = "replace")', p[1], p[2]),
          mk_by(d, p[2], NULL))
      if (!is.null(out[[id]]$error))   # R failed (deff on a 1-respondent group): the same without deff
        add(paste0(id, "_nodeff"), sprintf("svyby(~%s, ~%s, design, svymean, na.rm = TRUE)", p[1], p[2]),
            mk_by(d, p[2], NULL))
    }
    p <- V$by_mean[[1]]
    add(sprintf("by_mean_%s_%s_covmat", p[1], p[2]),
        sprintf("svyby(~%s, ~%s, design, svymean, na.rm = TRUE, covmat = TRUE)", p[1], p[2]),
        function(call) {
          b <- run(call, d)
          r <- mk_by(d, p[2], NULL)(call)
          v <- vcov(b)
          r$vcov <- lapply(seq_len(nrow(v)), function(i) num(v[i, ]))
          r$vcov_names <- rownames(v)
          r
        })
  }
  if ("by_prop" %in% want) for (p in V$by_prop)
    add(sprintf("by_prop_%s_%s", p[1], p[2]),
        sprintf('svyby(~factor(%s), ~%s, design, svymean, na.rm = TRUE, deff = "replace")', p[1], p[2]),
        mk_by(d, p[2], sprintf("factor(%s)", p[1])))
  if ("nps" %in% want && s$family == "sms") {
    add("nps", 'svymean(~nps_score, design, na.rm = TRUE, deff = "replace")', mk_stat(d))
    add("by_nps_channel", 'svyby(~nps_score, ~channel, design, svymean, na.rm = TRUE, deff = "replace")',
        mk_by(d, "channel", NULL))
  }
  if ("ratio" %in% want) {
    cl <- if (s$family == "api") "svyratio(~api.stu, ~enroll, design)"
          else "svyratio(~q_sat, ~age, design, na.rm = TRUE)"
    add("ratio", cl, mk_ratio(d))
  }
  if ("quantile" %in% want) for (v in V$quantile)
    add(paste0("quantile_", v),
        sprintf("svyquantile(~%s, design, c(0.25, 0.5, 0.75), ci = TRUE, na.rm = TRUE)", v),
        mk_quantile(d, v))
  if ("chisq" %in% want) for (p in V$chisq) {
    add(sprintf("chisq_%s_%s", p[1], p[2]), sprintf("svychisq(~%s + %s, design)", p[1], p[2]),
        mk_chisq(d, p[1], p[2], "F"))
    add(sprintf("chisq_%s_%s_chisq", p[1], p[2]),
        sprintf('svychisq(~%s + %s, design, statistic = "Chisq")', p[1], p[2]),
        mk_chisq(d, p[1], p[2], "Chisq"))
  }
  if ("ttest" %in% want) for (p in V$ttest)
    add(sprintf("ttest_%s_%s", p[1], p[2]), sprintf("svyttest(%s ~ %s, design)", p[1], p[2]), mk_ttest(d))
  if ("glm" %in% want) {
    add("glm_gaussian", sprintf("svyglm(%s, design)", V$glm_gaussian), mk_glm(d, FALSE))
    add("glm_binomial",
        sprintf("svyglm(%s, design, family = quasibinomial, control = glm.control(epsilon = 1e-12, maxit = 100))",
                V$glm_binomial),
        mk_glm(d, TRUE))
  }
  add("degf", "degf(design)", function(call) list(value = num(run(call, d))))
  if (s$kind == "replicate") {
    out[["replicates"]] <- c(list(design = did, call = "design$scale, design$rscales, design$mse"), rep_info(d))
  }
  if (did %in% c("sms_cal_linear", "sms_cal_raking", "sms_cal_logit")) {
    out[["population"]] <- list(design = did, call = "pop_cal", values = populations$pop_cal)
  }
  if (s$kind == "calibrated") {
    w <- weights(d)
    out[["weights_summary"]] <- list(design = did, call = "weights(design)",
      sum = sum(w), min = min(w), max = max(w), first = num(w[1:5]))
  }
  out
}

designs_json <- list()
cases_json <- list()
for (did in names(dspec)) {
  s <- dspec[[did]]
  lonely_mode <- s$lonely
  d <- get(s$obj, envir = E)
  entry <- list(data = s$data, call = s$call, object = s$obj, kind = s$kind,
                degf = with_mode(num(degf(d))), n = nrow(d$variables))
  if (!is.null(s$lonely)) entry$options <- sprintf('options(survey.lonely.psu = "%s")', s$lonely)
  if (s$kind == "replicate") entry$replicates <- rep_info(d)
  if (!is.null(s$repweights)) entry$repweights <- s$repweights
  designs_json[[did]] <- entry
  cases_json[[did]] <- cases_for(did)
  lonely_mode <- NULL
  message(did, ": ", length(cases_json[[did]]), " cases")
}

# ---------------------------------------------------------------- checks ---

checks <- local({
  d <- E$sms_eq
  out <- list()
  for (v in c("q_sat", "age", "renew")) {
    y <- d$variables[[v]]
    y <- y[!is.na(y)]
    n <- length(y)
    m <- svymean(as.formula(paste0("~", v)), d, na.rm = TRUE)
    out[[paste0("sms_eq_mean_", v)]] <- list(
      r_se = num(SE(m)), sd_over_sqrt_n = sd(y) / sqrt(n),
      textbook_ratio = num(SE(m)) / (sd(y) / sqrt(n)), n = n, n_rows = nrow(d$variables),
      domain_ratio = sqrt((nrow(d$variables) / (nrow(d$variables) - 1)) / (n / (n - 1))),
      note = paste("equal weights, no fpc: with no NA R's se is exactly sd(y)/sqrt(n) (with-replacement",
                   "variance n/(n-1) sum(z - zbar)^2); with na.rm=TRUE the NA rows stay in the design with",
                   "weight 0 (domain estimation), so n/(n-1) uses all rows: se = textbook * domain_ratio"))
  }
  for (did in c("sms_raked", "sms_raked_jkn", "apistrat_raked")) {
    for (cid in c("prop_region", "prop_channel", "prop_sch.wide", "prop_awards")) {
      cc <- cases_json[[did]][[cid]]
      if (is.null(cc) || is.null(cc$levels)) next
      out[[paste(did, cid, sep = "/")]] <- list(
        max_se_over_estimate = max(vapply(cc$levels, function(l) l$se / l$estimate, 0)))
    }
  }
  se <- SE(svymean(~api00, E$dstrat, na.rm = TRUE, deff = "replace"))[1]
  out$deff_formula <- list(
    mean = "deff='replace': v / (svyvar(x, design) / nobs), nobs = #rows with weight != 0 after dropping NA",
    total = "deff='replace': v / (svyvar(x, design) * sum(weights)^2 / nobs)",
    apistrat_mean_api00_by_hand = num(se^2 / (coef(svyvar(~api00, E$dstrat)) / nrow(E$apistrat))))
  out
})

meta <- list(
  R = R.version.string,
  survey = as.character(packageVersion("survey")),
  jsonlite = as.character(packageVersion("jsonlite")),
  date = format(Sys.time(), "%Y-%m-%dT%H:%M:%SZ", tz = "UTC"),
  options = 'options(survey.lonely.psu = "fail", survey.replicates.mse = FALSE, survey.ultimate.cluster = FALSE, survey.adjust.domain.lonely = FALSE) unless a design says otherwise',
  data_prep = list(sms = sms_prep,
                   api = "data(api); each of apistrat, apiclus1, apisrs is written to CSV (columns listed in api_columns) and read back; stype, awards, sch.wide, comp.imp, both are factors"),
  api_columns = api_keep,
  note = "design in each call is the design object named by the case's design id; NA/NaN/Inf are written as null"
)

out <- list(meta = meta, populations = populations, designs = designs_json, cases = cases_json, checks = checks)
json_path <- file.path(fixtures, "r_reference.json")

# jsonlite (1.8.4) prints at most 15 significant digits even with digits = NA, which does not
# round-trip most doubles (error up to ~5e-15 relative).  So every double is pre-formatted with
# C's "%.17g" (exact: 17 significant digits identify a double, and a correctly rounding parser
# such as Python's float() gets it back bit for bit) and inserted verbatim.  Shorter forms are
# not chosen because R's own parser (R_strtod) is not always correctly rounded, so it cannot be
# trusted to decide that 15 or 16 digits suffice.
fmt_num <- function(v) {
  if (!is.finite(v)) return("null")
  sprintf("%.17g", v)
}
fullprec <- function(x) {
  if (is.list(x)) {
    x[] <- lapply(x, fullprec)
    return(x)
  }
  if (is.double(x)) {
    s <- vapply(x, fmt_num, "")
    if (length(x) == 1) return(structure(s, class = "json"))
    return(structure(paste0("[", paste(s, collapse = ","), "]"), class = "json"))
  }
  x
}
write_json(fullprec(out), json_path, digits = NA, auto_unbox = TRUE, pretty = TRUE, na = "null",
           json_verbatim = TRUE)

# every double must read back identical (NA/NaN/Inf as null)
same <- function(a, b, path = "") {
  if (is.list(a)) {
    for (i in seq_along(a)) {
      key <- if (!is.null(names(a)) && nzchar(names(a)[i])) names(a)[i] else i
      same(a[[i]], if (is.character(key)) b[[key]] else b[[i]], paste0(path, "/", key))
    }
  } else if (is.double(a)) {
    bb <- if (is.list(b)) b else as.list(b)
    if (length(a) == 1 && !is.list(b)) bb <- list(b)
    for (i in seq_along(a)) {
      # within 1 ulp: R_strtod may misround a 17-digit string; Python's float() does not
      ok <- if (is.finite(a[i])) {
        r <- as.numeric(bb[[i]])
        identical(unname(a[i]), r) || abs(r - a[i]) <= abs(a[i]) * .Machine$double.eps
      } else is.null(bb[[i]])
      if (!ok) stop("JSON round trip failed at ", path, "[", i, "]")
    }
  }
  invisible(TRUE)
}
same(out, fromJSON(json_path, simplifyVector = FALSE))
if (nzchar(Sys.getenv("R_REFERENCE_HEX"))) {
  # every finite double in document order as C99 hex, for an exact check from Python
  hex <- character()
  walk <- function(x, path) {
    if (is.list(x)) {
      for (i in seq_along(x)) {
        key <- if (!is.null(names(x)) && nzchar(names(x)[i])) names(x)[i] else as.character(i - 1)
        walk(x[[i]], c(path, key))
      }
    } else if (is.double(x)) {
      for (i in seq_along(x)) if (is.finite(x[i]))
        hex <<- c(hex, paste(c(path, if (length(x) > 1) as.character(i - 1), sprintf("%a", x[i])),
                             collapse = "\t"))
    }
  }
  walk(out, character())
  writeLines(hex, Sys.getenv("R_REFERENCE_HEX"))
}
cat("round trip: every double in the JSON reads back (R parser: within 1 ulp)\n")

# round-trip check: one se at full precision
back <- fromJSON(json_path, simplifyVector = FALSE)
se_r <- SE(svymean(~api00, E$dstrat, na.rm = TRUE, deff = "replace"))[1]
se_j <- back$cases$apistrat$mean_api00$se
cat(sprintf("round trip: R %.17g JSON %.17g identical=%s\n", se_r, se_j, identical(num(se_r), se_j)))
stopifnot(identical(num(se_r), se_j))
