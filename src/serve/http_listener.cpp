#include "serve/http_listener.h"

#include <sys/resource.h>

#include <array>
#include <cstring>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace yoke::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

using Clock = std::chrono::steady_clock;

// After a refusal the client may still be sending (a body over the limit): the connection reads and
// drops up to this much, for up to this long, before it closes. Closing a socket with unread bytes
// makes the kernel send a reset, which can reach the client before it has read the answer.
constexpr size_t kDrainBytes = 4 << 20;
constexpr std::chrono::milliseconds kDrainTime{2000};

std::string error_body(const std::string& reason) {
  return nlohmann::json{{"error", reason}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Compares in time that depends on the lengths only, so that the token cannot be guessed byte by byte.
bool same_secret(const std::string& given, const std::string& expected) {
  unsigned char differ = given.size() != expected.size();
  for (size_t i = 0; i < given.size(); ++i) differ |= (unsigned char)(given[i] ^ expected[i % expected.size()]);
  return differ == 0;
}

std::string seconds_text(std::chrono::milliseconds t) {
  const auto ms = t.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

}  // namespace

class Connection;

struct HttpListener::State {
  State(RequestLimits l, Handler h, Observer o)
      : limits(std::move(l)), handler(std::move(h)), observe(std::move(o)), acceptor(net::make_strand(io)),
        handlers(size_t(std::max(1, limits.handler_threads))), retry(acceptor.get_executor()) {}

  void accept();
  void stop_on_strand();

  const RequestLimits limits;
  const Handler handler;
  const Observer observe;
  std::atomic<size_t> open{0}, refusing{0};
  std::atomic<bool> stopping{false};
  // Declared before the io_context: destroying it destroys pending work, and with it connections,
  // which unregister here.
  std::mutex connections_mutex;
  std::map<uint64_t, std::weak_ptr<Connection>> connections;
  uint64_t next_id = 0;
  net::io_context io;
  tcp::acceptor acceptor;
  net::thread_pool handlers;
  net::steady_timer retry;  // after a failed accept (out of file descriptors): wait, then try again
};

// One client connection: reads a request within its deadlines, has the handler answer it on the
// handler pool, writes the answer, and again while the client keeps the connection alive.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `refuse_at_once`: the server is full; the connection only says 503 and closes.
  // `state` outlives its connections: run() returns only when every one has closed.
  Connection(HttpListener::State& state, tcp::socket socket, bool refuse_at_once)
      : state_(state), stream_(std::move(socket)), deadline_(stream_.get_executor()), counted_as_refusal_(refuse_at_once) {
    ++(counted_as_refusal_ ? state_.refusing : state_.open);
    started_ = Clock::now();
  }
  ~Connection() {
    --(counted_as_refusal_ ? state_.refusing : state_.open);
    std::lock_guard<std::mutex> lock(state_.connections_mutex);
    state_.connections.erase(id_);
  }

  void start() {
    {
      std::lock_guard<std::mutex> lock(state_.connections_mutex);
      id_ = state_.next_id++;
      state_.connections[id_] = weak_from_this();
    }
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      if (self->counted_as_refusal_) {
        self->refuse(503, "the server has " + std::to_string(self->state_.limits.max_connections) +
                              " connections open, its limit (see --max-connections); try again shortly",
                     {{"Retry-After", "1"}});
      } else {
        self->read_header();
      }
    });
  }

  // The server stops: a connection waiting for a request closes; one being answered closes after it.
  void stop_soon() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      self->close_after_ = true;
      if (self->waiting_for_request_) self->stream_.cancel();
    });
  }

 private:
  const RequestLimits& limits() const { return state_.limits; }

  void read_header() {
    if (state_.stopping) return close_now();
    parser_.emplace();
    parser_->header_limit(uint32_t(std::min<size_t>(limits().max_header_bytes, UINT32_MAX)));
    parser_->body_limit(limits().max_body_bytes);
    waiting_for_request_ = true;
    set_deadline(limits().header_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    waiting_for_request_ = false;
    started_ = Clock::now();
    const bool timed_out = clear_deadline();
    const bool got_some = parser_->got_some() || buffer_.size() > 0;  // the parser takes only whole lines
    if (!got_some || (ec && !timed_out && client_left(ec)))
      return close_now();  // the client left, the server stops, or an idle connection timed out
    // The request line is parsed before the fields: the path is known also when a field is refused
    // (a Content-Length over the limit), and empty when the request line was not read.
    path_ = path_of(std::string(parser_->get().target()));
    head_ = parser_->get().method() == http::verb::head;
    if (timed_out)
      return refuse(408, "the request's headers did not arrive within " + seconds_text(limits().header_timeout));
    if (ec == http::error::header_limit)
      return refuse(431, "the request line and headers are larger than " + std::to_string(limits().max_header_bytes) +
                             " bytes");
    if (ec == http::error::body_limit) return refuse_too_large();
    if (ec) return refuse(400, "malformed HTTP request: " + ec.message());
    const auto& header = parser_->get();
    if (const auto why = framing_problem(header)) return refuse(400, *why);
    if (!limits().cors_origin.empty() && header.method() == http::verb::options && parser_->is_done()) {
      // A browser's preflight before a cross-origin POST: what may follow, without credentials.
      keep_alive_ = header.keep_alive();
      version_ = header.version();
      HttpResponse out{204, ""};
      out.content_type = "text/plain";
      out.headers = {{"Access-Control-Allow-Methods", "GET, POST, OPTIONS"},
                     {"Access-Control-Allow-Headers", "Content-Type, Authorization"},
                     {"Access-Control-Max-Age", "600"}};
      return respond(std::move(out));
    }
    if (!limits().bearer_token.empty()) {
      const auto given = header[http::field::authorization];
      if (!same_secret(std::string(given), "Bearer " + limits().bearer_token))
        return refuse(401,
                      given.empty() ? "this server needs \"Authorization: Bearer TOKEN\"" : "the bearer token is wrong",
                      {{"WWW-Authenticate", "Bearer"}});
    }
    if (parser_->is_done()) return handle();
    if (beast::iequals(header[http::field::expect], "100-continue")) {
      // curl waits for this before it sends a large body.
      auto go_on = std::make_shared<http::response<http::empty_body>>(http::status::continue_, header.version());
      set_deadline(limits().write_timeout);
      http::async_write(stream_, *go_on, [self = shared_from_this(), go_on](beast::error_code ec, size_t) {
        self->clear_deadline();
        if (ec) return self->close_now();
        self->read_body();
      });
      return;
    }
    read_body();
  }

  // RFC 9112 §6.1 and §6.3: a request's body is framed by Content-Length or by a final "chunked"
  // transfer coding, never both, and HTTP/1.0 has no transfer codings. Any other framing would
  // leave the body's end to a guess, and what follows on the connection could be read as a request
  // of its own (request smuggling): such a request is refused, and refuse() closes the connection.
  // This server decodes no transfer coding but chunked.
  template <typename Header>
  static std::optional<std::string> framing_problem(const Header& header) {
    if (header.find(http::field::transfer_encoding) == header.end()) return std::nullopt;
    const std::string te(header[http::field::transfer_encoding]);
    if (header.version() < 11) return "Transfer-Encoding in an HTTP/1.0 request (RFC 9112 §6.1)";
    if (header.find(http::field::content_length) != header.end())
      return "both Transfer-Encoding and Content-Length: the body's length is ambiguous (RFC 9112 §6.3)";
    if (std::distance(header.equal_range(http::field::transfer_encoding).first,
                      header.equal_range(http::field::transfer_encoding).second) != 1 ||
        !beast::iequals(trimmed(te), "chunked"))
      return "Transfer-Encoding: " + te + ": this server reads request bodies framed by Content-Length or by "
             "\"Transfer-Encoding: chunked\" alone (RFC 9112 §6.3)";
    return std::nullopt;
  }

  // The path of a request target: origin-form ("/health?x") or absolute-form
  // ("http://host:8080/health", which a server must accept, RFC 9112 §3.2.2), without the query.
  static std::string path_of(std::string target) {
    for (const char* scheme : {"http://", "https://"}) {
      const size_t n = std::strlen(scheme);
      if (target.size() >= n && beast::iequals(target.substr(0, n), scheme)) {
        const size_t slash = target.find_first_of("/?", n);
        target = slash == std::string::npos ? "/" : target[slash] == '?' ? "/" + target.substr(slash) : target.substr(slash);
        break;
      }
    }
    return target.substr(0, target.find('?'));
  }

  static std::string trimmed(const std::string& s) {
    const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  }

  void read_body() {
    set_deadline(limits().body_timeout);
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
      const bool timed_out = self->clear_deadline();
      if (ec == http::error::body_limit) return self->refuse_too_large();
      if (timed_out)
        return self->refuse(408, "the request's body did not arrive within " + seconds_text(self->limits().body_timeout));
      if (ec && client_left(ec)) return self->close_now();
      if (ec) return self->refuse(400, "malformed HTTP request body: " + ec.message());
      self->handle();
    });
  }

  // The handler may block (a translation waits for its batch): it runs on the handler pool, and the
  // work guard keeps the I/O threads running until its answer is written, also while stopping.
  void handle() {
    auto& request = parser_->get();
    keep_alive_ = request.keep_alive();
    version_ = request.version();
    HttpRequest r{std::string(request.method_string()), path_, std::move(request.body())};
    auto work = std::make_shared<net::executor_work_guard<net::io_context::executor_type>>(state_.io.get_executor());
    net::post(state_.handlers, [self = shared_from_this(), r = std::move(r), work]() mutable {
      HttpResponse out;
      try {
        out = self->state_.handler(r);
      } catch (const std::exception& e) {
        out = {500, error_body(std::string("internal error: ") + e.what())};
      }
      net::post(self->stream_.get_executor(),
                [self, out = std::move(out), work]() mutable { self->respond(std::move(out)); });
    });
  }

  void refuse_too_large() {
    refuse(413, "the request body is larger than " + std::to_string(limits().max_body_bytes) +
                    " bytes (see --max-request-bytes)");
  }

  void refuse(int status, const std::string& reason, std::vector<std::pair<std::string, std::string>> headers = {}) {
    close_after_ = true;  // what the client sends next cannot be told apart from the rest of this request
    HttpResponse out{status, error_body(reason)};
    out.headers = std::move(headers);
    respond(std::move(out));
  }

  void respond(HttpResponse out) {
    response_ = {};
    response_.version(version_);
    response_.result(unsigned(out.status));
    response_.set(http::field::content_type, out.content_type);
    for (const auto& [name, value] : out.headers) response_.set(name, value);
    if (!limits().cors_origin.empty()) {  // refusals too: a page must be able to read why
      response_.set(http::field::access_control_allow_origin, limits().cors_origin);
      response_.set(http::field::vary, "Origin");
    }
    response_.keep_alive(keep_alive_ && !close_after_ && !state_.stopping);
    response_.body() = std::move(out.body);
    response_.prepare_payload();
    // A response to HEAD has the headers a GET would have, Content-Length included, and no
    // content (RFC 9110 §9.3.2): bytes after the headers would be read as the next response.
    if (head_) response_.body().clear();
    if (state_.observe)
      state_.observe(path_, out.status, std::chrono::duration<double>(Clock::now() - started_).count());
    set_deadline(limits().write_timeout);
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code ec, size_t) {
      self->clear_deadline();
      if (ec) return self->close_now();
      if (!self->response_.keep_alive()) return self->drain_and_close();
      self->read_header();
    });
  }

  // Says "no more" (FIN), then reads what the client still sends, bounded, so that it can read the answer.
  void drain_and_close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    set_deadline(kDrainTime);
    drain();
  }
  void drain() {
    stream_.async_read_some(net::buffer(drain_buffer_), [self = shared_from_this()](beast::error_code ec, size_t n) {
      self->drained_ += n;
      if (ec || self->drained_ > kDrainBytes) return self->close_now();
      self->drain();
    });
  }

  // Deadlines cancel the pending socket operation when they pass, leaving the socket open (Beast's
  // own tcp_stream timeouts close it), so that a 408 can still be sent.
  void set_deadline(std::chrono::milliseconds d) {
    const uint64_t armed = ++deadline_armed_;
    timed_out_ = false;
    deadline_.expires_after(d);
    deadline_.async_wait([self = shared_from_this(), armed](beast::error_code ec) {
      if (ec || armed != self->deadline_armed_) return;  // cleared or re-armed meanwhile
      self->timed_out_ = true;
      beast::error_code ignored;
      self->stream_.socket().cancel(ignored);
    });
  }
  // Disarms the deadline; true when it had passed.
  bool clear_deadline() {
    ++deadline_armed_;
    deadline_.cancel();
    return std::exchange(timed_out_, false);
  }

  // Errors that mean the connection is gone or the server stops, not that the request is malformed.
  static bool client_left(beast::error_code ec) {
    return ec == http::error::end_of_stream || ec == http::error::partial_message || ec == net::error::eof ||
           ec == net::error::operation_aborted || ec == net::error::connection_reset || ec == net::error::broken_pipe;
  }

  void close_now() {
    clear_deadline();
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  HttpListener::State& state_;
  beast::tcp_stream stream_;
  net::steady_timer deadline_;
  uint64_t deadline_armed_ = 0;
  bool timed_out_ = false;
  const bool counted_as_refusal_;
  uint64_t id_ = 0;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  std::string path_;
  unsigned version_ = 11;
  bool keep_alive_ = false, close_after_ = false, waiting_for_request_ = false;
  bool head_ = false;  // the request is HEAD: the response carries no content
  Clock::time_point started_;
  std::array<char, 16384> drain_buffer_;
  size_t drained_ = 0;
};

