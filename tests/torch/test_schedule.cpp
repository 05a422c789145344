// The training loop's policy (train/schedule.h) without a model: when it validates, saves and
// stops, and how a validation moves the best result and the patience count.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "config/config.h"
#include "train/schedule.h"

using namespace yoke;

namespace {

LoopState at_update(int64_t update, double elapsed_s = 0) {
  LoopState s;
  s.update = update;
  s.elapsed_s = elapsed_s;
  return s;
}

}  // namespace

TEST(Schedule, ValidatesEveryIntervalAndAtALimit) {
  Config cfg;
  cfg.valid_interval = 5;
  cfg.max_updates = 12;
  const Schedule s(cfg);
  std::vector<int64_t> validated;
  for (int64_t u = 1; u <= 12; ++u)
    if (s.validate_now(at_update(u))) validated.push_back(u);
  EXPECT_EQ(validated, (std::vector<int64_t>{5, 10, 12}));  // 12: the last weights are validated
  EXPECT_FALSE(s.validate_at_epoch_end());
}

TEST(Schedule, ValidatesWhenTheTimeLimitIsReached) {
  Config cfg;
  cfg.valid_interval = 1000;
  cfg.max_minutes = 2;
  const Schedule s(cfg);
  EXPECT_FALSE(s.validate_now(at_update(7, 119.9)));
  EXPECT_TRUE(s.validate_now(at_update(7, 120.0)));
  EXPECT_TRUE(s.at_limit(at_update(7, 120.0)));
}

TEST(Schedule, ValidIntervalZeroValidatesAtEpochEndOnly) {
  Config cfg;
  cfg.valid_interval = 0;
  cfg.max_updates = 50;
  const Schedule s(cfg);
  EXPECT_TRUE(s.validate_at_epoch_end());
  for (int64_t u = 1; u < 50; ++u) EXPECT_FALSE(s.validate_now(at_update(u))) << u;
  EXPECT_TRUE(s.validate_now(at_update(50)));  // a limit still validates
}

TEST(Schedule, SavesEverySaveInterval) {
  Config cfg;
  cfg.save_interval = 3;
  const Schedule s(cfg);
  std::vector<int64_t> saved;
  for (int64_t u = 1; u <= 10; ++u)
    if (s.save_now(at_update(u))) saved.push_back(u);
  EXPECT_EQ(saved, (std::vector<int64_t>{3, 6, 9}));
  cfg.save_interval = 0;  // at validations only
  EXPECT_FALSE(Schedule(cfg).save_now(at_update(3)));
}

TEST(Schedule, LogsEveryLogInterval) {
  Config cfg;
  cfg.log_interval = 4;
  EXPECT_TRUE(Schedule(cfg).log_now(at_update(8)));
  EXPECT_FALSE(Schedule(cfg).log_now(at_update(9)));
  cfg.log_interval = 0;  // taken as 1
  EXPECT_TRUE(Schedule(cfg).log_now(at_update(9)));
}

TEST(Schedule, EachLimitIsItsOwnStopReason) {
  Config cfg;
  EXPECT_EQ(Schedule(cfg).limit_reached(at_update(1000000, 1e7)), "");  // no limits set
  cfg.max_updates = 10;
  EXPECT_EQ(Schedule(cfg).limit_reached(at_update(9)), "");
  EXPECT_EQ(Schedule(cfg).limit_reached(at_update(10)), "max_updates");
  cfg.max_updates = 0;
  cfg.max_minutes = 1;
  EXPECT_EQ(Schedule(cfg).limit_reached(at_update(3, 59)), "");
  EXPECT_EQ(Schedule(cfg).limit_reached(at_update(3, 60)), "max_minutes");
  cfg.max_minutes = 0;
  cfg.patience = 2;
  LoopState s;
  s.bad_validations = 1;
  EXPECT_EQ(Schedule(cfg).limit_reached(s), "");
  s.bad_validations = 2;
  EXPECT_EQ(Schedule(cfg).limit_reached(s), "early stopping");
  cfg.max_epochs = 3;
  s.epoch = 3;
  EXPECT_FALSE(Schedule(cfg).epochs_done(s));
  s.epoch = 4;
  EXPECT_TRUE(Schedule(cfg).epochs_done(s));
}

