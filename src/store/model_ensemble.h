// Several trained models loaded as one ensemble (decode/search.h's Ensemble): `yoke translate`,
// `yoke score-pairs` and `yoke serve` read them here, so the vocabulary checks are the same.
#pragma once
#include <string>
#include <vector>

#include "decode/search.h"
#include "store/model_store.h"

namespace yoke {

struct LoadedEnsemble {
  std::vector<LoadedModel> members;
  Ensemble ensemble;  // over the members' models, weights normalised to sum 1
  const LoadedModel& first() const { return members.front(); }
  std::string checkpoints() const;     // the members' checkpoint files, for logs
};

// One model already loaded, as an ensemble of one (weight 1).
LoadedEnsemble ensemble_of_one(LoadedModel model);

// Loads the translation models in `dirs` (weights: one per model, or empty for equal weights).
// InputError naming both directories and vocabulary files when two models' source or target
// vocabularies differ, and when the weights do not match the models.
LoadedEnsemble load_ensemble(const std::vector<std::string>& dirs, const std::string& checkpoint,
                             const std::string& device, const std::vector<double>& weights = {});

}  // namespace yoke
