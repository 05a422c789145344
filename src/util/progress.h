// A one-line progress display with rate and ETA. On a terminal it redraws in place; otherwise
// (CI, log files) it prints a full line at most every `quiet_interval_s` seconds.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

namespace yoke {

class Progress {
 public:
  Progress(std::string label, double total, std::string unit, double quiet_interval_s = 30.0);
  // done: units of work completed (the ETA is (total − done) / rate); extra: free text.
  void update(double done, const std::string& extra = "", bool force = false);
  void finish(const std::string& extra = "");
  double elapsed_s() const;

 private:
  std::string label_, unit_;
  double total_;
  double quiet_interval_s_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  double last_done_ = 0;
};

// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

}  // namespace yoke
