// `yoke serve` end to end on loopback: concurrent clients each get their own translations in
// order, bad requests get 4xx with a reason, the metrics count them, SIGTERM drains and exits 0.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "serve_helpers.h"
#include "serve/metrics.h"

using namespace yoke::test;
using nlohmann::json;

TEST(ServeCli, ConcurrentClientsBadRequestsMetricsAndShutdown) {
  const auto model = tiny_translation_model();
  const auto sentences = lines_of(slurp(data_dir() / "test.toy.src.txt"));
  ASSERT_GE(sentences.size(), 20u);
  // What `yoke translate` makes of them with the same beam: the server must answer the same.
  std::vector<std::string> expected;
  {
    std::istringstream out(output_of({YOKE_BINARY, "translate", "--model", model.string(), "--input",
                                      (data_dir() / "test.toy.src.txt").string(), "--beam", "2", "--threads", "1"}));
    for (std::string l; std::getline(out, l);) expected.push_back(l);
  }
  ASSERT_EQ(expected.size(), sentences.size());

  const auto log = work_dir() / "serve.log";
  ServerProcess server;
  server.pid = spawn({YOKE_BINARY, "serve", "--model", "toy=" + model.string(), "--model", "again=" + model.string(),
                      "--port", "0", "--threads", "1", "--batch-window-ms", "200", "--max-queue", "40",
                      "--max-request-bytes", "4000"},
                     log);
  const int port = wait_for_port(log, server.pid);
  ASSERT_GT(port, 0) << slurp(log);

  // 8 clients × 6 requests, each of 1–3 sentences picked by client and request number.
  constexpr int kClients = 8, kRequests = 6;
  std::vector<std::string> failures(kClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c)
    threads.emplace_back([&, c] {
      auto http = client(port);
      for (int r = 0; r < kRequests; ++r) {
        std::vector<size_t> picked;
        for (int k = 0; k <= (c + r) % 3; ++k) picked.push_back(size_t(c * 7 + r * 3 + k * 5) % sentences.size());
        json body = {{"text", json::array()}, {"beam", 2}, {"model", c % 2 ? "toy" : "again"}};
        for (size_t i : picked) body["text"].push_back(sentences[i]);
        auto res = http.Post("/translate", body.dump(), "application/json");
        if (!res || res->status != 200) {
          failures[c] += "request " + std::to_string(r) + " failed: " + (res ? res->body : httplib::to_string(res.error())) + "\n";
          continue;
        }
        const auto answer = json::parse(res->body).at("translations");
        if (answer.size() != picked.size()) failures[c] += "request " + std::to_string(r) + ": wrong count\n";
        for (size_t k = 0; k < picked.size() && k < answer.size(); ++k)
          if (answer[k].at("text").get<std::string>() != expected[picked[k]] || !answer[k].at("score").is_number())
            failures[c] += "request " + std::to_string(r) + " sentence " + std::to_string(k) + ": got '" +
                           answer[k].at("text").get<std::string>() + "', expected '" + expected[picked[k]] + "'\n";
      }
    });
  for (auto& t : threads) t.join();
  for (int c = 0; c < kClients; ++c) EXPECT_TRUE(failures[c].empty()) << "client " << c << ":\n" << failures[c];

  auto http = client(port);
  auto refused = [&](const std::string& body, int status, const std::string& reason) {
    auto res = http.Post("/translate", body, "application/json");
    ASSERT_TRUE(res) << body;
    EXPECT_EQ(res->status, status) << body << " → " << res->body;
    auto j = json::parse(res->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << res->body;
    EXPECT_NE(j.value("error", "").find(reason), std::string::npos) << res->body;
  };
  refused("{\"text\": [\"a\"", 400, "not JSON");
  refused("[1, 2]", 400, "JSON object");
  // A number JSON cannot hold, and bytes that are not UTF-8: the client's error (400), not the server's.
  refused("{\"text\": [\"a\"], \"model\": \"toy\", \"beam\": 1e400}", 400, "not JSON");
  refused("{\"text\": [\"a\xff\xfe\"], \"model\": \"toy\"}", 400, "not JSON");
  refused("{\"text\": [\"a\", 3], \"model\": \"toy\"}", 400, "text[1] is not a string");
  // The decoding options' table (config/decoding_options.h) words what the CLI and Python refuse.
  refused("{\"text\": [\"a\"], \"model\": \"toy\", \"beam\": 0}", 400, "beam must be in [1, 1024], got 0");
  refused("{\"text\": [\"a\"], \"model\": \"toy\", \"beam\": 2.5}", 400, "\"beam\" must be a whole number, got 2.5");
  refused("{\"text\": [\"a\"], \"model\": \"toy\", \"lenpen\": \"1\"}", 400, "\"lenpen\" must be a number, got \"1\"");
  refused("{\"text\": [\"a\"], \"model\": \"toy\", \"max_len_a\": -1}", 400, "max_len_a must be >= 0, got -1");
  refused("{\"text\": [\"a\"], \"model\": \"toy\", \"beam\": 2, \"nbest\": 3}", 400, "nbest must be in [1, beam]");
  // A key no endpoint takes is named, not ignored: a misspelt option would otherwise run the default.
  refused("{\"text\": [\"a\"], \"model\": \"toy\", \"beams\": 5}", 400,
          "unknown key \"beams\"; /translate takes text, model, prefix, beam, nbest, lenpen, max_len_a, max_len_b");
  refused("{\"text\": [\"a\"]}", 400, "name a \"model\"");
  refused("{\"text\": [\"a\"], \"model\": \"nope\"}", 404, "unknown model 'nope'");
  refused("{\"text\": [\"" + std::string(5000, 'a') + "\"], \"model\": \"toy\"}", 413, "larger than 4000 bytes");
  refused("{\"model\": \"toy\", \"text\": [" + [] {
    std::string many;
    for (int i = 0; i < 41; ++i) many += std::string(i ? "," : "") + "\"a\"";
    return many;
  }() + "]}", 503, "queue is full");
  refused("{\"model\": \"toy\"}", 400, "\"text\" is missing");
  {
    auto res = http.Post("/generate", "{\"prompt\": \"a\", \"model\": \"toy\"}", "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400);
    EXPECT_NE(res->body.find("translation model"), std::string::npos) << res->body;
    res = http.Post("/generate", "{\"prompt\": \"a\", \"model\": \"toy\", \"top-k\": 3}", "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400);
    EXPECT_NE(res->body.find("unknown key \\\"top-k\\\""), std::string::npos) << res->body;
  }
  {  // Every option of the table is taken, as `yoke translate` takes it: a length limit of one subword.
    const std::string src = work_dir() / "one.src.txt";
    std::ofstream(src) << sentences[0] << "\n";
    std::string cut = output_of({YOKE_BINARY, "translate", "--model", model.string(), "--input", src, "--beam", "2",
                                 "--max-len-a", "0", "--max-len-b", "1", "--lenpen", "0.5", "--threads", "1"});
    while (!cut.empty() && cut.back() == '\n') cut.pop_back();
    ASSERT_NE(cut, expected[0]) << "the limit should cut this sentence's translation";
    json body = {{"text", {sentences[0]}}, {"model", "toy"}, {"beam", 2}, {"max_len_a", 0}, {"max_len_b", 1}, {"lenpen", 0.5}};
    auto res = http.Post("/translate", body.dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(json::parse(res->body).at("translations").at(0).at("text"), cut) << res->body;
  }
  {
    auto res = http.Get("/health");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(json::parse(res->body).at("models").size(), 2u);
  }
  {
    auto res = http.Get("/metrics");
    ASSERT_TRUE(res);
    const std::string& m = res->body;
    const std::string ok = "yoke_requests_total{endpoint=\"/translate\",code=\"200\"} " + std::to_string(kClients * kRequests + 1);  // + the length-limited one
    EXPECT_NE(m.find(ok + "\n"), std::string::npos) << m;
    EXPECT_NE(m.find("yoke_requests_total{endpoint=\"/translate\",code=\"404\"} 1\n"), std::string::npos) << m;
    EXPECT_NE(m.find("yoke_request_duration_seconds_bucket{endpoint=\"/translate\",le=\"+Inf\"}"), std::string::npos) << m;
    EXPECT_NE(m.find("yoke_requests_total{endpoint=\"/translate\",code=\"413\"} 1\n"), std::string::npos) << m;
    EXPECT_NE(m.find("yoke_queue_sentences 0\n"), std::string::npos) << m;
    std::smatch s;
    ASSERT_TRUE(std::regex_search(m, s, std::regex("yoke_batched_sentences_total ([0-9]+)")));
    std::smatch b;
    ASSERT_TRUE(std::regex_search(m, b, std::regex("yoke_batches_total ([0-9]+)")));
    // Concurrent requests shared batches: fewer batches than requests.
    EXPECT_LT(std::stoi(b[1]), kClients * kRequests) << m;
  }

  // SIGTERM while a request waits in the queue (the 200 ms window): it is still answered.
  std::thread in_flight([&] {
    auto late = client(port);
    json body = {{"text", {sentences[0], sentences[1]}}, {"beam", 2}, {"model", "toy"}};
    auto res = late.Post("/translate", body.dump(), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
    auto t = json::parse(res->body).at("translations");
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[1].at("text").get<std::string>(), expected[1]);
  });
  for (int i = 0; i < 200; ++i) {  // until the request is queued
    auto res = http.Get("/metrics");
    if (res && res->body.find("yoke_queue_sentences 2\n") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(kill(server.pid, SIGTERM), 0);
  in_flight.join();
  int status = 0;
  ASSERT_EQ(wait_child(server.pid, &status, 0), server.pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(log);
  EXPECT_NE(slurp(log).find("received SIGTERM"), std::string::npos) << slurp(log);
  EXPECT_NE(slurp(log).find("stopped"), std::string::npos) << slurp(log);
}

// An ensemble served under one name (a model with itself: it translates as the model does) and
// "prefix" beside "text": the answers are those of `yoke translate --prefix-file`.
TEST(ServeCli, EnsemblesAndPrefixesAsTranslateMakesThem) {
  const auto model = tiny_translation_model();
  const auto all = lines_of(slurp(data_dir() / "test.toy.src.txt"));
  ASSERT_GE(all.size(), 4u);
  const std::vector<std::string> sentences(all.begin(), all.begin() + 4);
  const auto input = work_dir() / "serve_prefix.src.txt", prefixes = work_dir() / "serve_prefix.tgt.txt";
  {
    std::ofstream in(input), pre(prefixes);
    for (const auto& s : sentences) in << s << "\n";
    for (size_t i = 0; i < sentences.size(); ++i) pre << (i % 2 ? "" : sentences[(i + 1) % sentences.size()].substr(0, 6)) << "\n";
  }
  const auto expected = lines_of(output_of({YOKE_BINARY, "translate", "--model", model.string(), "--input", input.string(),
                                            "--prefix-file", prefixes.string(), "--beam", "2", "--threads", "1"}));
  ASSERT_EQ(expected.size(), sentences.size());
  const auto log = work_dir() / "serve_ensemble.log";
  ServerProcess server;
  server.pid = spawn({YOKE_BINARY, "serve", "--model", "ens=" + model.string() + "," + model.string(), "--port", "0",
                      "--threads", "1", "--batch-window-ms", "0"},
                     log);
  const int port = wait_for_port(log, server.pid);
  ASSERT_GT(port, 0) << slurp(log);
  EXPECT_NE(slurp(log).find("and 1 more (an ensemble)"), std::string::npos) << slurp(log);
  auto http = client(port);
  json body = {{"text", sentences}, {"prefix", lines_of(slurp(prefixes))}, {"beam", 2}, {"model", "ens"}};
  auto res = http.Post("/translate", body.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const auto t = json::parse(res->body).at("translations");
  ASSERT_EQ(t.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(t[i].at("text").get<std::string>(), expected[i]) << i;
  body["prefix"] = {"one"};
  res = http.Post("/translate", body.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body;
  EXPECT_NE(res->body.find("one per text"), std::string::npos) << res->body;
}

// GET / says what the server answers; --cors lets a page from another origin call it: CORS headers
// on every answer (refusals too), and a preflight answered 204 without the token it cannot carry.
TEST(ServeCli, TheIndexPageAndCrossOriginCalls) {
  const auto model = tiny_translation_model();
  const auto log = work_dir() / "serve_cors.log";
  ServerProcess server;
  server.pid = spawn({YOKE_BINARY, "serve", "--model", "toy=" + model.string(), "--port", "0", "--threads", "1",
                      "--batch-window-ms", "0", "--token", "s3cret", "--cors", "http://localhost:8000"},
                     log);
  const int port = wait_for_port(log, server.pid);
  ASSERT_GT(port, 0) << slurp(log);
  auto http = client(port);
  const httplib::Headers auth = {{"Authorization", "Bearer s3cret"}};
  auto res = http.Get("/", auth);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const auto index = json::parse(res->body);
  EXPECT_EQ(index.at("service"), "yoke serve");
  EXPECT_TRUE(index.at("endpoints").contains("POST /translate")) << res->body;
  EXPECT_EQ(index.at("models").at(0).at("name"), "toy");
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "http://localhost:8000");
  // The preflight: no token, 204, what may follow.
  res = http.Options("/translate", {{"Origin", "http://localhost:8000"}, {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204) << res->body;
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "http://localhost:8000");
  EXPECT_NE(res->get_header_value("Access-Control-Allow-Headers").find("Authorization"), std::string::npos);
  // The call itself still needs the token, and its refusal carries the header a page needs to read it.
  res = http.Post("/translate", json{{"text", {"x"}}}.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "http://localhost:8000");
  res = http.Post("/translate", auth, json{{"text", {"x"}}}.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Access-Control-Allow-Origin"), "http://localhost:8000");
  // Without --cors there are no such headers and OPTIONS is refused as any other method would be.
  const auto plain_log = work_dir() / "serve_no_cors.log";
  ServerProcess plain;
  plain.pid = spawn({YOKE_BINARY, "serve", "--model", "toy=" + model.string(), "--port", "0", "--threads", "1"}, plain_log);
  const int plain_port = wait_for_port(plain_log, plain.pid);
  ASSERT_GT(plain_port, 0) << slurp(plain_log);
  auto plain_http = client(plain_port);
  res = plain_http.Options("/translate");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405) << res->body;
  EXPECT_FALSE(res->has_header("Access-Control-Allow-Origin"));
}

TEST(ServeMetrics, LabelValuesAreEscaped) {
  EXPECT_EQ(yoke::serve::label("plain"), "plain");
  EXPECT_EQ(yoke::serve::label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}
