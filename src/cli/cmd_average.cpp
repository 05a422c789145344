#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "train/average.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace yoke::cli {

int cmd_average(int argc, char** argv) {
  Args args("average",
            "Averages the weights of the last N numbered checkpoints (checkpoint_u<update>.ykp) of a model\n"
            "into one checkpoint; translate with it via `yoke translate --checkpoint checkpoint_avg.ykp`.",
            {{"model", "DIR", "model directory"},
             {"last", "N", "how many of the newest checkpoints", "5"},
             {"out", "NAME", "output file name in DIR", "checkpoint_avg.ykp"}});
  if (!args.parse(argc, argv, 2)) return 0;
  const std::string dir = args.require("model"), out = args.get("out");
  const int n = args.get_int("last");
  if (n < 1) throw InputError("yoke average: --last must be at least 1, got " + std::to_string(n));
  const auto used = average_checkpoints(dir, n, out);
  if (int(used.size()) < n) std::cerr << "note: only " << used.size() << " numbered checkpoints, averaged all of them\n";
  std::cerr << "averaged " << used.size() << " checkpoints (" << fs::path(used.front()).filename().string() << " … "
            << fs::path(used.back()).filename().string() << ") into " << (fs::path(dir) / out).string() << std::endl;
  return 0;
}

}  // namespace yoke::cli
