// `yoke serve` against clients that misbehave, on loopback with bounded counts and times: a chunked
// body over the limit, headers sent a byte at a time, more connections than the limit, many
// clients at once, a missing token. The server must answer with a status that says why, keep
// serving everyone else, and keep its memory bounded.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve_helpers.h"

using namespace yoke::test;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A server of the tiny model with `extra` options; the test fails (and returns port 0) if it does not start.
int start_server(ServerProcess& server, const std::string& name, std::vector<std::string> extra) {
  std::vector<std::string> args{YOKE_BINARY, "serve", "--model", "toy=" + tiny_translation_model().string(),
                                "--port", "0", "--threads", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto log = work_dir() / (name + ".log");
  server.pid = spawn(args, log);
  const int port = wait_for_port(log, server.pid);
  EXPECT_GT(port, 0) << slurp(log);
  return port;
}

int health_status(int port, const std::string& authorization = "") {
  auto c = client(port);
  httplib::Headers headers;
  if (!authorization.empty()) headers.emplace("Authorization", authorization);
  auto res = c.Get("/health", headers);
  return res ? res->status : 0;
}

}  // namespace

// 20 MB of chunked JSON against a 4000-byte limit: 413 as soon as the limit is passed, and the
// server's memory does not grow with what the client sends (it grew by 4 GB for 50 MB when the
// limit held only for Content-Length).
TEST(ServeAbuse, ChunkedBodyOverTheLimitIsRefusedAsItArrives) {
  ServerProcess server;
  const int port = start_server(server, "chunked", {"--max-request-bytes", "4000"});
  ASSERT_GT(port, 0);
  ASSERT_EQ(health_status(port), 200);
  const long rss_before = rss_kib(server.pid);

  RawConnection c(port);
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send_all("POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         "Transfer-Encoding: chunked\r\n\r\n"));
  const std::string chunk = "1000\r\n" + std::string(4096, 'a') + "\r\n";
  size_t sent = 0;
  bool answered = false;
  while (sent < (20u << 20)) {
    if (c.readable(0)) {
      answered = true;
      break;
    }
    if (!c.send_all(chunk)) break;  // the server closed: its answer waits to be read
    sent += chunk.size();
  }
  const std::string answer = c.read_to_end(10);
  EXPECT_EQ(status_of(answer), 413) << answer.substr(0, 300) << "\n(sent " << sent << " bytes)";
  EXPECT_NE(answer.find("larger than 4000 bytes"), std::string::npos) << answer.substr(0, 300);
  // Loopback socket buffers hold a few MB, so the client may send that much before it sees the answer.
  EXPECT_TRUE(answered || sent < (20u << 20)) << "the server read all 20 MB without answering";
  // 32 MB of slack: allocator and thread-stack noise are a few MB; keeping the body would be 20 MB or more.
  EXPECT_LT(rss_kib(server.pid) - rss_before, 32 * 1024) << "RSS before " << rss_before << " KiB";
  EXPECT_EQ(health_status(port), 200);
}

// 20 connections send their headers a byte every 100 ms with 2 request threads: the others are
// answered meanwhile, and each slow one gets 408 when its header deadline (3 s) passes.
TEST(ServeAbuse, SlowHeadersNeitherStallOthersNorStayForever) {
  ServerProcess server;
  const int port = start_server(server, "slow", {"--http-threads", "2", "--header-timeout", "3"});
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 20; ++i) {
    slow.push_back(std::make_unique<RawConnection>(port));
    ASSERT_TRUE(slow.back()->connected());
  }
  const auto attack_began = Clock::now();
  std::atomic<bool> stop_trickling{false};
  std::thread trickle([&] {
    const std::string request = "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(200, 'z') + "\r\n\r\n";
    for (size_t i = 0; i < request.size() && !stop_trickling; ++i) {
      for (auto& c : slow) c->send_all(request.substr(i, 1));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  // Ten normal requests while the slow ones hold their connections.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t = Clock::now();
  for (int i = 0; i < 10; ++i) {
    auto c = client(port);
    auto res = c.Post("/translate", R"({"text": ["a b c"], "beam": 1})", "application/json");
    ASSERT_TRUE(res) << "request " << i << " got no answer during the attack";
    EXPECT_EQ(res->status, 200) << res->body;
  }
  // Before the slow clients' deadline: they did not hold up the others.
  EXPECT_LT(seconds_since(t), 2.5) << "ten tiny requests took this long beside the slow clients";
  for (auto& c : slow) {
    const std::string answer = c->read_to_end(15);
    EXPECT_EQ(status_of(answer), 408) << answer;
    EXPECT_NE(answer.find("did not arrive within 3 s"), std::string::npos) << answer;
  }
  // Deadline 3 s; 15 s of slack for a loaded machine, far below the 20 s the trickle would take.
  EXPECT_LT(seconds_since(attack_began), 18);
  stop_trickling = true;
  trickle.join();
  EXPECT_EQ(health_status(port), 200);
}

// --max-connections 4: with four connections open a fifth gets 503 (with Retry-After), not a reset;
// once one closes there is room again.
TEST(ServeAbuse, ConnectionsOverTheLimitGet503) {
  ServerProcess server;
  const int port = start_server(server, "limit", {"--max-connections", "4"});
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(std::make_unique<RawConnection>(port));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // until the server has accepted them
  {
    RawConnection fifth(port);
    ASSERT_TRUE(fifth.connected());
    fifth.send_all("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    const std::string answer = fifth.read_to_end(10);
    EXPECT_EQ(status_of(answer), 503) << answer;
    EXPECT_NE(answer.find("Retry-After: 1"), std::string::npos) << answer;
    EXPECT_NE(answer.find("--max-connections"), std::string::npos) << answer;
  }
  idle.pop_back();
  int status = 0;
  for (int i = 0; i < 50 && status != 200; ++i) {  // the server notices the close within milliseconds
    status = health_status(port);
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(status, 200);
}

// 100 clients at once, each with 3 requests on fresh connections: every one answered, none reset
// (the listen backlog was 5: 200 clients lost 18 to 64 requests of 2000).
TEST(ServeAbuse, ManyClientsAtOnceAreAllAnswered) {
  ServerProcess server;
  const int port = start_server(server, "many", {"--batch-window-ms", "20"});
  ASSERT_GT(port, 0);
  std::atomic<int> ok{0};
  std::vector<std::string> failures(100);
  std::vector<std::thread> clients;
  for (int i = 0; i < 100; ++i)
    clients.emplace_back([&, i] {
      for (int r = 0; r < 3; ++r) {
        auto c = client(port);
        auto res = c.Post("/translate", R"({"text": ["a b"], "beam": 2})", "application/json");
        if (res && res->status == 200) ++ok;
        else failures[i] += res ? std::to_string(res->status) + " " + res->body + "; " : httplib::to_string(res.error()) + "; ";
      }
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 300);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(failures[i].empty()) << "client " << i << ": " << failures[i];
}

// Headers over the limit get 431, a body slower than its deadline 408, a request that is not HTTP
// 400: each a JSON reason, and the server goes on.
TEST(ServeAbuse, OversizedHeadersSlowBodiesAndGarbageGetTheirStatus) {
  ServerProcess server;
  const int port = start_server(server, "malformed", {"--body-timeout", "1"});
  ASSERT_GT(port, 0);
  {
    RawConnection c(port);
    c.send_all("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'b') + "\r\n\r\n");
    const std::string answer = c.read_to_end(10);
    EXPECT_EQ(status_of(answer), 431) << answer.substr(0, 300);
  }
  {
    RawConnection c(port);
    c.send_all("POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"text\"");
    const auto t = Clock::now();
    const std::string answer = c.read_to_end(10);
    EXPECT_EQ(status_of(answer), 408) << answer;
    EXPECT_NE(answer.find("body did not arrive within 1 s"), std::string::npos) << answer;
    EXPECT_LT(seconds_since(t), 8);  // deadline 1 s, slack for a loaded machine
  }
  {
    RawConnection c(port);
    c.send_all("\x16\x03\x01 not http\r\n\r\n");  // how a TLS hello begins, say
    const std::string answer = c.read_to_end(10);
    EXPECT_EQ(status_of(answer), 400) << answer;
    EXPECT_NE(answer.find("malformed HTTP request"), std::string::npos) << answer;
  }
  EXPECT_EQ(health_status(port), 200);
}

// Request smuggling: a Transfer-Encoding that does not end in "chunked", one beside a
// Content-Length, or one on HTTP/1.0 leaves the body's end to a guess, and the bytes after the
// headers could be answered as a second request. Each gets one 400, and the connection closes
// (RFC 9112 §6.3), so the smuggled request is never answered.
TEST(ServeAbuse, TransferEncodingThatCannotFrameTheBodyGets400AndTheConnectionCloses) {
  ServerProcess server;
  const int port = start_server(server, "smuggling", {});
  ASSERT_GT(port, 0);
  const std::string smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::vector<std::string> framings = {
      "HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n",
      "HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n",
      "HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n",
      "HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n",
      "HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n",
      "HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n",
      "HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n",
      "HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"};
  for (const auto& framing : framings) {
    RawConnection c(port);
    ASSERT_TRUE(c.connected());
    c.send_all("POST /translate " + framing + "\r\n" + smuggled);
    const auto t = Clock::now();
    const std::string answer = c.read_to_end(10);
    EXPECT_EQ(status_of(answer), 400) << framing << answer;
    EXPECT_EQ(answer.find("HTTP/1.1", 1), std::string::npos) << "a second answer, to the smuggled request:\n" << answer;
    // The message names the framing (Beast's parser refuses a chunked body with a length itself).
    EXPECT_TRUE(answer.find("Transfer-Encoding") != std::string::npos || answer.find("Content-Length") != std::string::npos)
        << answer;
    EXPECT_LT(seconds_since(t), 8) << "the connection stayed open after the refusal";  // closes at once
  }
  // A plain chunked body is still read.
  RawConnection ok(port);
  ok.send_all("POST /translate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
              "10\r\n{\"text\": [\"a b\"]\r\n1\r\n}\r\n0\r\n\r\n");
  const std::string answer = ok.read_to_end(20);
  EXPECT_EQ(status_of(answer), 200) << answer;
  EXPECT_EQ(health_status(port), 200);
}

// HEAD has GET's headers and no content, so the next response on the connection is read as
// itself (RFC 9110 §9.3.2); an absolute-form target is the path it names (RFC 9112 §3.2.2).
TEST(ServeAbuse, HeadHasNoContentAndAbsoluteTargetsAreTheirPath) {
  ServerProcess server;
  const int port = start_server(server, "head", {});
  ASSERT_GT(port, 0);
  RawConnection c(port);
  ASSERT_TRUE(c.connected());
  c.send_all("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n"
             "HEAD /translate HTTP/1.1\r\nHost: x\r\n\r\n"
             "GET http://x:1234/health?probe=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string answer = c.read_to_end(10);
  // Three responses, each whole: HEAD /health 200 and HEAD /translate 405 with a Content-Length and
  // no content, then the absolute-form GET's 200 with its content.
  std::vector<size_t> starts;
  for (size_t at = answer.find("HTTP/1.1 "); at != std::string::npos; at = answer.find("HTTP/1.1 ", at + 1)) starts.push_back(at);
  ASSERT_EQ(starts.size(), 3u) << answer;
  const std::string head_ok = answer.substr(starts[0], starts[1] - starts[0]);
  const std::string head_refused = answer.substr(starts[1], starts[2] - starts[1]);
  const std::string get = answer.substr(starts[2]);
  EXPECT_EQ(status_of(head_ok), 200) << head_ok;
  EXPECT_EQ(status_of(head_refused), 405) << head_refused;
  for (const auto* r : {&head_ok, &head_refused}) {
    EXPECT_NE(r->find("Content-Length: "), std::string::npos) << *r;
    EXPECT_EQ(r->size(), r->find("\r\n\r\n") + 4) << "content after the headers:\n" << *r;
  }
  EXPECT_EQ(status_of(get), 200) << get;
  EXPECT_NE(get.find("\"status\""), std::string::npos) << get;
}

// A token from the environment (YOKE_SERVE_TOKEN): requests without it, or with another, get 401.
TEST(ServeAbuse, TokenFromTheEnvironmentIsRequired) {
  ServerProcess server;
  int port = 0;
  {
    const ScopedEnv token("YOKE_SERVE_TOKEN", "s3cret-token");
    ASSERT_TRUE(token.set());
    port = start_server(server, "token", {});
  }
  ASSERT_GT(port, 0);
  EXPECT_EQ(health_status(port), 401);
  EXPECT_EQ(health_status(port, "Bearer s3cret-tokem"), 401);
  EXPECT_EQ(health_status(port, "Bearer s3cret-token"), 200);
  auto c = client(port);
  auto res = c.Post("/translate", {{"Authorization", "Bearer s3cret-token"}}, R"({"text": ["a"]})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  res = c.Post("/translate", R"({"text": ["a"]})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_NE(res->body.find("Authorization: Bearer TOKEN"), std::string::npos) << res->body;
  EXPECT_EQ(res->get_header_value("WWW-Authenticate"), "Bearer");
}
