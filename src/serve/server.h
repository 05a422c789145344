// `yoke serve`: an HTTP server (cpp-httplib) with a JSON API over one or more loaded models.
//   POST /translate  {"text": ["…", …], "beam": 5, "nbest": 1, "lenpen": 1, "model": "NAME",
//                     "prefix": ["…", …] (optional: the start of each translation)}
//                    → {"model": NAME, "translations": [{"text", "score", "nbest": [{"text", "score"}…]}…]}
//   POST /generate   {"prompt": "…", "max_tokens": 50, "temperature": 0, "top_k": 0, "top_p": 1,
//                     "seed": 1, "model": NAME} → {"model", "text", "tokens"}   (language models)
//   GET  /health     {"status": "ok", "models": [{"name", "task"}…]}
//   GET  /metrics    Prometheus text (serve/metrics.h)
// Errors are JSON {"error": REASON} with 400 (malformed), 401 (token missing or wrong), 404 (unknown
// model or path), 405 (wrong method), 408 (headers or body too slow), 413 (too large), 431 (headers
// too large), 503 (queue full, too many connections, or shutting down). Concurrent /translate
// requests for one model are decoded together (decode/batching_queue.h); sockets, limits and
// deadlines are serve/http_listener.h's.
#pragma once
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "decode/batching_queue.h"
#include "serve/http_listener.h"

namespace yoke::serve {

struct ModelToServe {
  std::string name, checkpoint;
  std::vector<std::string> dirs;  // several: an ensemble of translation models (equal weights)
};

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                         // 0: any free port (the one chosen is logged)
  std::string device = "cpu";
  BatchingLimits batching;
  RequestLimits http;                      // body and header sizes, connections, deadlines, token
  size_t max_sentences = 256;              // per request
  size_t max_sentence_subwords = 250;      // per source sentence (also capped by the model's positions)
  int max_beam = 16;
  int64_t max_generate_tokens = 256;
};

// Loads the models and serves until SIGTERM or SIGINT (handled while it runs), then finishes the
// requests in flight and returns. `log` receives one-line messages ("listening on HOST:PORT", shutdown).
void run_server(const std::vector<ModelToServe>& models, const ServeOptions& options,
                const std::function<void(const std::string&)>& log);

}  // namespace yoke::serve
