// `yoke experiment`: runs every (variant, seed) of a grid — train, average, translate the test
// sets, score, analyse — and turns the finished runs into a report. A run is done when its
// result.json exists, so a killed experiment started again skips what is finished and resumes
// the run it was in from that run's last checkpoint.
//
// Layout of the output directory:
//   runs/<variant>/seed<N>/model/        the trained model (checkpoints, metrics.jsonl)
//   experiment.json                      the grid's settings, and each command that ran (commit, machine)
//   runs/<variant>/seed<N>/hyp.<test>.txt
//   runs/<variant>/seed<N>/bleu.<test>.tsv.gz  per-sentence BLEU statistics (eval/bleu_stats_file.h)
//   runs/<variant>/seed<N>/analysis/     yoke analyze's files (when the grid asks for them)
//   runs/<variant>/seed<N>/result.json   every number of the run
//   report.{md,csv,json,html}, curves.svg, scores.svg (+ .png where a converter exists)
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace yoke {

struct ExperimentOptions {
  std::string grid_path, out_dir;
  std::vector<std::string> overrides;  // key=value for every run, after the grid
  int threads = 0;                     // 0: the config's
  int nproc = 1;                       // > 1: each run trains on this many local workers (Gloo)
  std::vector<std::string> variants;   // run only these (empty: all); the report shows only them
  std::vector<int> seeds;              // run only these of the grid's seeds (empty: all)
  std::string command;                 // as typed, for experiment.json
};

// Returns 0 when every run is done and the report written, 130 when interrupted (Ctrl-C).
int run_experiment(const ExperimentOptions& options, std::ostream& log);

// Rebuilds the report from the folder's own files (experiment.json, each finished run's
// result.json, bleu.<test>.tsv.gz and model/metrics.jsonl): `yoke report DIR`. The same files give
// the same report.{md,csv,json,html}, byte for byte.
void write_experiment_report(const std::string& out_dir, std::ostream& log);

// The same for a folder that may predate experiment.json: writes it from the grid first.
void write_experiment_report(const std::string& grid_path, const std::string& out_dir,
                             const std::vector<std::string>& overrides, std::ostream& log,
                             const std::vector<std::string>& variants, const std::vector<int>& seeds,
                             const std::string& command);

// Copies what a report is rebuilt from (experiment.json; per run result.json, hypotheses, BLEU
// statistics, metrics.jsonl, analysis numbers, and the analysis pictures the report shows, those of
// each variant's first seed; no checkpoints) into dest and reports there: the
// folder to commit under docs/results/.
void export_experiment(const std::string& out_dir, const std::string& dest, std::ostream& log);


}  // namespace yoke
