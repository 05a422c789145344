// The folder `yoke experiment --out DIR` writes, its file names in one place:
//   DIR/experiment.json                 the record: grid, seeds, invocations (experiment_record.h)
//   DIR/report.{html,md,csv,json}       the report (report/report.h)
//   DIR/runs/VARIANT/seedN/             one run, a RunDir:
//     result.json                       a RunResult (report/run_result.h): scores, and the names of the files below
//     model/                            the training's save_dir; model/metrics.jsonl holds its curves
//     hyp.TEST.txt, bleu.TEST.tsv.gz    a translation model's output and per-sentence BLEU statistics
//     nll.TEST.tsv.gz                   a language model's per-line NLL
//     analysis/                         yoke analyze's numbers and pictures
#pragma once
#include <filesystem>
#include <string>

#include "store/model_files.h"

namespace yoke {

inline std::filesystem::path experiment_record_path(const std::filesystem::path& experiment) {
  return experiment / "experiment.json";
}

class RunDir {
 public:
  // With an empty `experiment`, every path is relative to the experiment's folder (what an export copies).
  RunDir(const std::filesystem::path& experiment, const std::string& variant, int seed)
      : path_(experiment / "runs" / variant / ("seed" + std::to_string(seed))) {}
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path result() const { return path_ / "result.json"; }
  std::filesystem::path model() const { return path_ / "model"; }
  std::filesystem::path metrics() const { return model() / kMetricsLog; }
  std::filesystem::path hypotheses(const std::string& test) const { return path_ / ("hyp." + test + ".txt"); }
  std::filesystem::path bleu_stats(const std::string& test) const { return path_ / ("bleu." + test + ".tsv.gz"); }
  std::filesystem::path sentence_nll(const std::string& test) const { return path_ / ("nll." + test + ".tsv.gz"); }
  std::filesystem::path analysis() const { return path_ / "analysis"; }
  // A run is finished when its result.json is there (written last, atomically).
  bool finished() const { return std::filesystem::exists(result()); }

 private:
  std::filesystem::path path_;
};

}  // namespace yoke
