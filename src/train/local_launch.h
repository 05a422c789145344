// `yoke train --nproc N`: N workers on this machine without torchrun (for users without Python).
// Each worker is this program again with the same arguments and the variables torchrun would
// set (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT).
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace yoke {

// Runs `argv` (argv[0] is replaced by this executable) as `nproc` workers and waits for them.
// Ctrl-C and SIGTERM reach every worker once (each saves at the same update and stops). When a
// worker fails, the message names its rank and how it ended, the others get SIGTERM and, after
// `grace_s`, SIGKILL. Returns 0 when all succeeded, else the first failure's exit status
// (128 + signal for a worker killed by one).
int run_local_workers(int nproc, const std::vector<std::string>& argv, std::ostream& log, double grace_s = 30);

// A TCP port that was free on 127.0.0.1 a moment ago (the kernel's choice).
int free_loopback_port();

}  // namespace yoke