void HttpListener::State::accept() {
  acceptor.async_accept(net::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
    if (!acceptor.is_open()) return;  // stopped
    if (ec) {
      // Out of file descriptors, or a connection reset before it was accepted: try again shortly
      // rather than spin.
      retry.expires_after(std::chrono::milliseconds(50));
      retry.async_wait([this](beast::error_code) {
        if (acceptor.is_open()) accept();
      });
      return;
    }
    if (stopping) return;
    if (open < limits.max_connections) {
      std::make_shared<Connection>(*this, std::move(socket), false)->start();
    } else if (refusing < limits.max_connections) {
      std::make_shared<Connection>(*this, std::move(socket), true)->start();
    } else {
      beast::error_code ignored;
      socket.close(ignored);  // a flood: refusing politely would cost without bound
    }
    accept();
  });
}

void HttpListener::State::stop_on_strand() {
  if (stopping.exchange(true)) return;
  beast::error_code ignored;
  acceptor.close(ignored);
  retry.cancel();
  std::vector<std::shared_ptr<Connection>> live;
  {
    std::lock_guard<std::mutex> lock(connections_mutex);
    for (auto& [id, weak] : connections)
      if (auto c = weak.lock()) live.push_back(c);
  }
  for (auto& c : live) c->stop_soon();
}

