#include "report/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

#include "eval/bleu_stats_file.h"
#include "eval/bootstrap.h"
#include "eval/moments.h"
#include "eval/sentence_nll_file.h"
#include "eval/significance.h"
#include "report/registered_report.h"
#include "report/report_statistics.h"
#include "report/verdict.h"
#include "text/corpus.h"
#include "util/error.h"

namespace yoke {

using namespace report_detail;

namespace {

using nlohmann::json;

// ------------------------------------------------------------------ reading the runs


// Metric names of one test in one run.
void collect_metric_keys(const RunResult& r, const std::string& test, std::set<std::string>* keys) {
  const auto t = r.tests.find(test);
  if (t == r.tests.end()) return;
  for (const auto& [metric, value] : t->second.scores) keys->insert(metric);
}

// Test names found in the runs, when the input names none.
std::vector<std::string> discover_tests(const ReportInput& in) {
  std::vector<std::string> names;
  for (const auto& r : in.runs)
    for (const auto& [name, t] : r.tests)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  return names;
}


// The metric the report is about first, then the others in name order.
std::vector<std::string> metric_keys(const Runs& runs, const std::string& test,
                                     const std::string& primary) {
  std::set<std::string> keys;
  for (const RunResult* r : runs) collect_metric_keys(*r, test, &keys);
  std::vector<std::string> out;
  if (keys.count(primary)) out.push_back(primary);
  for (const auto& k : keys) {
    if (k != primary) out.push_back(k);
  }
  return out;
}

// ------------------------------------------------------------------ statistics

// Sample standard deviation (N−1); 0 for a single value.
double stddev(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  return std::sqrt(sample_variance(v));
}

// One test's metric of every run that has it.
std::vector<double> scores_of_runs(const Runs& runs, const std::string& test, const std::string& metric) {
  std::vector<double> out;
  for (const RunResult* r : runs)
    if (auto v = r->score(test, metric)) out.push_back(*v);
  return out;
}

// ------------------------------------------------------------------ grouping

std::vector<std::string> ordered_variants(const ReportInput& in) {
  std::vector<std::string> order;
  auto add = [&](const std::string& v) {
    if (std::find(order.begin(), order.end(), v) == order.end()) order.push_back(v);
  };
  for (const auto& v : in.variant_order) add(v);
  for (const auto& r : in.runs) add(r.variant);
  return order;
}

}  // namespace

// The runs of one variant, by seed; two runs with the same seed are an input error.
Runs report_detail::runs_of(const ReportInput& in, const std::string& variant) {
  Runs out;
  for (const auto& r : in.runs) {
    if (r.variant == variant) out.push_back(&r);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const RunResult* a, const RunResult* b) { return a->seed < b->seed; });
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i]->seed == out[i - 1]->seed) {
      throw InputError("report: variant '" + variant + "' has two runs with seed " +
                       std::to_string(out[i]->seed));
    }
  }
  return out;
}

const std::vector<std::string>& LineCache::get(const std::string& path) {
  auto it = files_.find(path);
  if (it == files_.end()) it = files_.emplace(path, read_lines(path)).first;
  return it->second;
}

