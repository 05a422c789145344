#include "train/train_state.h"

#include <nlohmann/json.hpp>

namespace yoke {

nlohmann::json LoopState::to_json() const {
  return {{"epoch", epoch}, {"batch_in_epoch", batch_in_epoch}, {"update", update},
          {"best", std::isnan(best) ? nlohmann::json() : nlohmann::json(best)}, {"best_update", best_update},
          {"bad_validations", bad_validations}, {"elapsed_s", elapsed_s}, {"valid_s", valid_s}, {"tokens", tokens}};
}

LoopState LoopState::from_json(const nlohmann::json& j) {
  LoopState s;
  s.epoch = j.at("epoch");
  s.batch_in_epoch = j.at("batch_in_epoch");
  s.update = j.at("update");
  s.best = j.at("best").is_null() ? NAN : j.at("best").get<double>();
  s.best_update = j.value("best_update", int64_t(-1));  // absent before it was recorded
  s.bad_validations = j.at("bad_validations");
  s.elapsed_s = j.at("elapsed_s");
  s.valid_s = j.value("valid_s", 0.0);
  s.tokens = j.at("tokens");
  return s;
}

}  // namespace yoke
