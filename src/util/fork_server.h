// Running many short commands of one program without loading its libraries each time. Loading
// Debian's LibTorch and the 288 libraries it pulls in takes ~0.45 s of CPU a process (relocations
// and operator registration); a fork of a process that has done it, and has run nothing yet,
// takes milliseconds. The test suite starts `yoke` hundreds of times (docs/testing.md).
//
// The server is `program --fork-server FD`, started by ForkClient with one end of a socket pair:
// nothing else can reach it. Each request carries the arguments, the working directory, the
// environment and the descriptors for standard input, output and error; the server forks a waiter,
// which forks the worker and sends back the worker's pid, then its wait status. The worker runs
// the program's command function as a fresh process would: its own pid, those descriptors, that
// directory and environment. It ends as main's return would, its streams flushed, but without the
// static destructors (fork_server.cpp says why). What the libraries read from the environment
// while loading came from the server's environment: the client falls back to exec when such
// variables changed (load_time_environment).
// The server ends when its client closes the socket (the client's process ended).
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace yoke {

// Serves requests on socket_fd until its peer closes it, running command(argc, argv) in a forked
// worker for each. Returns the server's exit status.
int serve_forks(int socket_fd, int (*command)(int, char**));

// The variables that libraries may read while they load (OpenMP, OpenBLAS, the dynamic loader,
// malloc, LibTorch), as sorted NAME=VALUE strings of the given environment.
std::vector<std::string> load_time_environment(char** env);

class ForkClient {
 public:
  // Starts `binary --fork-server FD` with this process's environment; every descriptor of this
  // process but standard error stays out of it (a pipe held open by the server would never end).
  explicit ForkClient(const std::string& binary);
  ~ForkClient();  // closes the socket: the server ends
  ForkClient(const ForkClient&) = delete;
  ForkClient& operator=(const ForkClient&) = delete;

  // A worker that start() began: its pid (signal it as any process; it is the server's
  // grandchild, so waitpid() cannot wait for it: wait() does) and the pipe its status comes on.
  struct Worker {
    pid_t pid = -1;
    int reply = -1;
  };

  // Starts argv (argv[0] is the binary) in a worker with in, out and err as its standard input,
  // output and error, in this process's working directory and environment. pid -1 when the server
  // cannot run it (it has gone, or the environment that libraries read at load time differs from
  // the server's): run it with exec then.
  Worker start(const std::vector<std::string>& argv, int in, int out, int err);
  // The worker's wait status, as waitpid() gives it; with block = false, false at once while it
  // runs. Once it is true, the worker is done with (its pipe closed). A server that has gone reports
  // the status of exit code 127.
  static bool wait(Worker& worker, int* status, bool block = true);

  // start() and wait(): the exit status (128 + signal when killed), or -1 when it cannot run it.
  int run(const std::vector<std::string>& argv, int in, int out, int err);

 private:
  int socket_ = -1;
  pid_t server_ = -1;
  std::vector<std::string> load_env_;
};

}  // namespace yoke
