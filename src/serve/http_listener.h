// The HTTP/1.1 front of `yoke serve`, on Boost.Beast (Debian's libboost-dev): it owns sockets,
// limits and deadlines, so that no client can hold the server however it behaves; what a request
// means is the handler's business (serve/server.cpp).
//
// Why Beast and not cpp-httplib (used before): httplib 0.11 reads a chunked body without a size
// limit, gives each connection a thread that a client sending headers at 1 byte/s keeps for as
// long as it likes (its timeout is per read), and listens with a backlog of 5. Here:
// - sockets are served asynchronously by a few I/O threads: a slow client costs a socket, not a thread;
// - the header and the body each have a deadline (RequestLimits::header_timeout / body_timeout);
// - the body limit is counted as bytes arrive, for every transfer encoding (413 at the limit);
// - at most `max_connections` connections are open; one more is answered 503 and closed, and the
//   listen backlog is as large as that limit;
// - handlers run on their own pool of threads, since a translation blocks until its batch is decoded;
// - an optional bearer token guards every endpoint (401 without it).
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace yoke::serve {

struct HttpRequest {
  std::string method, path, body;  // path without the query string
};

struct HttpResponse {
  int status = 200;
  std::string body, content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones, such as Retry-After
};

struct RequestLimits {
  size_t max_body_bytes = 1 << 20;     // larger bodies: 413, however they are sent
  size_t max_header_bytes = 16 << 10;  // larger request lines and headers: 431
  size_t max_connections = 512;        // open at once; one more gets 503 (also the listen backlog)
  int handler_threads = 64;            // requests handled at once (a translation waiting for its batch holds one)
  int io_threads = 2;                  // threads that read and write sockets
  std::chrono::milliseconds header_timeout{10000};  // from a connection's first byte (or its previous answer) to its last header byte
  std::chrono::milliseconds body_timeout{30000};    // to read the whole body
  std::chrono::milliseconds write_timeout{30000};   // to send an answer
  std::string bearer_token;                         // non-empty: every request must send "Authorization: Bearer TOKEN"
  // Non-empty: browser pages from this origin ("http://localhost:8000", or "*") may call the server:
  // every answer carries Access-Control-Allow-Origin, and a CORS preflight (OPTIONS) gets 204
  // without the token (a preflight carries none).
  std::string cors_origin;
};

class HttpListener {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  // Told about every answer sent, the listener's own refusals included: path ("" when the request
  // could not be read), status and seconds since its header arrived.
  using Observer = std::function<void(const std::string& path, int status, double seconds)>;

  // Binds and listens (InputError when it cannot); port 0 picks a free port (see port()).
  HttpListener(const std::string& host, int port, RequestLimits limits, Handler handler, Observer observe);
  ~HttpListener();
  int port() const;
  // Serves until stop(): then accepts no more, closes idle connections, answers the requests
  // being handled (with "Connection: close") and returns.
  void run();
  void stop();  // from any thread, also before run()

  struct State;  // shared with the connections

 private:
  std::shared_ptr<State> state_;
};

}  // namespace yoke::serve
