#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "train/checkpoint.h"
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
  const fs::path dir = args.require("model");
  if (!fs::is_directory(dir)) throw input_error(dir.string(), 0, "model directory not found");
  std::vector<std::pair<long long, fs::path>> found;
  for (auto& e : fs::directory_iterator(dir)) {
    const auto f = e.path().filename().string();
    if (f.rfind("checkpoint_u", 0) == 0 && e.path().extension() == ".ykp") found.emplace_back(std::stoll(f.substr(12)), e.path());
  }
  std::sort(found.begin(), found.end());
  const size_t n = size_t(std::max(1, args.get_int("last")));
  if (found.empty()) throw input_error(dir.string(), 0, "no numbered checkpoints (checkpoint_u*.ykp) to average");
  if (found.size() < n)
    std::cerr << "note: only " << found.size() << " numbered checkpoints, averaging all of them" << std::endl;
  std::vector<fs::path> use;
  for (size_t i = found.size() - std::min(n, found.size()); i < found.size(); ++i) use.push_back(found[i].second);
  Checkpoint avg = load_checkpoint(use.back().string());
  for (auto& [name, t] : avg.tensors)
    if (t.is_floating_point()) t = t.to(at::kDouble);
  for (size_t i = 0; i + 1 < use.size(); ++i) {
    auto c = load_checkpoint(use[i].string());
    for (auto& [name, t] : avg.tensors) {
      auto it = c.tensors.find(name);
      if (it == c.tensors.end() || it->second.sizes() != t.sizes())
        throw input_error(use[i].string(), 0, "tensor '" + name + "' missing or of another shape: checkpoints of different models?");
      if (t.is_floating_point()) t.add_(it->second.to(at::kDouble));
    }
  }
  for (auto& [name, t] : avg.tensors)
    if (t.is_floating_point()) t = t.div(double(use.size())).to(at::kFloat);
  avg.meta["averaged"] = nlohmann::json::array();
  for (auto& p : use) avg.meta["averaged"].push_back(p.filename().string());
  const auto out = dir / args.get("out");
  save_checkpoint(out.string(), avg);
  std::cerr << "averaged " << use.size() << " checkpoints (" << use.front().filename().string() << " … "
            << use.back().filename().string() << ") into " << out.string() << std::endl;
  return 0;
}

}  // namespace yoke::cli