namespace {

// ------------------------------------------------------------------ significance

// Per-sentence BLEU statistics of every run of one variant on one test, with the runs' seeds: from
// the statistics files where the runs have them, else from hypotheses and references. Empty when
// some run has neither (the test then uses the per-seed scores alone).
struct RunStats {
  std::vector<std::vector<BleuStats>> runs;
  std::vector<int> seeds;
};

RunStats sentence_stats_of(const Runs& runs, const std::string& test, const ReportInput& in, LineCache* cache) {
  RunStats out;
  for (const RunResult* r : runs) {
    if (auto st = r->stats_files.find(test); st != r->stats_files.end()) {
      out.runs.push_back(read_bleu_stats(st->second));
    } else {
      const auto hyp = r->hyp_files.find(test);
      const auto ref = in.ref_files.find(test);
      if (hyp == r->hyp_files.end() || ref == in.ref_files.end()) return {};
      out.runs.push_back(bleu_stats_of(cache->get(hyp->second), cache->get(ref->second), hyp->second));
    }
    out.seeds.push_back(r->seed);
  }
  for (const auto& run : out.runs)
    if (run.size() != out.runs.front().size())
      throw InputError("report: the outputs of test " + test + " have " + std::to_string(run.size()) + " and " +
                       std::to_string(out.runs.front().size()) + " sentences");
  return out;
}

SeededScores scores_of(const Runs& runs, const std::string& test, const std::string& metric) {
  SeededScores s;
  for (const RunResult* r : runs)
    if (auto v = r->score(test, metric)) {
      s.seeds.push_back(r->seed);
      s.scores.push_back(*v);
    }
  return s;
}

// Per-line NLL of every run of one variant on one test, and the lines' counts (subwords for ppl,
// words for ppl_word); empty when some run has no NLL file.
struct RunNll {
  std::vector<std::vector<double>> runs;
  std::vector<double> count;
};

RunNll sentence_nll_of(const Runs& runs, const std::string& test, const std::string& metric) {
  RunNll out;
  for (const RunResult* r : runs) {
    const auto f = r->nll_files.find(test);
    if (f == r->nll_files.end()) return {};
    SentenceNll lines = read_sentence_nll(f->second);
    const auto& count = metric == "ppl_word" ? lines.words : lines.subwords;
    if (out.runs.empty()) out.count = count;
    if (count != out.count)
      throw InputError("report: " + f->second + ": its lines' counts differ from another run's on test " + test);
    out.runs.push_back(std::move(lines.nll));
  }
  return out;
}

// The runs of both sides whose seed the other side has too, when there are at least two: the
// comparison is then paired. A sequential grid stops adding seeds to a decided variant while the
// baseline goes on; comparing on the common seeds keeps the comparison the look decided with.
std::pair<Runs, Runs> on_common_seeds(const Runs& base, const Runs& var) {
  std::set<int> in_base, common;
  for (const RunResult* r : base) in_base.insert(r->seed);
  for (const RunResult* r : var)
    if (in_base.count(r->seed)) common.insert(r->seed);
  if (common.size() < 2) return {base, var};
  Runs b, v;
  for (const RunResult* r : base)
    if (common.count(r->seed)) b.push_back(r);
  for (const RunResult* r : var)
    if (common.count(r->seed)) v.push_back(r);
  return {b, v};
}

}  // namespace

SignificanceResult report_detail::compare_runs(const Runs& a_runs, const Runs& b_runs, const std::string& test,
                                               const ReportInput& in, Pairing pairing, LineCache* cache) {
  const SeededScores a = scores_of(a_runs, test, in.metric), b = scores_of(b_runs, test, in.metric);
  SignificanceResult r = seed_significance(a, b, pairing);
  if (in.metric == "bleu") {
    const RunStats sa = sentence_stats_of(a_runs, test, in, cache), sb = sentence_stats_of(b_runs, test, in, cache);
    if (!sa.runs.empty() && !sb.runs.empty()) {
      if (sa.runs.front().size() != sb.runs.front().size())
        throw InputError("report: the variants' outputs of test " + test + " differ in length");
      r = bleu_significance(sa.runs, sa.seeds, sb.runs, sb.seeds, pairing);
    }
  } else if (in.metric == "ppl" || in.metric == "ppl_word") {
    const RunNll na = sentence_nll_of(a_runs, test, in.metric), nb = sentence_nll_of(b_runs, test, in.metric);
    if (!na.runs.empty() && !nb.runs.empty()) {
      if (na.count != nb.count)
        throw InputError("report: the variants' NLL files of test " + test + " count different lines or tokens");
      r = perplexity_significance(na.runs, a.seeds, nb.runs, b.seeds, na.count, pairing);
    }
  }
  return r;
}

Pairing report_detail::registered_pairing(const ReportInput& in) {
  return in.registration && !in.registration->paired ? Pairing::unpaired : Pairing::by_seed;
}

