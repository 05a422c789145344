#include "train/process_group.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <vector>

#include "util/error.h"

#ifndef YOKE_HAVE_C10D_GLOO
#define YOKE_HAVE_C10D_GLOO 0  // CMake sets 1 where it found the Gloo headers
#endif
#if YOKE_HAVE_C10D_GLOO
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif

namespace yoke {
namespace {

// An integer environment variable, or `fallback` when unset; set but not a number is an error.
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0 || x > 1 << 30)
    throw InputError(std::string("environment variable ") + name + "='" + v + "' is not a non-negative integer");
  return int(x);
}

#if YOKE_HAVE_C10D_GLOO
bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

class PendingGloo final : public PendingCollective {
 public:
  PendingGloo(c10::intrusive_ptr<c10d::Work> work, int rank) : work_(std::move(work)), rank_(rank) {}
  void wait() override {
    try {
      work_->wait();
    } catch (const std::exception& e) {
      throw DistributedError("rank " + std::to_string(rank_) + ": gradient all-reduce failed (another rank died " +
                             "or stopped answering): " + e.what());
    }
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  int rank_;
};

class GlooGroup final : public ProcessGroup {
 public:
  GlooGroup(const DistributedEnv& env, double timeout_s) : rank_(env.rank), size_(env.world_size) {
    // Gloo writes to its peers with writev(), which raises SIGPIPE once a peer's socket is gone;
    // its default action would end this rank silently, before the collective's error names the
    // dead rank. (Python ignores SIGPIPE at start-up, which is why PyTorch never meets this.)
    std::signal(SIGPIPE, SIG_IGN);
    const auto timeout = std::chrono::milliseconds(int64_t(timeout_s * 1000));
    c10d::TCPStoreOptions so;
    so.port = uint16_t(env.master_port);
    so.isServer = env.rank == 0 && !env.agent_store;
    so.numWorkers = size_t(env.world_size);
    so.waitWorkers = false;  // the group below waits for everyone, under the same timeout
    so.timeout = timeout;
    c10::intrusive_ptr<c10d::Store> store;
    try {
      store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
    } catch (const std::exception& e) {
      throw DistributedError("rank " + std::to_string(env.rank) + ": cannot reach the store at " + env.master_addr +
                             ":" + std::to_string(env.master_port) + ": " + e.what());
    }
    const std::string prefix =
        env.agent_store ? "/worker/attempt_" + std::to_string(env.restart_count) + "/yoke" : "yoke";
    store = c10::make_intrusive<c10d::PrefixStore>(prefix, store);
    auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
    // Workers of one machine talk over loopback only; across machines Gloo picks the interface
    // of this host's name, or GLOO_SOCKET_IFNAME as PyTorch does.
    if (is_loopback(env.master_addr))
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    else if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    else
      opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    try {
      pg_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, opts);
    } catch (const std::exception& e) {
      throw DistributedError("rank " + std::to_string(env.rank) + ": the " + std::to_string(env.world_size) +
                             " ranks did not all join within " + std::to_string(int(timeout_s)) + " s: " + e.what());
    }
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allreduce_sum(at::Tensor& t) override {
    std::vector<at::Tensor> ts{t};
    run("all-reduce", [&] { return pg_->allreduce(ts); });
  }

  std::unique_ptr<PendingCollective> start_allreduce_sum(at::Tensor t) override {
    std::vector<at::Tensor> ts{std::move(t)};
    try {
      return std::make_unique<PendingGloo>(pg_->allreduce(ts), rank_);
    } catch (const std::exception& e) {
      throw DistributedError("rank " + std::to_string(rank_) + ": all-reduce failed to start: " + e.what());
    }
  }

  void broadcast(at::Tensor& t, int root) override {
    std::vector<at::Tensor> ts{t};
    c10d::BroadcastOptions o;
    o.rootRank = root;
    run("broadcast", [&] { return pg_->broadcast(ts, o); });
  }

 private:
  template <class Start>
  void run(const char* what, Start start) {
    try {
      start()->wait();
    } catch (const std::exception& e) {
      throw DistributedError("rank " + std::to_string(rank_) + ": " + what +
                             " failed (another rank died or stopped answering): " + e.what());
    }
  }

  int rank_, size_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg_;
};
#endif

}  // namespace

DistributedEnv read_distributed_env() {
  DistributedEnv env;
  env.world_size = std::max(1, env_int("WORLD_SIZE", 1));
  env.rank = env_int("RANK", 0);
  env.local_rank = env_int("LOCAL_RANK", env.rank);
  env.local_world_size = std::max(1, env_int("LOCAL_WORLD_SIZE", env.world_size));
  if (env.rank >= env.world_size)
    throw InputError("environment: RANK=" + std::to_string(env.rank) + " is not below WORLD_SIZE=" +
                     std::to_string(env.world_size));
  if (!env.distributed()) return env;
  if (const char* a = std::getenv("MASTER_ADDR"); a && *a) env.master_addr = a;
  env.master_port = env_int("MASTER_PORT", 0);
  if (env.master_port <= 0 || env.master_port > 65535)
    throw InputError("environment: WORLD_SIZE=" + std::to_string(env.world_size) +
                     " needs MASTER_PORT, the port of rank 0's store (1..65535)");
  const char* agent = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  env.agent_store = agent && std::string(agent) == "True";
  env.restart_count = env_int("TORCHELASTIC_RESTART_COUNT", 0);
  return env;
}

bool distributed_training_available() { return YOKE_HAVE_C10D_GLOO != 0; }

std::unique_ptr<ProcessGroup> ProcessGroup::connect(const DistributedEnv& env, double timeout_s) {
#if YOKE_HAVE_C10D_GLOO
  return std::make_unique<GlooGroup>(env, timeout_s);
#else
  (void)env;
  (void)timeout_s;
  throw InputError("WORLD_SIZE > 1, but this yoke was built without c10d's Gloo (install libgloo-dev and rebuild)");
#endif
}

}  // namespace yoke