HttpListener::HttpListener(const std::string& host, int port, RequestLimits limits, Handler handler, Observer observe)
    : state_(std::make_shared<State>(std::move(limits), std::move(handler), std::move(observe))) {
  const auto& l = state_->limits;
  // Each connection is a file descriptor: make room for the limit when the hard limit allows.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < l.max_connections * 2 + 256) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, l.max_connections * 2 + 256);
    setrlimit(RLIMIT_NOFILE, &files);
  }
  const std::string where = host + ":" + std::to_string(port);
  beast::error_code ec;
  tcp::resolver resolver(state_->io);
  const auto found = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec || found.empty()) throw InputError("cannot listen on " + where + ": " + ec.message());
  const tcp::endpoint endpoint = found.begin()->endpoint();
  auto& acceptor = state_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  // The backlog holds connections the kernel completed before they are accepted: as many as may be open.
  if (!ec) acceptor.listen(int(std::min<size_t>(l.max_connections, INT32_MAX)), ec);
  if (ec) throw InputError("cannot listen on " + where + ": " + ec.message());
}

HttpListener::~HttpListener() {
  stop();
  state_->handlers.join();
}

int HttpListener::port() const { return state_->acceptor.local_endpoint().port(); }

void HttpListener::run() {
  State& s = *state_;
  net::post(s.acceptor.get_executor(), [&s] { s.accept(); });
  std::vector<std::thread> io;
  for (int i = 1; i < std::max(1, s.limits.io_threads); ++i) io.emplace_back([&s] { s.io.run(); });
  s.io.run();
  for (auto& t : io) t.join();
  s.handlers.join();
}

void HttpListener::stop() {
  auto s = state_;
  net::post(s->acceptor.get_executor(), [s] { s->stop_on_strand(); });
}

}  // namespace yoke::serve