namespace {

// The comparison fields of a test entry: eval/significance.h's test of the variant against the
// baseline (test_entry passes the runs of the seeds both have), and for BLEU Koehn's sentence-only
// bootstrap beside it. None where there is nothing to compare: no baseline, the baseline itself, a
// side without scores.
void compare_with_baseline(VariantTest& out, const Runs* base_all, bool is_baseline, const Runs& var_all,
                           const std::string& variant, const std::string& test, const ReportInput& in, int samples,
                           LineCache* cache) {
  const auto expected = in.expected.find(variant);
  if (expected != in.expected.end() && !is_baseline) out.expected = expected->second;
  if (!base_all || is_baseline) return;
  const Runs &base = *base_all, &var = var_all;
  const SeededScores a = scores_of(base, test, in.metric), b = scores_of(var, test, in.metric);
  if (a.scores.empty() || b.scores.empty()) return;
  const SignificanceResult r = compare_runs(base, var, test, in, registered_pairing(in), cache);
  if (in.metric == "bleu" && samples > 1) {
    const RunStats sa = sentence_stats_of(base, test, in, cache), sb = sentence_stats_of(var, test, in, cache);
    if (!sa.runs.empty() && !sb.runs.empty()) {
      const BootstrapResult k = paired_bootstrap_bleu_seeds(sa.runs, sb.runs, samples, 12345);
      out.sentence_bootstrap = SentenceBootstrap{k.ci_low, k.ci_high, k.p_value, k.samples};
    }
  }
  out.p_seeds = std::make_pair(a.seeds, b.seeds);
  if (!r.testable) return;
  out.p_value = r.p_value;
  out.delta_ci95 = std::make_pair(r.ci_low, r.ci_high);
  // detectable and seeds_needed follow in decide_all, at the level the verdict tests.
  out.test = ComparisonTest{r, std::nullopt};
}

// Every run of the variant says its validation plateaued (RunResult::convergence); none when no
// run says either way.
std::optional<bool> all_converged(const Runs& runs) {
  bool any = false, all = true;
  for (const RunResult* r : runs) {
    if (!r->convergence) {
      all = false;
      continue;
    }
    any = true;
    all = all && r->convergence->converged;
  }
  return any ? std::optional<bool>(all) : std::nullopt;
}

std::vector<RunLine> run_lines(const Runs& runs) {
  std::vector<RunLine> out;
  for (const RunResult* r : runs) out.push_back({r->seed, r->updates, r->stop_reason, r->convergence});
  return out;
}

// Each comparison's verdict, and the simultaneous interval it reads: Bonferroni over the comparisons
// of one test set (report/verdict.h says why one adjustment covers both kinds of claim).
void decide_all(std::vector<VariantEntry>& report, const std::vector<std::string>& tests, const std::string& metric,
                double alpha) {
  const VariantEntry* base = nullptr;
  for (const auto& e : report)
    if (e.baseline) base = &e;
  for (const auto& test : tests) {
    int comparisons = 0;
    for (const auto& e : report) comparisons += e.test(test).p_value.has_value();
    for (auto& e : report) {
      if (e.baseline || !base) continue;
      VariantTest& t = e.tests[test];
      VerdictInput v;
      v.delta = t.delta.value_or(0.0);
      v.testable = t.p_value.has_value() && t.test.has_value();
      v.expected = t.expected;
      v.alpha = alpha;
      v.comparisons = std::max(1, comparisons);
      if (v.testable) {
        ComparisonTest& c = *t.test;
        v.p_value = *t.p_value;
        v.delta = c.result.delta;  // the interval is centred where the test is
        v.se = c.result.se;
        v.df = c.result.df;
        // Power at the level the interval is read at, and the seeds a variant that would find the
        // seed's effect (without one, the Δ observed) at that level.
        const double level = alpha / double(v.comparisons);
        v.detectable = detectable_effect(v.se, v.df, level);
        c.detectable = v.detectable;
        if (auto k = seeds_needed(c.result, v.expected.value_or(v.delta), level)) v.seeds_needed = *k;
        t.seeds_needed = v.seeds_needed;
      }
      v.converged = e.converged.value_or(false) && base->converged.value_or(false);
      v.lower_is_better = lower_is_better(metric);
      if (v.testable) {
        const VerdictInterval i = verdict_interval(v);
        t.p_adjusted = i.p_adjusted;
        t.interval = DecisionInterval{i.low, i.high, i.level};
      }
      t.verdict = VariantVerdict{decide(v), decided(v)};
    }
  }
}

// The Δ of the metric for every seed both variants have: the seed noise, in plain view.
std::vector<SeedDelta> deltas_per_seed(const Runs& base, const Runs& var, const std::string& test,
                                       const std::string& metric) {
  std::vector<SeedDelta> out;
  for (const RunResult* v : var) {
    const auto mv = v->score(test, metric);
    for (const RunResult* b : base) {
      const auto mb = b->score(test, metric);
      if (b->seed == v->seed && mv && mb) out.push_back({v->seed, *mv - *mb});
    }
  }
  return out;
}

VariantTest test_entry(const Runs& runs, const Runs* base, bool is_baseline, const std::string& variant,
                       const std::string& test, const ReportInput& in, int samples, LineCache* cache) {
  VariantTest t;
  for (const auto& key : metric_keys(runs, test, in.metric)) {
    const std::vector<double> values = scores_of_runs(runs, test, key);
    t.metrics[key] = MetricSummary{mean(values), stddev(values), values};
  }
  if (!base) {
    compare_with_baseline(t, nullptr, is_baseline, runs, variant, test, in, samples, cache);
    return t;
  }
  // Δ of the report's metric, baseline mean as reference, and its test, on the seeds both have
  // (all, in a grid of fixed seeds). Unpaired by registration: every run of both sides, whatever
  // their seeds.
  const auto [base_used, var_used] =
      registered_pairing(in) == Pairing::unpaired ? std::make_pair(*base, runs) : on_common_seeds(*base, runs);
  const double m = mean(scores_of_runs(var_used, test, in.metric));
  const double b = mean(scores_of_runs(base_used, test, in.metric));
  if (std::isfinite(m) && std::isfinite(b)) t.delta = is_baseline ? 0.0 : m - b;
  if (!is_baseline) t.delta_per_seed = deltas_per_seed(*base, runs, test, in.metric);
  compare_with_baseline(t, &base_used, is_baseline, var_used, variant, test, in, samples, cache);
  return t;
}

std::optional<double> mean_of(const Runs& runs, std::optional<double> RunNumbers::*field) {
  std::vector<double> v;
  for (const RunResult* r : runs)
    if (r->*field) v.push_back(*(r->*field));
  return v.empty() ? std::nullopt : std::optional<double>(mean(v));
}

}  // namespace

