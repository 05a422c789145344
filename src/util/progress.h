// A one-line progress display with rate and ETA. On a terminal it redraws in place; otherwise
// (CI, log files) it prints a full line at most every `quiet_interval_s` seconds.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

namespace yoke {

class Progress {
 public:
  // done_before: work already done when the bar starts (a resumed run's updates): counted in the
  // bar, not in the rate.
  Progress(std::string label, double total, std::string unit, double quiet_interval_s = 30.0, double done_before = 0);
  // done: units of work completed (the ETA is (total − done) / rate); extra: free text.
  void update(double done, const std::string& extra = "", bool force = false);
  void finish(const std::string& extra = "");
  double elapsed_s() const;

 private:
  std::string label_, unit_;
  double total_;
  double quiet_interval_s_;
  double done_before_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  double last_done_ = 0;
};

// Before another line goes to standard error while a bar may be drawn there (a validation's line,
// a warning, an error): ends the bar's line on a terminal (clears it; the bar draws itself again at
// its next update), so that the text starts at column 0 instead of after the bar.
void clear_progress_line();

// Units per second of this bar's own work: what was done before it started is not its speed.
double progress_rate(double done, double done_before, double elapsed_s);

// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace yoke
