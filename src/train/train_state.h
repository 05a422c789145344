// Where the training loop is: enough to continue exactly (batches are a function of seed and
// epoch, dropout of seed and update), and the clock of a run that may span several sessions.
#pragma once
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include <nlohmann/json_fwd.hpp>

namespace yoke {

struct LoopState {
  int epoch = 1;
  size_t batch_in_epoch = 0;  // batches of this epoch already consumed
  int64_t update = 0;
  double best = NAN;
  int64_t best_update = -1;  // the update whose weights checkpoint_best must hold; -1 = not recorded
  int bad_validations = 0;
  double elapsed_s = 0;
  double valid_s = 0;  // of elapsed_s, spent validating (not training)
  int64_t tokens = 0;

  nlohmann::json to_json() const;
  static LoopState from_json(const nlohmann::json& j);  // throws nlohmann::json::exception
};

// Training time of the run: what the sessions before a resume took, plus this session's.
class RunClock {
 public:
  explicit RunClock(double before_s) : before_(before_s), t0_(std::chrono::steady_clock::now()) {}
  double before() const { return before_; }
  double now() const {
    return before_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  double before_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace yoke
