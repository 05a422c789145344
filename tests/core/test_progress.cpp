// Progress's rate: a resumed run's bar starts at the update it resumed from, and its speed (and
// so its ETA) counts only the updates done since. Seen before: a run resumed at 8779 of 12000
// updates showed 35.6 upd/s and an ETA of a minute after 888 updates in 271 s (3.3 upd/s).
#include <gtest/gtest.h>

#include "util/progress.h"

using namespace yoke;

TEST(Progress, TheRateCountsOnlyTheWorkDoneSinceTheBarStarted) {
  EXPECT_NEAR(progress_rate(9667, 8779, 271), 888.0 / 271, 1e-12);
  // Exact below: one division of whole numbers that IEEE doubles hold exactly (300 / 10), or no
  // division at all.
  EXPECT_DOUBLE_EQ(progress_rate(300, 0, 10), 30.0);
  EXPECT_DOUBLE_EQ(progress_rate(5, 0, 0), 0.0);       // no time yet: no rate (and no ETA)
  EXPECT_DOUBLE_EQ(progress_rate(8779, 8779, 3), 0.0);  // nothing done yet since the resume
}
