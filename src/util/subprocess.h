// Running a helper program (a PNG converter, say) without a shell and with a time limit.
#pragma once
#include <string>
#include <vector>

namespace yoke {

// The full path of an executable on PATH, or "" (empty PATH entries, meaning ".", are skipped).
std::string find_on_path(const std::string& name);

// Runs argv (argv[0] a full path) with no shell, stdin/stdout/stderr on /dev/null, in its own
// process group so that a timeout also ends whatever it started. True on exit status 0.
bool run_quietly(const std::vector<std::string>& argv, double timeout_s);

// A wait status (waitpid's) as a shell reports it: the exit code, or 128 + the signal that ended it.
int exit_code(int wait_status);

// Runs argv (argv[0] a full path) with no shell and this process's stdin, stdout and stderr, so
// that its messages reach the user; waits for it. Its exit status (128 + signal when killed, 127
// when it could not start). It gets SIGTERM if this process dies first (Linux's PR_SET_PDEATHSIG).
int run_inheriting_output(const std::vector<std::string>& argv);

}  // namespace yoke
