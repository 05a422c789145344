// experiment.json: what an experiment folder needs to be reported again from its own files, and
// where its numbers came from. Written by `yoke experiment` when it starts (each start adds an
// entry to "invocations": the command, the yoke commit, the machine), read by `yoke report DIR`.
//   {title, baseline, variants: [...], seeds: [...], overrides: [...], metric, expected: {variant: Δ},
//    grid: {path, text}, invocations: [{command, commit, machine, started}],
//    sequential (seeds = auto only): {min, max, looks, alpha, rounds: [{seeds, undecided}], stopped},
//    registration (registered grids only): {design, recorded: {commit, date}}}
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/grid.h"

namespace yoke {

// Adds this invocation to out_dir/experiment.json, creating it from the grid the first time. The
// grid's settings in an existing file are kept: they describe the runs already there.
// A registered grid (design: registered_design(), null without a [registration]) is recorded
// under "registration": {design, recorded: {commit, date}}. Once a run of the folder has finished,
// a grid whose design differs from the recorded one, or that registers a design the folder did not
// have, is an InputError naming the first difference; before that, the design is recorded anew.
void record_invocation(const Grid& grid, const std::string& grid_path, const std::string& out_dir,
                       const std::vector<std::string>& overrides, const std::string& command, const std::string& metric,
                       const nlohmann::json& design = nullptr);

// seeds = auto: what the look with `seeds` seeds a variant found (the variants still undecided),
// and why the experiment stopped (empty while it goes on), in "sequential".
void record_round(const std::string& out_dir, int seeds, const std::vector<std::string>& undecided,
                  const std::string& stopped);

// out_dir/experiment.json; InputError naming the file when it is missing or incomplete.
nlohmann::json read_experiment_record(const std::string& out_dir);

// The commit this yoke was built from (util/version.h: "+dirty" when built with uncommitted
// changes; "unknown" outside a checkout), not the working directory's, which may have moved on
// since; and a one-line description of this machine (CPU model, cores, memory).
std::string yoke_commit();
std::string machine_description();

}  // namespace yoke
