#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "store/average.h"
#include "store/model_files.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace yoke::cli {

int cmd_average(int argc, char** argv) {
  Command cmd("average",
              "Averages the weights of the last N numbered checkpoints (checkpoint_u<update>.ykp) of a model\n"
              "into one checkpoint; translate with it via `yoke translate --checkpoint checkpoint_avg.ykp`.");
  std::string dir, out = kCheckpointAveraged;
  int last = 5;
  cmd.add_option("--model", dir, "model directory")->type_name("DIR")->required();
  add_value(cmd, "--last", last, "N", "how many of the newest checkpoints")->capture_default_str();
  cmd.add_option("--out", out, "output file name in DIR (not one of the names `yoke train` writes)")->type_name("NAME")->capture_default_str();
  if (!cmd.read(argc, argv)) return 0;
  const int n = last;
  if (n < 1) throw InputError("--last must be at least 1, got " + std::to_string(n));
  const auto used = average_checkpoints(dir, n, out);
  if (int(used.size()) < n) std::cerr << "note: only " << used.size() << " numbered checkpoints, averaged all of them\n";
  std::cerr << "averaged " << used.size() << " checkpoints (" << fs::path(used.front()).filename().string() << " … "
            << fs::path(used.back()).filename().string() << ") into " << (fs::path(dir) / out).string() << std::endl;
  return 0;
}

}  // namespace yoke::cli
