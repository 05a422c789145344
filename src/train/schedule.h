// The training loop's policy: when to validate, when to save, when to stop. Pure functions of
// the config and the loop's state (fairseq's validate_and_save / should_stop_early, Marian's
// scheduler), so that every rule is testable without a model.
#pragma once
#include <cstddef>
#include <string>

#include "config/config.h"
#include "train/train_state.h"

namespace yoke {

class Schedule {
 public:
  explicit Schedule(Config cfg) : cfg_(std::move(cfg)) {}

  // The limit the run has reached: "max_updates", "max_minutes", "early stopping" (patience
  // used up), or "" to go on. Asked before the first update too: a run resumed after it reached
  // a limit (killed while its caller translated, say) stops at once rather than training one
  // more update.
  std::string limit_reached(const LoopState& s) const;
  // Every epoch of max_epochs is done: the loop stops before it starts another ("max_epochs").
  bool epochs_done(const LoopState& s) const;
  // max_updates or max_minutes reached (not patience: that is the outcome of a validation).
  bool at_limit(const LoopState& s) const;

  // After an update: validate every valid_interval updates, and at a limit, so that the last
  // weights are validated (and saved) before the run stops.
  bool validate_now(const LoopState& s) const;
  // After an update that did not validate (a validation saves anyway): every save_interval updates.
  bool save_now(const LoopState& s) const;
  // At the end of an epoch: valid_interval = 0 validates once per epoch.
  bool validate_at_epoch_end() const { return cfg_.valid_interval == 0; }
  // A metrics "train" record and a loss on the progress bar every log_interval updates.
  bool log_now(const LoopState& s) const;

  // Why to stop after an update and its validation or save, or "". A stop request is taken
  // after the update's own validation: stopping between the two saved an update whose
  // validation no resume would ever run.
  std::string after_update(const LoopState& s, bool validation_stopped, bool stop_asked) const;

  // A validation's result against the best so far (BLEU, higher is better, where measured and
  // chosen; else loss, lower is better): updates best, best_update and bad_validations, and
  // returns whether it is the new best.
  bool note_validation(LoopState& s, double loss, double bleu) const;
  // patience validations in a row without a better one: stop early.
  bool out_of_patience(const LoopState& s) const;

  // The progress bar's total: max_updates, else what max_epochs of this size take, else 0 (unknown).
  double total_updates(size_t batches_per_epoch, size_t batches_per_update) const;

 private:
  Config cfg_;
};

}  // namespace yoke