TEST(Schedule, AResumedRunAlreadyAtItsLimitStopsBeforeAnyUpdate) {
  Config cfg;
  cfg.max_updates = 20;
  LoopState resumed = at_update(20);
  resumed.batch_in_epoch = 4;
  EXPECT_EQ(Schedule(cfg).limit_reached(resumed), "max_updates");
  cfg.max_updates = 0;
  cfg.max_minutes = 0.5;
  EXPECT_EQ(Schedule(cfg).limit_reached(at_update(20, 31)), "max_minutes");
}

TEST(Schedule, AfterAnUpdateValidationComesBeforeTheStopRequestAndTheRequestBeforeLimits) {
  Config cfg;
  cfg.max_updates = 5;
  const Schedule s(cfg);
  EXPECT_EQ(s.after_update(at_update(3), false, false), "");
  EXPECT_EQ(s.after_update(at_update(5), false, false), "max_updates");
  EXPECT_EQ(s.after_update(at_update(5), false, true), "interrupted");
  EXPECT_EQ(s.after_update(at_update(5), true, true), "early stopping");
}

// A diverged run's first validation has NaN loss and BLEU: it is never the best, not even first.
TEST(Schedule, ANanValidationIsNeverTheBest) {
  Config cfg;
  cfg.early_stop_metric = EarlyStopMetric::loss;
  const Schedule s(cfg);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  LoopState first;
  first.update = 10;
  EXPECT_FALSE(s.note_validation(first, nan, nan));
  EXPECT_TRUE(std::isnan(first.best));
  EXPECT_EQ(first.bad_validations, 1);
  EXPECT_TRUE(s.note_validation(first, 3.0, nan));  // a finite one after it is
  LoopState later;
  EXPECT_TRUE(s.note_validation(later, 3.0, nan));
  EXPECT_FALSE(s.note_validation(later, nan, nan));
  EXPECT_EQ(later.best, 3.0);
}

TEST(Schedule, BetterValidationsFollowTheChosenMetric) {
  Config cfg;
  cfg.early_stop_metric = EarlyStopMetric::bleu;
  cfg.patience = 2;
  const Schedule s(cfg);
  LoopState st;
  st.update = 10;
  EXPECT_TRUE(s.note_validation(st, 5.0, 20.0));  // the first is the best
  EXPECT_EQ(st.best, 20.0);
  EXPECT_EQ(st.best_update, 10);
  st.update = 20;
  EXPECT_FALSE(s.note_validation(st, 4.0, 19.0));  // lower BLEU, though lower loss
  EXPECT_EQ(st.bad_validations, 1);
  EXPECT_FALSE(s.out_of_patience(st));
  st.update = 30;
  EXPECT_FALSE(s.note_validation(st, 3.0, 20.0));  // equal is not better
  EXPECT_TRUE(s.out_of_patience(st));
  st.update = 40;
  EXPECT_TRUE(s.note_validation(st, 3.0, 21.0));
  EXPECT_EQ(st.bad_validations, 0);
  EXPECT_EQ(st.best_update, 40);

  cfg.early_stop_metric = EarlyStopMetric::loss;
  LoopState by_loss;
  EXPECT_TRUE(Schedule(cfg).note_validation(by_loss, 5.0, 30.0));
  EXPECT_TRUE(Schedule(cfg).note_validation(by_loss, 4.0, 10.0));  // lower loss is better
  EXPECT_EQ(by_loss.best, 4.0);
  // BLEU chosen but not measured (no references): loss decides.
  cfg.early_stop_metric = EarlyStopMetric::bleu;
  LoopState no_bleu;
  EXPECT_TRUE(Schedule(cfg).note_validation(no_bleu, 5.0, NAN));
  EXPECT_FALSE(Schedule(cfg).note_validation(no_bleu, 6.0, NAN));
}

TEST(Schedule, ProgressTotalFromUpdatesOrEpochs) {
  Config cfg;
  EXPECT_EQ(Schedule(cfg).total_updates(100, 4), 0.0);
  cfg.max_epochs = 2;
  EXPECT_EQ(Schedule(cfg).total_updates(100, 4), 50.0);
  cfg.max_updates = 30;
  EXPECT_EQ(Schedule(cfg).total_updates(100, 4), 30.0);
}
