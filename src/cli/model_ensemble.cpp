#include "cli/model_ensemble.h"

#include <sstream>

#include "util/error.h"

namespace yoke::cli {

void add_ensemble_options(CLI::App& app, EnsembleOptions& o) {
  add_repeated(app, "--model", o.dirs, "DIR",
               "model directory (the save_dir of `yoke train`); repeat it to decode with an ensemble whose\n"
               "log-probabilities are averaged at every step (the models must share the vocabularies; their\n"
               "architectures and estimators may differ)")
      ->required();
  add_checkpoint_option(app, o.checkpoint, "checkpoint file in each DIR");
  app.add_option("--device", o.device, "cpu, cuda or auto (a GPU when there is one)")->type_name("D")->capture_default_str();
  app.add_option("--weights", o.weights, "ensemble weights, one per --model, comma-separated (normalised to sum 1)")
      ->type_name("W,W,…")
      ->default_str("equal");
}

namespace {

std::vector<double> parse_weights(const std::string& text, size_t models) {
  std::vector<double> out;
  if (text.empty()) return out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    double w = 0;
    try {
      w = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || !(w > 0))
      throw InputError("--weights: '" + item + "' is not a positive number");
    out.push_back(w);
  }
  if (out.size() != models)
    throw InputError("--weights gives " + std::to_string(out.size()) + " weights for " + std::to_string(models) +
                     " models (--model); give one per model");
  return out;
}

}  // namespace

TranslatorSource translator_source(const EnsembleOptions& o) {
  TranslatorSource s;
  s.dirs = o.dirs;
  s.weights = parse_weights(o.weights, o.dirs.size());
  s.checkpoint = o.checkpoint;
  s.device = o.device;
  return s;
}

}  // namespace yoke::cli