namespace report_detail {

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::vector<std::string> test_names(const ReportInput& in) {
  return in.test_names.empty() ? discover_tests(in) : in.test_names;
}

bool lower_is_better(const std::string& metric) { return metric == "ppl" || metric == "ppl_word" || metric == "loss"; }

}  // namespace report_detail

// A registered report: the registered verdicts, intervals and adjusted p replace the table's own
// for each registered comparison of a variant with the baseline on the registered test set.
void take_registered_verdicts(std::vector<VariantEntry>& report, const ReportInput& in,
                              const RegisteredDecision* decision) {
  if (!decision) return;
  const std::string& test = decision->registration.test;
  for (const DecidedComparison& c : decision->comparisons) {
    if (c.claim.a != in.baseline) continue;
    for (auto& e : report) {
      if (e.variant != c.claim.b || !e.tests.count(test)) continue;
      VariantTest& t = e.tests[test];
      t.verdict = VariantVerdict{{c.verdict.verdict, "registered: " + c.verdict.why}, c.decided};
      if (c.tested) {
        t.interval = c.interval;
        t.p_adjusted = c.p_adjusted;
      }
    }
  }
}

std::vector<VariantEntry> build_report(const ReportInput& in, int bootstrap_samples, const RegisteredDecision* decision) {
  const auto tests = test_names(in);
  const Runs base = runs_of(in, in.baseline);
  const Runs* base_ptr = base.empty() ? nullptr : &base;
  LineCache cache;
  std::vector<VariantEntry> report;
  for (const auto& variant : ordered_variants(in)) {
    const Runs runs = runs_of(in, variant);
    if (runs.empty()) continue;
    VariantEntry entry;
    entry.variant = variant;
    entry.baseline = variant == in.baseline;
    for (const RunResult* r : runs) entry.seeds.push_back(r->seed);
    for (const auto& f : kRunNumberFields) entry.means.*f.member = mean_of(runs, f.member);
    entry.converged = all_converged(runs);
    entry.runs = run_lines(runs);
    for (const auto& test : tests)
      entry.tests[test] = test_entry(runs, base_ptr, entry.baseline, variant, test, in, bootstrap_samples, &cache);
    report.push_back(std::move(entry));
  }
  decide_all(report, tests, in.metric, in.alpha);
  take_registered_verdicts(report, in, decision);
  return report;
}

std::string metric_name(const std::string& key) {
  static const std::map<std::string, std::string> names = {
      {"bleu", "BLEU"}, {"chrf", "chrF"}, {"chrf_pp", "chrF++"}, {"chrfpp", "chrF++"},
      {"chrf++", "chrF++"}, {"ppl", "PPL"}, {"ppl_word", "word PPL"}, {"loss", "Loss"}};
  auto it = names.find(key);
  return it == names.end() ? key : it->second;
}

}  // namespace yoke
