// experiment.json: what an experiment folder needs to be reported again from its own files, and
// where its numbers came from. Written by `yoke experiment` when it starts (each start adds an
// entry to "invocations": the command, the yoke commit, the machine), read by `yoke report DIR`.
//   {title, baseline, variants: [...], seeds: [...], overrides: [...], metric, expected: {variant: Δ},
//    grid: {path, text}, invocations: [{command, commit, machine, started}],
//    sequential (seeds = auto only): {min, max, looks, alpha, rounds: [{seeds, undecided}], stopped}}
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/grid.h"

namespace yoke {

// Adds this invocation to out_dir/experiment.json, creating it from the grid the first time. The
// grid's settings in an existing file are kept: they describe the runs already there.
void record_invocation(const Grid& grid, const std::string& grid_path, const std::string& out_dir,
                       const std::vector<std::string>& overrides, const std::string& command, const std::string& metric);

// seeds = auto: what the look with `seeds` seeds a variant found (the variants still undecided),
// and why the experiment stopped (empty while it goes on), in "sequential".
void record_round(const std::string& out_dir, int seeds, const std::vector<std::string>& undecided,
                  const std::string& stopped);

// out_dir/experiment.json; InputError naming the file when it is missing or incomplete.
nlohmann::json read_experiment_record(const std::string& out_dir);

// "git rev-parse HEAD" of the working directory (with "+dirty" when the tree has changes), or
// "unknown" outside a checkout; and a one-line description of this machine (CPU model, cores, memory).
std::string yoke_commit();
std::string machine_description();

}  // namespace yoke
