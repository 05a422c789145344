#include "util/progress.h"

#include <atomic>

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace yoke {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  char buf[32];
  const long t = long(s + 0.5);
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t / 60) % 60);
  else if (t >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lds", t);
  return buf;
}

namespace {
std::atomic<bool> g_bar_drawn{false};  // a bar's line is on the terminal without its line end
}  // namespace

void clear_progress_line() {
  if (g_bar_drawn.exchange(false)) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

double progress_rate(double done, double done_before, double elapsed_s) {
  return elapsed_s > 0 ? std::max(0.0, done - done_before) / elapsed_s : 0;
}

Progress::Progress(std::string label, double total, std::string unit, double quiet_interval_s, double done_before)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), quiet_interval_s_(quiet_interval_s),
      done_before_(done_before), tty_(::isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(double done, const std::string& extra, bool force) {
  last_done_ = done;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  if (!force && since < (tty_ ? 0.2 : quiet_interval_s_)) return;
  last_draw_ = now;
  const double el = elapsed_s();
  const double rate = progress_rate(done, done_before_, el);
  std::string bar;
  if (total_ > 0) {
    const int width = 20, filled = int(std::min(1.0, done / total_) * width);
    bar = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] ";
  }
  char head[160];
  // Whole units, except for a total under 10 (0.04 of 0.04 MB, not "0/0 MB"): two significant digits.
  const int digits = total_ >= 10 || total_ <= 0 ? 0 : total_ >= 1 ? 1 : std::min(6, 1 - int(std::floor(std::log10(total_))));
  if (total_ > 0)
    std::snprintf(head, sizeof head, "%s %s%.*f/%.*f %s | %.1f %s/s | %s elapsed | ETA %s", label_.c_str(),
                  bar.c_str(), digits, done, digits, total_, unit_.c_str(), rate, unit_.c_str(),
                  format_duration(el).c_str(), rate > 0 ? format_duration((total_ - done) / rate).c_str() : "?");
  else
    std::snprintf(head, sizeof head, "%s %.0f %s | %.1f %s/s | %s elapsed", label_.c_str(), done, unit_.c_str(),
                  rate, unit_.c_str(), format_duration(el).c_str());
  std::string line = std::string(head) + (extra.empty() ? "" : " | " + extra);
  if (tty_) std::fprintf(stderr, "\r\033[K%s", line.c_str());
  else std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  g_bar_drawn = tty_;
}

void Progress::finish(const std::string& extra) {
  update(last_done_, extra, true);
  if (tty_) std::fprintf(stderr, "\n");
  g_bar_drawn = false;
}

}  // namespace yoke
