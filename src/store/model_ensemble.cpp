#include "store/model_ensemble.h"

#include <algorithm>
#include <tuple>

#include "util/error.h"

namespace yoke {

std::string LoadedEnsemble::checkpoints() const {
  std::string out;
  for (const auto& m : members) out += (out.empty() ? "" : ", ") + m.checkpoint;
  return out;
}

LoadedEnsemble ensemble_of_one(LoadedModel model) {
  std::vector<LoadedModel> members;
  members.push_back(std::move(model));
  Ensemble one(*members.front().model);  // the model lives on the heap: moving the vector keeps it
  return LoadedEnsemble{std::move(members), std::move(one)};
}

LoadedEnsemble load_ensemble(const std::vector<std::string>& dirs, const std::string& checkpoint,
                             const std::string& device, const std::vector<double>& weights) {
  if (dirs.empty()) throw InputError("no model given");
  if (!weights.empty() && weights.size() != dirs.size())
    throw InputError(std::to_string(weights.size()) + " weights for " + std::to_string(dirs.size()) +
                     " models; give one weight per model");
  std::vector<LoadedModel> members;
  for (const auto& dir : dirs) {
    members.push_back(load_model_for(Task::translate, dir, checkpoint, device));
    const auto& first = members.front();
    for (auto [side, a, b] : {std::tuple<const char*, const Vocab*, const Vocab*>{"source", &first.src_vocab,
                                                                                 &members.back().src_vocab},
                              {"target", &first.tgt_vocab, &members.back().tgt_vocab}}) {
      const int at = first_difference(*a, *b);
      if (at >= 0)
        throw InputError(std::string("an ensemble needs one ") + side + " vocabulary, but " + dirs.front() + " (" +
                         a->path() + ", " + std::to_string(a->size()) + " subwords) and " + dir + " (" + b->path() +
                         ", " + std::to_string(b->size()) + " subwords) differ from id " + std::to_string(at) + " on");
    }
  }
  std::vector<Transformer*> models;
  for (auto& m : members) models.push_back(m.model.get());
  Ensemble ensemble(models, weights);
  return LoadedEnsemble{std::move(members), std::move(ensemble)};
}

}  // namespace yoke
