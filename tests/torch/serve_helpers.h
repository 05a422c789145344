// Helpers of the `yoke serve` tests: the server as a child process on a free loopback port, an
// HTTP client, and a raw socket for clients that misbehave on purpose.
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include <httplib.h>

#include "cli_helpers.h"

namespace yoke::test {

// Waits (at most 120 s) for the server's "listening on HOST:PORT" line; returns PORT or 0.
inline int wait_for_port(const fs::path& log, pid_t pid) {
  const std::regex listening("listening on 127\\.0\\.0\\.1:([0-9]+)");
  for (int i = 0; i < 1200; ++i) {
    std::smatch m;
    const std::string text = slurp(log);
    if (std::regex_search(text, m, listening)) return std::stoi(m[1]);
    if (wait_child(pid, nullptr, WNOHANG) == pid) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return 0;
}

// The server process, stopped (SIGKILL) if a test ends early.
struct ServerProcess {
  pid_t pid = -1;
  ~ServerProcess() {
    if (pid > 0 && wait_child(pid, nullptr, WNOHANG) == 0) {
      kill(pid, SIGKILL);
      wait_child(pid, nullptr, 0);
    }
  }
};

inline httplib::Client client(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(10);
  c.set_read_timeout(60);
  return c;
}

// The resident memory of a process in KiB (VmRSS), 0 when it cannot be read.
inline long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

// A TCP connection to 127.0.0.1:port that sends and reads raw bytes; closed on destruction.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~RawConnection() {
    if (fd_ >= 0) close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  bool connected() const { return fd_ >= 0; }
  // False once the server has closed the connection (or reset it).
  bool send_all(const std::string& bytes) {
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += size_t(n);
    }
    return true;
  }
  // Whether bytes (or the end) can be read within `ms`.
  bool readable(int ms) {
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, ms) == 1;
  }
  // Reads until the server closes the connection or `seconds` pass.
  std::string read_to_end(double seconds) {
    std::string out;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    char buf[4096];
    while (std::chrono::steady_clock::now() < until) {
      const int left = int(std::chrono::duration<double, std::milli>(until - std::chrono::steady_clock::now()).count());
      if (!readable(std::max(1, left))) continue;
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, size_t(n));
    }
    return out;
  }

 private:
  int fd_ = -1;
};

// The status code of a raw HTTP answer ("HTTP/1.1 413 …"), 0 when there is none.
inline int status_of(const std::string& answer) {
  std::smatch m;
  if (std::regex_search(answer, m, std::regex("^HTTP/1\\.[01] ([0-9]{3})"))) return std::stoi(m[1]);
  return 0;
}

}  // namespace yoke::test
