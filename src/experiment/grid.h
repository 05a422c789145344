// An experiment grid: one base config, named variants that change any keys of it, and seeds.
// The file reads like the configs, in sections:
//
//   [grid]                        # how the experiment runs
//   title = Seed 001 on Multi30k En→De
//   config = configs/multi30k-ende.conf   # the base config (paths are relative to the working directory)
//   seeds = 1 2 3                 # or: seeds = auto 3..12 (more seeds until every comparison is decided)
//   baseline = dot                # the variant the others are compared with (default: the first)
//   average_last = 5              # average the last N checkpoints before translating (0: best)
//   beam = 5
//   lenpen = 1.0
//   analyze = true                # norms, estimator properties, PCA picture per model
//   expect = l2:+0.6 cosine:+0.41 # each variant's effect in its seed paper (the report's metric)
//   paper = dot:98.7M,54.5M,0%,27.62 l2:...   # the seed paper's Params, Emb., Red. and score
//   paper_source = Table 2, WMT'14 En→De     # where `paper`'s numbers come from
//
//   [base]                        # config keys for every variant, over the base config
//   max_minutes = 20
//
//   [variant dot]                 # one section per variant, in table order
//   output = dot
//
//   [registration]                # optional: the decision, fixed before any run (report/registration.h)
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "report/registration.h"

namespace yoke {

struct GridVariant {
  std::string name;
  std::vector<std::pair<std::string, std::string>> settings;  // key, value
  std::vector<std::string> where;                             // "file:line" of each setting
};

// seeds = auto MIN..MAX: seeds 1..MIN, then one more seed at a time for the baseline and the
// variants whose comparison is not decided yet, up to MAX (experiment/runner.h says the rule).
struct AutoSeeds {
  int min = 0, max = 0;  // max = 0: a fixed list of seeds
  bool on() const { return max > 0; }
  int looks() const { return max - min + 1; }  // the tests the sequential rule may make
};

struct Grid {
  std::string path;
  std::string title;
  std::string base_config;  // empty: the built-in defaults
  std::vector<int> seeds{1};  // with auto_seeds: the first MIN seeds
  AutoSeeds auto_seeds;
  std::string baseline;     // a variant name
  int average_last = 0;
  int beam = 5;
  double lenpen = 1.0;
  bool analyze = true;
  std::map<std::string, double> expected;  // variant -> the seed paper's effect against the baseline
  // variant -> the seed paper's own row, as printed: Params, Emb., Red. and (optionally) its score;
  // the report shows them beside yoke's counts.
  std::map<std::string, std::vector<std::string>> paper;
  std::string paper_source;
  GridVariant base;         // the [base] section
  std::vector<GridVariant> variants;
  Registration registration;  // the [registration] section (empty: none)

  // The full config of one run: base config file, [base], the variant, the seed, then the
  // command-line overrides. Throws InputError naming the grid file and line of a bad key.
  Config run_config(const GridVariant& variant, int seed, const std::vector<std::string>& overrides) const;
};

// What a registered grid fixes before its first run: the registration, how every run is made (each
// variant's whole config at the grid's settings, `--set` overrides included; threads left out, since
// they change no model's definition), the seeds and how the tests are decoded. experiment.json keeps
// it, and a later call whose grid gives another is refused once a run has finished
// (experiment/experiment_record.h).
nlohmann::json registered_design(const Grid& grid, const std::vector<std::string>& overrides);

// Reads and checks a grid: every variant's config is built once, so a typo fails at once,
// naming the file and line, rather than hours later when that variant's turn comes.
Grid load_grid(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace yoke
