#include "util/fork_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "util/subprocess.h"

extern char** environ;

namespace yoke {

namespace {

// A request: its text is NUL-separated strings (working directory, argc, argv..., environment...);
// its descriptors are standard input, output, error and the reply pipe's write end, in that order.
constexpr int kRequestFds = 4;
// The largest request: environments and argument lists of tests are a few KB. (The socket's send
// buffer, ~200 KB by default, may refuse a smaller one first: start() then says to exec.)
constexpr size_t kMaxRequest = 1 << 20;

// Closes every descriptor from `first` up, in the child that becomes the server: it must hold no
// pipe of its client's open (whoever reads that pipe would wait for ever).
void close_from(int first) {
  if (::close_range(first, ~0U, 0) == 0) return;
  for (int fd = first, top = static_cast<int>(::sysconf(_SC_OPEN_MAX)); fd < top; ++fd) ::close(fd);
}

// In the worker: the request's descriptors, directory and environment, then the command.
[[noreturn]] void run_worker(const int fds[kRequestFds], char* text, size_t size, int (*command)(int, char**)) {
  ::close(fds[3]);
  for (int i = 0; i < 3; ++i)
    if (::dup2(fds[i], i) < 0) ::_exit(127);
  for (int i = 0; i < 3; ++i)
    if (fds[i] > 2) ::close(fds[i]);
  std::vector<char*> strings;
  for (size_t at = 0; at < size; at += std::strlen(text + at) + 1) strings.push_back(text + at);
  const size_t argc = strings.size() >= 2 ? std::strtoul(strings[1], nullptr, 10) : 0;
  if (argc == 0 || strings.size() < 2 + argc) {
    std::fprintf(stderr, "fork server: a malformed request\n");
    ::_exit(127);
  }
  if (::chdir(strings[0]) != 0) {
    std::fprintf(stderr, "fork server: cannot enter %s: %s\n", strings[0], std::strerror(errno));
    ::_exit(127);
  }
  ::clearenv();
  for (size_t i = 2 + argc; i < strings.size(); ++i) ::putenv(strings[i]);  // the text lives until exit
  std::vector<char*> argv(strings.begin() + 2, strings.begin() + 2 + static_cast<std::ptrdiff_t>(argc));
  argv.push_back(nullptr);
  const int status = command(static_cast<int>(argc), argv.data());
  // The streams flush as when main returns, but static destructors do not run: LibTorch's
  // deregister every operator and free what registering allocated, writing to pages the worker
  // shares with the server, one copy-on-write fault each. The OptionsCli suite (111 workers) on
  // the paravirtualized EPYC Zen 5, where a fault is dear: 696,000 page faults and 24.9 s of CPU
  // with them, 46,000 and 3.2 s without. `YOKE_TEST_EXEC=1` keeps the whole exit checked.
  std::cout.flush();
  std::cerr.flush();
  std::clog.flush();
  std::fflush(nullptr);
  ::_exit(status);
}

// In the waiter: forks the worker and sends back its pid, then its wait status. The server ignores
// SIGCHLD (its waiters are reaped by the kernel); the waiter and its worker take the default back.
[[noreturn]] void run_waiter(int socket_fd, const int fds[kRequestFds], char* text, size_t size,
                             int (*command)(int, char**)) {
  ::close(socket_fd);
  ::signal(SIGCHLD, SIG_DFL);
  const pid_t worker = ::fork();
  if (worker == 0) run_worker(fds, text, size, command);
  if (worker < 0) ::_exit(1);  // the client sees the pipe close without a pid
  [[maybe_unused]] ssize_t sent = ::write(fds[3], &worker, sizeof worker);
  int status = 0;
  while (::waitpid(worker, &status, 0) < 0 && errno == EINTR) {
  }
  sent = ::write(fds[3], &status, sizeof status);
  ::_exit(0);
}

// Reads exactly size bytes (false at the end of the pipe first).
bool read_all(int fd, void* into, size_t size) {
  size_t got = 0;
  while (got < size) {
    const ssize_t r = ::read(fd, static_cast<char*>(into) + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

int serve_forks(int socket_fd, int (*command)(int, char**)) {
  ::signal(SIGCHLD, SIG_IGN);
  // Descriptors 0-2 taken, so that a request's descriptors arrive above them (run_worker).
  for (int fd = 0; fd < 3; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && ::open("/dev/null", O_RDWR) != fd) return 1;
  std::vector<char> text(kMaxRequest);
  for (;;) {
    iovec iov{text.data(), text.size() - 1};
    alignas(cmsghdr) char control[CMSG_SPACE(kRequestFds * sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(socket_fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::fprintf(stderr, "yoke --fork-server: %s\n", std::strerror(errno));
      return 1;
    }
    if (n == 0) return 0;  // the client has gone
    std::vector<int> fds;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        const int* data = reinterpret_cast<const int*>(CMSG_DATA(c));
        fds.insert(fds.end(), data, data + count);
      }
    // A request cut short or without its descriptors is dropped: its client sees its reply pipe
    // close without a status.
    if (fds.size() == kRequestFds && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
      text[static_cast<size_t>(n)] = '\0';
      if (::fork() == 0) run_waiter(socket_fd, fds.data(), text.data(), static_cast<size_t>(n), command);
    }
    for (int fd : fds) ::close(fd);
  }
}

std::vector<std::string> load_time_environment(char** env) {
  static const char* const kPrefixes[] = {"OMP_",  "GOMP_",    "KMP_",    "OPENBLAS_", "GOTO", "LD_",
                                          "MALLOC_", "GLIBC_", "TORCH_", "PYTORCH_",  "CUDA_"};
  std::vector<std::string> out;
  for (char** e = env; e != nullptr && *e != nullptr; ++e)
    for (const char* p : kPrefixes)
      if (std::strncmp(*e, p, std::strlen(p)) == 0) {
        out.emplace_back(*e);
        break;
      }
  std::sort(out.begin(), out.end());
  return out;
}

ForkClient::ForkClient(const std::string& binary) : load_env_(load_time_environment(environ)) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return;
  // Everything the child needs is made before fork: this process may have threads.
  std::string program = binary, flag = "--fork-server", fd = "3";
  char* argv[] = {program.data(), flag.data(), fd.data(), nullptr};
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (sv[1] != 3 && ::dup2(sv[1], 3) < 0) ::_exit(127);
    ::fcntl(3, F_SETFD, 0);
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(null, 1) < 0) ::_exit(127);
    close_from(4);
    ::execv(argv[0], argv);
    ::_exit(127);
  }
  ::close(sv[1]);
  if (pid < 0) {
    ::close(sv[0]);
    return;
  }
  socket_ = sv[0];
  server_ = pid;
}

ForkClient::~ForkClient() {
  if (socket_ < 0) return;
  ::close(socket_);
  // Reaped here unless this is a forked copy of the process that started it.
  while (::waitpid(server_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

ForkClient::Worker ForkClient::start(const std::vector<std::string>& argv, int in, int out, int err) {
  if (socket_ < 0 || argv.empty() || load_time_environment(environ) != load_env_) return {};
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  if (ec) return {};
  std::string text = cwd + '\0' + std::to_string(argv.size()) + '\0';
  for (const auto& a : argv) text += a + '\0';
  for (char** e = environ; *e != nullptr; ++e) text += std::string(*e) + '\0';
  if (text.size() >= kMaxRequest) return {};
  int reply[2];
  if (::pipe2(reply, O_CLOEXEC) != 0) return {};
  const int fds[kRequestFds] = {in, out, err, reply[1]};
  iovec iov{text.data(), text.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof fds);
  std::memcpy(CMSG_DATA(c), fds, sizeof fds);
  ssize_t sent;
  while ((sent = ::sendmsg(socket_, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  ::close(reply[1]);
  Worker w;
  if (sent >= 0 && read_all(reply[0], &w.pid, sizeof w.pid)) {
    w.reply = reply[0];
    return w;
  }
  ::close(reply[0]);  // the server has gone, or could not fork: nothing runs
  return {};
}

bool ForkClient::wait(Worker& worker, int* status, bool block) {
  if (!block) {
    pollfd p{worker.reply, POLLIN, 0};
    if (::poll(&p, 1, 0) == 0) return false;
  }
  // The waiter writes the status only when the worker has ended; none means it was killed.
  if (!read_all(worker.reply, status, sizeof *status)) *status = 127 << 8;
  ::close(worker.reply);
  worker.reply = -1;
  return true;
}

int ForkClient::run(const std::vector<std::string>& argv, int in, int out, int err) {
  Worker w = start(argv, in, out, err);
  if (w.pid < 0) return -1;
  int status = 0;
  wait(w, &status);
  return exit_code(status);
}

}  // namespace yoke
