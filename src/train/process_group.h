// The ranks of a data-parallel run and the collectives between them, on LibTorch's c10d: Gloo
// on the CPU (Debian's libtorch-dev ships ProcessGroupGloo and TCPStore). This header keeps c10d
// and Gloo out of the files that only call collectives: they cost compile time and are absent
// from builds without Gloo headers (there `connect` says so).
#pragma once
#include <memory>
#include <stdexcept>
#include <string>

#include "compat/torch.h"
#include "util/error.h"

namespace yoke {

// Where this process stands, from the variables torchrun sets (and `yoke train --nproc` sets
// for its workers): RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
struct DistributedEnv {
  int rank = 0, world_size = 1, local_rank = 0, local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  // torchrun's agent already serves the store at MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE):
  // every worker, rank 0 too, connects as a client, under the restart attempt's key prefix.
  bool agent_store = false;
  int restart_count = 0;
  bool distributed() const { return world_size > 1; }
};

// Reads the environment; none set = one process. A variable that is set but wrong (RANK ≥
// WORLD_SIZE, a port that is not a number) is an InputError naming it.
DistributedEnv read_distributed_env();

// A collective that failed: a rank died, closed its connection or did not answer within the
// timeout. The message names this rank and the operation.
struct DistributedError : RunError {
  using RunError::RunError;
};

// One rank's handle on a collective started by `ProcessGroup::start_allreduce_sum`.
class PendingCollective {
 public:
  virtual ~PendingCollective() = default;
  virtual void wait() = 0;  // throws DistributedError
};

class ProcessGroup {
 public:
  // Connects to the other ranks (rank 0 serves the TCP store unless torchrun's agent does) and
  // makes a Gloo group whose every collective gives up after timeout_s. Blocks until all
  // ranks have joined, or timeout_s.
  static std::unique_ptr<ProcessGroup> connect(const DistributedEnv& env, double timeout_s);
  virtual ~ProcessGroup() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sums t over the ranks, in place, and returns when done.
  virtual void allreduce_sum(at::Tensor& t) = 0;
  // Starts the same sum and returns at once (Gloo runs it on its own threads): t must live, and
  // not be written, until wait() returns. Every rank starts its collectives in the same order.
  virtual std::unique_ptr<PendingCollective> start_allreduce_sum(at::Tensor t) = 0;
  // Copies root's t into every rank's t.
  virtual void broadcast(at::Tensor& t, int root) = 0;
};

// True when this build has c10d with Gloo (the Gloo headers were found when it was configured).
bool distributed_training_available();

}  // namespace yoke
