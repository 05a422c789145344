#include "train/stop_signal.h"

#include <csignal>
#include <unistd.h>

#include <atomic>

namespace yoke {
namespace {

std::atomic<int> g_signals{0};
std::atomic<int> g_first_signal{0};

void on_signal(int sig) {
  if (g_signals.fetch_add(1) >= 1) _exit(128 + sig);  // second Ctrl-C: leave now
  g_first_signal = sig;
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool stop_requested() { return g_signals.load() > 0; }

int stop_signal() { return g_first_signal.load(); }

}  // namespace yoke
