// The server's batching queue alone, on an untrained tiny model: concurrent requests are decoded
// together yet each gets what decoding it alone gives; requests with other search options are
// not mixed; a full queue and a stopped one refuse; stop() decodes what waits first.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "decode/batched_decoding.h"
#include "decode/batching_queue.h"
#include "tiny_model.h"
#include "store/model_store.h"
#include "margin.h"

using namespace yoke;
using namespace yoke::test;

namespace {

std::shared_ptr<Transformer> tiny_model() {
  at::manual_seed(11);
  auto model = build_model(tiny_config());
  model->eval();
  return model;
}

// Sources of 2–7 ids over 4..23 (0–3 are special), different per k.
std::vector<int> source(int k) {
  std::vector<int> s;
  for (int i = 0; i < 2 + k % 6; ++i) s.push_back(4 + (k * 7 + i * 5) % 20);
  return s;
}

SearchOptions beam(int width) {
  SearchOptions o;
  o.beam = width;
  o.max_len_b = 10;
  return o;
}

// Decoded alone and in a batch, a hypothesis ends the same: tokens exactly (one argmax per step,
// far from ties on this model), scores up to float rounding of batched products (1e-4 in log space).
void expect_same(const std::vector<Hypothesis>& a, const std::vector<Hypothesis>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].tokens, b[i].tokens) << what << " hypothesis " << i;
    YOKE_EXPECT_NEAR(a[i].score, b[i].score, 1e-4) << what << " hypothesis " << i;
  }
}

// A window of `window` and a token budget no test reaches, so that only the window closes a batch.
BatchingLimits window_only(std::chrono::milliseconds window) {
  BatchingLimits limits;
  limits.window = window;
  limits.batch_tokens = 100000;
  return limits;
}

}  // namespace

TEST(BatchingQueue, ConcurrentRequestsShareBatchesAndGetTheirOwnResults) {
  auto model = tiny_model();
  std::mutex use;
  const BatchingLimits limits = window_only(std::chrono::milliseconds(300));
  std::atomic<int> batches{0}, sentences{0};
  BatchingQueue queue(*model, use, limits, [&](size_t n, size_t) {
    ++batches;
    sentences += int(n);
  });
  constexpr int kRequests = 8;
  std::vector<std::future<BatchingQueue::Result>> answers(kRequests);
  std::vector<std::thread> clients;
  for (int r = 0; r < kRequests; ++r)
    clients.emplace_back([&, r] { answers[size_t(r)] = queue.submit({source(r), source(r + 10)}, beam(3), 2); });
  for (auto& c : clients) c.join();
  for (int r = 0; r < kRequests; ++r) {
    auto got = answers[size_t(r)].get();
    ASSERT_EQ(got.size(), 2u);
    const auto alone = translate_ids_nbest(*model, {source(r), source(r + 10)}, beam(3), 2, 100000);
    expect_same(got[0], alone[0], "request " + std::to_string(r) + " sentence 0");
    expect_same(got[1], alone[1], "request " + std::to_string(r) + " sentence 1");
  }
  EXPECT_EQ(sentences.load(), 2 * kRequests);
  // All eight arrived within the 300 ms window of the first: fewer batches than requests.
  EXPECT_LT(batches.load(), kRequests);
}

TEST(BatchingQueue, OtherSearchOptionsAreNotMixed) {
  auto model = tiny_model();
  std::mutex use;
  const BatchingLimits limits = window_only(std::chrono::milliseconds(200));
  std::atomic<int> batches{0};
  BatchingQueue queue(*model, use, limits, [&](size_t, size_t) { ++batches; });
  auto a = queue.submit({source(1)}, beam(1), 1);
  auto b = queue.submit({source(2)}, beam(4), 1);
  expect_same(a.get()[0], translate_ids_nbest(*model, {source(1)}, beam(1), 1, 100000)[0], "beam 1");
  expect_same(b.get()[0], translate_ids_nbest(*model, {source(2)}, beam(4), 1, 100000)[0], "beam 4");
  EXPECT_EQ(batches.load(), 2);
}

TEST(BatchingQueue, FullAndStoppedQueuesRefuseAndStopDecodesWhatWaits) {
  auto model = tiny_model();
  std::mutex use;
  BatchingLimits limits = window_only(std::chrono::seconds(30));  // nothing leaves the queue before stop()
  limits.max_queued_sentences = 3;
  BatchingQueue queue(*model, use, limits);
  auto waiting = queue.submit({source(1), source(2)}, beam(2), 1);
  EXPECT_EQ(queue.queued_sentences(), 2u);
  EXPECT_THROW(queue.submit({source(3), source(4)}, beam(2), 1), QueueFull);
  auto fits = queue.submit({source(5)}, beam(2), 1);
  const auto t = std::chrono::steady_clock::now();
  queue.stop();  // does not wait out the 30 s window
  EXPECT_LT(std::chrono::steady_clock::now() - t, std::chrono::seconds(20));
  EXPECT_EQ(waiting.get().size(), 2u);
  EXPECT_EQ(fits.get().size(), 1u);
  EXPECT_EQ(queue.queued_sentences(), 0u);
  EXPECT_THROW(queue.submit({source(1)}, beam(2), 1), QueueFull);
}
