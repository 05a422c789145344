#include "train/schedule.h"

#include <algorithm>

namespace yoke {

std::string Schedule::limit_reached(const LoopState& s) const {
  if (cfg_.max_updates > 0 && s.update >= cfg_.max_updates) return "max_updates";
  if (cfg_.max_minutes > 0 && s.elapsed_s >= cfg_.max_minutes * 60) return "max_minutes";
  if (out_of_patience(s)) return "early stopping";
  return "";
}

bool Schedule::epochs_done(const LoopState& s) const { return cfg_.max_epochs > 0 && s.epoch > cfg_.max_epochs; }

bool Schedule::at_limit(const LoopState& s) const {
  return (cfg_.max_updates > 0 && s.update >= cfg_.max_updates) ||
         (cfg_.max_minutes > 0 && s.elapsed_s >= cfg_.max_minutes * 60);
}

bool Schedule::validate_now(const LoopState& s) const {
  return (cfg_.valid_interval > 0 && s.update % cfg_.valid_interval == 0) || at_limit(s);
}

bool Schedule::save_now(const LoopState& s) const {
  return cfg_.save_interval > 0 && s.update % cfg_.save_interval == 0;
}

bool Schedule::log_now(const LoopState& s) const { return s.update % std::max(1, cfg_.log_interval) == 0; }

std::string Schedule::after_update(const LoopState& s, bool validation_stopped, bool stop_asked) const {
  if (validation_stopped) return "early stopping";
  if (stop_asked) return "interrupted";
  return limit_reached(s);
}

bool Schedule::note_validation(LoopState& s, double loss, double bleu) const {
  const bool use_bleu = cfg_.early_stop_metric == EarlyStopMetric::bleu && !std::isnan(bleu);
  const double metric = use_bleu ? bleu : loss;
  // A NaN result is never the best (the first validation of a diverged run would otherwise be).
  const bool better = !std::isnan(metric) && (std::isnan(s.best) || (use_bleu ? metric > s.best : metric < s.best));
  if (better) {
    s.best = metric;
    s.best_update = s.update;
    s.bad_validations = 0;
  } else {
    ++s.bad_validations;
  }
  return better;
}

bool Schedule::out_of_patience(const LoopState& s) const {
  return cfg_.patience > 0 && s.bad_validations >= cfg_.patience;
}

double Schedule::total_updates(size_t batches_per_epoch, size_t batches_per_update) const {
  if (cfg_.max_updates > 0) return double(cfg_.max_updates);
  if (cfg_.max_epochs > 0) return double(cfg_.max_epochs) * double(batches_per_epoch) / double(batches_per_update);
  return 0;
}

}  // namespace yoke
