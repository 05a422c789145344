// What `yoke serve` counts, in the Prometheus text exposition format (version 0.0.4): requests by
// endpoint and status, sentences and tokens translated, a latency histogram and the queue length.
#pragma once
#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace yoke::serve {

// A Prometheus label value, escaped (\\, \" and \n), so that any model name keeps the text format valid.
std::string label(const std::string& value);

class Metrics {
 public:
  // One finished request: its endpoint (/translate …), HTTP status and time in seconds.
  void count_request(const std::string& endpoint, int status, double seconds);
  // Work done by a model: source sentences and target subwords produced (or scored).
  void count_sentences(const std::string& model, size_t sentences, size_t target_tokens);
  void count_batch(size_t sentences);
  // The queue length is read when the metrics are written.
  void set_queue_length_source(std::function<size_t()> source) { queue_length_ = std::move(source); }
  std::string prometheus_text() const;

  // Upper bounds of the latency histogram's buckets, in seconds (then +Inf).
  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, std::array<uint64_t, kBuckets.size() + 1>> latency_buckets_;  // per endpoint, not cumulative
  std::map<std::string, double> latency_sum_;
  std::map<std::string, uint64_t> sentences_, tokens_;
  uint64_t batches_ = 0, batched_sentences_ = 0;
  std::function<size_t()> queue_length_;
};

}  // namespace yoke::serve
