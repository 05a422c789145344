// What one finished run of an experiment says about itself (RUN/result.json): the experiment
// runner writes it when the run is done, the report reads it back. The struct and its JSON mapping
// live here, so that each field is named once; the JSON keeps the names result.json files have
// always had, so every committed folder reads as before.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace yoke {

// One test set's outcome.
struct TestResult {
  std::map<std::string, double> scores;  // bleu, chrf, chrf_pp (translation); ppl, ppl_word (LM)
  // Files, relative to the run's folder; ref as the grid's data names it. "" when absent.
  std::string hyp, ref, bleu_stats, nll;
  nlohmann::json decoding, scoring;  // how it was produced (beam, seconds; text, counts): carried, not read
};

struct Convergence {
  bool converged = false;
  std::string why;
};

// Whole-run numbers (kRunNumberFields); absent when the run does not have them. A report's
// variant (report/variant_report.h) holds their means over its seeds in the same fields.
struct RunNumbers {
  std::optional<double> params, emb, red;  // red: a fraction, 0.667 = 66.7%
  std::optional<double> tokens_per_s, wall_s, updates;
  std::optional<double> grad_share_output_early, grad_share_output_late;
  std::optional<double> emb_fraction, emb_fraction_closed_form;
};

struct RunResult : RunNumbers {
  std::string variant;
  int seed = 0;
  std::string stop_reason, checkpoint;
  std::map<std::string, TestResult> tests;  // by test-set name
  nlohmann::json config, analysis;          // the run's config, `yoke analyze`'s numbers: carried, not read

  // Not in result.json; set by whoever reads a run folder.
  std::optional<Convergence> convergence;              // from model/metrics.jsonl (experiment/convergence.h)
  std::map<std::string, std::string> hyp_files;        // test -> hypothesis path (scored against ref_files)
  // test -> per-sentence BLEU statistics (eval/bleu_stats_file.h); used before hyp_files, and what
  // lets a committed folder be reported again without the references.
  std::map<std::string, std::string> stats_files;
  // test -> each line's NLL of a language model (eval/sentence_nll_file.h): the sentence part of a
  // perplexity comparison.
  std::map<std::string, std::string> nll_files;

  // tests[test].scores[metric], when there.
  std::optional<double> score(const std::string& test, const std::string& metric) const;
};

// The whole-run numbers, by their result.json (and report.json) names, in the report's order.
struct RunNumberField {
  const char* key;
  std::optional<double> RunNumbers::*member;
  bool integral;  // a count: written as an integer
};
inline constexpr RunNumberField kRunNumberFields[] = {
    {"params", &RunNumbers::params, true},
    {"emb", &RunNumbers::emb, true},
    {"red", &RunNumbers::red, false},
    {"tokens_per_s", &RunNumbers::tokens_per_s, false},
    {"wall_s", &RunNumbers::wall_s, false},
    {"updates", &RunNumbers::updates, true},
    {"grad_share_output_early", &RunNumbers::grad_share_output_early, false},
    {"grad_share_output_late", &RunNumbers::grad_share_output_late, false},
    {"emb_fraction", &RunNumbers::emb_fraction, false},
    {"emb_fraction_closed_form", &RunNumbers::emb_fraction_closed_form, false}};

// result.json's content (the fields above the "Not in result.json" line).
nlohmann::json run_result_json(const RunResult& r);

// Reads result.json's content; `where` (its path) names it in the InputError a field of the wrong
// type gives. Fields it does not know are ignored: a newer writer's file still reads.
RunResult run_result_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace yoke
