// The models a decoding command reads: one --model, or several (an ensemble, fairseq's
// --path a:b, Marian's --models) with optional --weights. They must share the vocabularies.
#pragma once
#include <string>
#include <vector>

#include "cli/options.h"
#include "service/translator.h"

namespace yoke::cli {

struct EnsembleOptions {
  std::vector<std::string> dirs;
  std::string checkpoint, device = "cpu", weights;
};
// --model DIR (repeatable), --checkpoint NAME, --device D and --weights W,W,…
void add_ensemble_options(CLI::App& app, EnsembleOptions& options);

// The translator's models as the options name them, with the weights of --weights (InputError
// naming the option when they are not one positive number per --model).
TranslatorSource translator_source(const EnsembleOptions& options);

}  // namespace yoke::cli
