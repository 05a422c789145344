#include "train/local_launch.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "util/error.h"
#include "util/subprocess.h"

extern char** environ;

namespace yoke {
namespace {

std::atomic<int> g_forward{0};  // signals received and not yet passed on
std::atomic<int> g_last_signal{0};
void on_launcher_signal(int sig) {
  g_last_signal = sig;
  g_forward.fetch_add(1);
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    const int s = WTERMSIG(status);
    return std::string("was killed by signal ") + std::to_string(s) + " (" + strsignal(s) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

// This process's environment without the variables the launcher sets, plus `extra`.
std::vector<std::string> worker_environment(const std::vector<std::string>& extra) {
  static const char* const kOwn[] = {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE=", "MASTER_ADDR=",
                                     "MASTER_PORT=", "TORCHELASTIC_USE_AGENT_STORE=", "GROUP_RANK="};
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    bool own = false;
    for (const char* k : kOwn) own |= std::strncmp(*e, k, std::strlen(k)) == 0;
    if (!own) env.emplace_back(*e);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error(std::string("cannot find a free port on 127.0.0.1: ") + std::strerror(err));
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

int run_local_workers(int nproc, const std::vector<std::string>& argv, std::ostream& log, double grace_s) {
  if (nproc < 1) throw InputError("--nproc must be at least 1");
  const int port = free_loopback_port();
  std::vector<std::string> args = argv;  // argv[0] as the user typed it: `ps` shows it
  std::vector<pid_t> pids(size_t(nproc), 0);
  for (int r = 0; r < nproc; ++r) {
    auto env = worker_environment({"RANK=" + std::to_string(r), "LOCAL_RANK=" + std::to_string(r),
                                   "WORLD_SIZE=" + std::to_string(nproc), "LOCAL_WORLD_SIZE=" + std::to_string(nproc),
                                   "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port)});
    auto cargs = c_strings(args);
    auto cenv = c_strings(env);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      // A group of its own: a terminal's Ctrl-C reaches the launcher only, which passes it on
      // once (a worker's second signal would make it exit without saving).
      ::setpgid(0, 0);
      ::execve("/proc/self/exe", cargs.data(), cenv.data());
      std::fprintf(stderr, "yoke: cannot start worker %d: %s\n", r, std::strerror(errno));
      ::_exit(127);
    }
    pids[size_t(r)] = pid;
  }
  struct sigaction sa {}, old_int{}, old_term{};
  sa.sa_handler = on_launcher_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  int first_failure = 0, running = nproc;
  std::chrono::steady_clock::time_point kill_at{};
  bool killing = false;
  auto signal_all = [&](int sig) {
    for (pid_t p : pids)
      if (p > 0) ::kill(p, sig);
  };
  while (running > 0) {
    for (int n = g_forward.exchange(0); n > 0; --n) signal_all(g_last_signal.load() ? g_last_signal.load() : SIGTERM);
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (int r = 0; r < nproc; ++r) {
        if (pids[size_t(r)] != pid) continue;
        pids[size_t(r)] = 0;
        --running;
        if (exit_code(status) != 0 && first_failure == 0) {
          first_failure = exit_code(status);
          // An interrupted run ends every worker with 128 + signal by itself: no need to say more.
          if (!(WIFEXITED(status) && first_failure > 128 && g_last_signal.load() > 0 && first_failure == 128 + g_last_signal)) {
            // One write: the workers share this stream, and a message in pieces interleaves with theirs.
            log << ("yoke: worker rank " + std::to_string(r) + " (pid " + std::to_string(pid) + ") " +
                    describe(status) + "; stopping the other " + std::to_string(running) + " worker" +
                    (running == 1 ? "" : "s") + "\n")
                << std::flush;
            signal_all(SIGTERM);
            kill_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(grace_s * 1000));
            killing = true;
          }
        }
      }
      continue;
    }
    if (killing && std::chrono::steady_clock::now() >= kill_at) {
      signal_all(SIGKILL);
      killing = false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return first_failure;
}

}  // namespace yoke
