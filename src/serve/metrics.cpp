#include "serve/metrics.h"

#include <sstream>

namespace yoke::serve {

// A Prometheus label value: backslash, double quote and line feed escaped, as the text format says.
std::string label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void Metrics::count_request(const std::string& endpoint, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{endpoint, status}];
  auto& buckets = latency_buckets_[endpoint];
  size_t b = 0;
  while (b < kBuckets.size() && seconds > kBuckets[b]) ++b;
  ++buckets[b];
  latency_sum_[endpoint] += seconds;
}

void Metrics::count_sentences(const std::string& model, size_t sentences, size_t target_tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  sentences_[model] += sentences;
  tokens_[model] += target_tokens;
}

void Metrics::count_batch(size_t sentences) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++batches_;
  batched_sentences_ += sentences;
}

std::string Metrics::prometheus_text() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream o;
  o << "# HELP yoke_requests_total HTTP requests answered, by endpoint and status code.\n"
       "# TYPE yoke_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    o << "yoke_requests_total{endpoint=\"" << key.first << "\",code=\"" << key.second << "\"} " << n << "\n";
  o << "# HELP yoke_sentences_total Sentences translated or generated, by model.\n"
       "# TYPE yoke_sentences_total counter\n";
  for (const auto& [model, n] : sentences_) o << "yoke_sentences_total{model=\"" << label(model) << "\"} " << n << "\n";
  o << "# HELP yoke_target_tokens_total Target subwords produced, by model.\n"
       "# TYPE yoke_target_tokens_total counter\n";
  for (const auto& [model, n] : tokens_) o << "yoke_target_tokens_total{model=\"" << label(model) << "\"} " << n << "\n";
  o << "# HELP yoke_batches_total Decoding batches run (sentences of concurrent requests decoded together).\n"
       "# TYPE yoke_batches_total counter\nyoke_batches_total " << batches_ << "\n"
    << "# HELP yoke_batched_sentences_total Sentences in those batches.\n"
       "# TYPE yoke_batched_sentences_total counter\nyoke_batched_sentences_total " << batched_sentences_ << "\n";
  o << "# HELP yoke_request_duration_seconds Time from a request's arrival to its answer.\n"
       "# TYPE yoke_request_duration_seconds histogram\n";
  for (const auto& [endpoint, buckets] : latency_buckets_) {
    uint64_t cumulative = 0;
    for (size_t b = 0; b < buckets.size(); ++b) {
      cumulative += buckets[b];
      o << "yoke_request_duration_seconds_bucket{endpoint=\"" << endpoint << "\",le=\"";
      if (b < kBuckets.size()) o << kBuckets[b];
      else o << "+Inf";
      o << "\"} " << cumulative << "\n";
    }
    o << "yoke_request_duration_seconds_sum{endpoint=\"" << endpoint << "\"} " << latency_sum_.at(endpoint) << "\n"
      << "yoke_request_duration_seconds_count{endpoint=\"" << endpoint << "\"} " << cumulative << "\n";
  }
  o << "# HELP yoke_queue_sentences Sentences waiting to be decoded.\n"
       "# TYPE yoke_queue_sentences gauge\nyoke_queue_sentences " << (queue_length_ ? queue_length_() : 0) << "\n";
  return o.str();
}

}  // namespace yoke::serve
