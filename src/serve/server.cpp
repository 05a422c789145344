#include "serve/server.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "config/decoding_options.h"
#include "decode/translation_service.h"
#include "service/translator.h"
#include "decode/batched_decoding.h"
#include "lm/generate.h"
#include "lm/prompt.h"
#include "serve/http_listener.h"
#include "serve/metrics.h"
#include "store/model_ensemble.h"
#include "util/error.h"
#include "util/version.h"

namespace yoke::serve {
namespace {

using nlohmann::json;

// A request the server refuses, with its HTTP status and the reason sent back.
struct Refusal {
  int status;
  std::string reason;
};

struct ServedModel {
  std::string name;
  std::unique_ptr<Translator> translator;  // a translation model or an ensemble (service/translator.h)
  LoadedModel lm;                          // a language model
  std::mutex use;  // one decoding at a time: batches and generations take turns
  const LoadedModel& first() const { return translator ? translator->first() : lm; }
  Task task() const { return first().config.task; }
};

HttpResponse json_response(int status, const json& body) {
  // An error message may quote a client's bytes that are not UTF-8: replaced (U+FFFD), not a throw.
  return {status, body.dump(-1, ' ', false, json::error_handler_t::replace)};
}

json parse_body(const HttpRequest& req) {
  json body;
  try {
    body = json::parse(req.body);
  } catch (const json::exception& e) {  // parse errors, and numbers out of range such as 1e400
    throw Refusal{400, std::string("the body is not JSON: ") + e.what()};
  }
  if (!body.is_object()) throw Refusal{400, "the body must be a JSON object"};
  return body;
}

int64_t integer_field(const json& body, const char* key, int64_t fallback, int64_t low, int64_t high) {
  if (!body.contains(key)) return fallback;
  const json& v = body[key];
  if (!v.is_number_integer()) throw Refusal{400, std::string("\"") + key + "\" must be a whole number"};
  // An unsigned number past int64's range is out of range as it was sent, not read as negative.
  const bool too_large = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(high);
  if (too_large || v.get<int64_t>() < low || v.get<int64_t>() > high)
    throw Refusal{400, std::string("\"") + key + "\" must be in [" + std::to_string(low) + ", " + std::to_string(high) +
                           "], got " + v.dump()};
  return v.get<int64_t>();
}

double number_field(const json& body, const char* key, double fallback, double low, double high) {
  if (!body.contains(key)) return fallback;
  const json& v = body[key];
  if (!v.is_number()) throw Refusal{400, std::string("\"") + key + "\" must be a number"};
  const double x = v.get<double>();
  if (!(x >= low && x <= high))
    throw Refusal{400, std::string("\"") + key + "\" must be in [" + std::to_string(low) + ", " + std::to_string(high) + "]"};
  return x;
}

// A key an endpoint does not know is refused by name: a misspelt "beams" or an option the
// endpoint does not take would otherwise be ignored, and the client never learn it.
void refuse_unknown_keys(const json& body, const std::vector<std::string>& known, const std::string& endpoint) {
  for (const auto& [key, value] : body.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw Refusal{400, "unknown key \"" + key + "\"; " + endpoint + " takes " + list};
  }
}

// The decoding options of a /translate body, from config/decoding_options.h's table: numbers only,
// whole where the option is; out of range, nbest over beam or beam over --max-beam refused by name.
DecodingValues decoding_values(const json& body, int max_beam) {
  DecodingValues values;
  for (const auto& o : decoding_options()) {
    if (!body.contains(o.name)) continue;
    const json& v = body[o.name];
    const bool whole = o.kind == OptionKind::whole;
    if (whole ? !v.is_number_integer() : !v.is_number())
      throw Refusal{400, "\"" + o.name + "\" must be " + (whole ? "a whole number" : "a number") + ", got " + v.dump()};
    try {
      set_decoding_option(values, o.name, v.get<double>());
    } catch (const InputError& e) {
      throw Refusal{400, e.what()};
    }
  }
  try {
    check_decoding_values(values, max_beam);
  } catch (const InputError& e) {
    throw Refusal{400, std::string(e.what()) + (values.beam > max_beam ? " (see --max-beam)" : "")};
  }
  return values;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

class Server {
 public:
  Server(const std::vector<ModelToServe>& models, const ServeOptions& options,
         const std::function<void(const std::string&)>& log)
      : options_(options), log_(log) {
    for (const auto& m : models) {
      auto served = std::make_unique<ServedModel>();
      served->name = m.name;
      // One directory may hold a language model; several are a translation ensemble.
      LoadedEnsemble loaded = m.dirs.size() > 1 ? load_ensemble(m.dirs, m.checkpoint, options.device)
                                                : ensemble_of_one(load_model(m.dirs.front(), m.checkpoint, options.device));
      const size_t members = loaded.members.size();
      if (loaded.first().config.task == Task::translate) {
        const std::string name = m.name;
        TranslatorSource source;
        source.batch_tokens = options.batching.batch_tokens;
        served->translator = std::make_unique<Translator>(std::move(loaded), source);
        // Concurrent requests for this model are decoded together, in the translator's queue.
        served->translator->start_queue(options.batching, served->use, [this, name](size_t sentences, size_t tokens) {
          metrics_.count_sentences(name, sentences, tokens);
          metrics_.count_batch(sentences);
        });
      } else {
        served->lm = std::move(loaded.members.front());
      }
      const LoadedModel& first = served->first();
      log_("loaded " + m.name + " (" + name_of(first.config.task) + (first.int8 ? ", int8" : "") + ") from " +
           first.checkpoint + (members > 1 ? " and " + std::to_string(members - 1) + " more (an ensemble)" : ""));
      models_[m.name] = std::move(served);
    }
    metrics_.set_queue_length_source([this] {
      size_t n = 0;
      for (const auto& [name, m] : models_)
        if (m->translator) n += m->translator->queued_sentences();
      return n;
    });
  }

  void serve() {
    HttpListener http(
        options_.host, options_.port, options_.http, [this](const HttpRequest& req) { return answer(req); },
        [this](const std::string& path, int status, double seconds) {
          const bool known =
              path == "/" || path == "/translate" || path == "/generate" || path == "/health" || path == "/metrics";
          metrics_.count_request(known ? path : "other", status, seconds);
        });

    // SIGTERM / SIGINT wake the waiter (through a pipe: a signal handler may do little else),
    // which stops accepting; the requests in flight finish, then the queues drain.
    int wake[2];
    if (pipe(wake) != 0) throw std::runtime_error("cannot make a pipe for signals");
    signal_pipe() = wake[1];
    struct sigaction on_signal = {};
    on_signal.sa_handler = [](int sig) {
      const char c = char(sig);
      ssize_t ignored = write(signal_pipe(), &c, 1);
      (void)ignored;
    };
    sigemptyset(&on_signal.sa_mask);
    struct sigaction old_term, old_int;
    sigaction(SIGTERM, &on_signal, &old_term);
    sigaction(SIGINT, &on_signal, &old_int);
    std::thread waiter([&] {
      char c = 0;
      while (read(wake[0], &c, 1) < 0 && errno == EINTR) {}
      if (c != 0) log_(std::string("received ") + (c == SIGTERM ? "SIGTERM" : "SIGINT") + ": finishing the requests in flight");
      http.stop();
    });
    if (options_.http.bearer_token.empty() && !is_loopback(options_.host))
      log_("warning: listening on " + options_.host + " without a token: anyone who can reach it may use it (see --token)");
    log_("listening on " + options_.host + ":" + std::to_string(http.port()));
    http.run();
    const char none = 0;  // ends the waiter when listening ended otherwise
    ssize_t ignored = write(wake[1], &none, 1);
    (void)ignored;
    waiter.join();
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGINT, &old_int, nullptr);
    close(wake[0]);
    close(wake[1]);
    for (auto& [name, m] : models_)
      if (m->translator) m->translator->stop_queue();
    log_("stopped");
  }

 private:
  static int& signal_pipe() {
    static int fd = -1;
    return fd;
  }

  // Routes a request; answers a Refusal with its status, anything else with 500 — the server keeps running.
  HttpResponse answer(const HttpRequest& req) {
    try {
      // HEAD is GET without the content (the listener drops it, RFC 9110 §9.3.2).
      const auto only = [&](const std::string& method) {
        if (req.method != method && !(method == "GET" && req.method == "HEAD"))
          throw Refusal{405, req.path + " takes " + method + (method == "GET" ? " (or HEAD)" : "") + ", not " + req.method};
      };
      if (req.path == "/") {
        only("GET");
        return index();
      }
      if (req.path == "/translate") {
        only("POST");
        return translate(req);
      }
      if (req.path == "/generate") {
        only("POST");
        return generate(req);
      }
      if (req.path == "/health") {
        only("GET");
        return health();
      }
      if (req.path == "/metrics") {
        only("GET");
        HttpResponse r{200, metrics_.prometheus_text()};
        r.content_type = "text/plain; version=0.0.4";
        return r;
      }
      throw Refusal{404, "no such endpoint: " + req.method + " " + req.path};
    } catch (const Refusal& r) {
      HttpResponse out = json_response(r.status, {{"error", r.reason}});
      if (r.status == 503) out.headers.push_back({"Retry-After", "1"});
      return out;
    } catch (const QueueFull& e) {
      HttpResponse out = json_response(503, {{"error", e.what()}});
      out.headers.push_back({"Retry-After", "1"});
      return out;
    } catch (const std::exception& e) {
      return json_response(500, {{"error", std::string("internal error: ") + e.what()}});
    }
  }

  // GET /: what this server is and answers, for a person or a page finding its way.
  HttpResponse index() const {
    json models = json::array();
    for (const auto& [name, m] : models_) models.push_back({{"name", name}, {"task", name_of(m->task())}});
    return json_response(200, {{"service", "yoke serve"},
                               {"version", yoke_version()},
                               {"models", models},
                               {"endpoints",
                                {{"POST /translate", translate_keys()},
                                 {"POST /generate", "{\"prompt\": \"...\", \"max_tokens\", \"temperature\", \"top_k\", \"top_p\", \"seed\"}"},
                                 {"GET /health", "status and models"},
                                 {"GET /metrics", "Prometheus text"}}}});
  }

  // What GET / says /translate takes: the body's keys, the decoding options' from their table.
  static std::string translate_keys() {
    std::string keys = "{\"text\": [\"...\"], \"model\", \"prefix\"";
    for (const auto& o : decoding_options()) keys += ", \"" + o.name + "\"";
    return keys + "}";
  }

  HttpResponse health() const {
    json models = json::array();
    for (const auto& [name, m] : models_) models.push_back({{"name", name}, {"task", name_of(m->task())}});
    return json_response(200, {{"status", "ok"}, {"models", models}});
  }

  ServedModel& pick_model(const json& body, Task task) {
    ServedModel* m = nullptr;
    std::string names;
    for (const auto& [name, served] : models_) names += (names.empty() ? "" : ", ") + name;
    if (body.contains("model")) {
      if (!body["model"].is_string()) throw Refusal{400, "\"model\" must be a string"};
      auto it = models_.find(body["model"].get<std::string>());
      if (it == models_.end())
        throw Refusal{404, "unknown model '" + body["model"].get<std::string>() + "'; this server has: " + names};
      m = it->second.get();
    } else {
      if (models_.size() != 1) throw Refusal{400, "name a \"model\": this server has " + names};
      m = models_.begin()->second.get();
    }
    if (m->task() != task)
      throw Refusal{400, "model '" + m->name + "' is a " +
                             (task == Task::translate ? std::string("language model: use /generate")
                                                      : std::string("translation model: use /translate"))};
    return *m;
  }

  HttpResponse translate(const HttpRequest& req) {
    const json body = parse_body(req);
    std::vector<std::string> known = {"text", "model", "prefix"};
    for (const auto& o : decoding_options()) known.push_back(o.name);
    refuse_unknown_keys(body, known, "/translate");
    ServedModel& m = pick_model(body, Task::translate);
    if (!body.contains("text")) throw Refusal{400, "\"text\" is missing: a string or an array of strings"};
    std::vector<std::string> lines;
    const json& text = body["text"];
    if (text.is_string()) {
      lines.push_back(text.get<std::string>());
    } else if (text.is_array()) {
      if (text.size() > options_.max_sentences)
        throw Refusal{413, std::to_string(text.size()) + " sentences; at most " + std::to_string(options_.max_sentences) +
                               " per request (see --max-sentences)"};
      for (size_t i = 0; i < text.size(); ++i) {
        if (!text[i].is_string()) throw Refusal{400, "text[" + std::to_string(i) + "] is not a string"};
        lines.push_back(text[i].get<std::string>());
      }
    } else {
      throw Refusal{400, "\"text\" must be a string or an array of strings"};
    }
    TranslationRequest request;
    request.lines = std::move(lines);
    set_decoding_values(request, decoding_values(body, options_.max_beam));
    request.scores = true;
    request.long_lines = LongLines::refuse;
    request.max_source_subwords = options_.max_sentence_subwords;
    if (body.contains("prefix")) {
      const json& prefix = body["prefix"];
      const bool one = text.is_string();
      if (one ? !prefix.is_string() : !(prefix.is_array() && prefix.size() == request.lines.size()))
        throw Refusal{400, one ? "\"prefix\" must be a string, as \"text\" is"
                               : "\"prefix\" must be an array of strings, one per text"};
      for (size_t i = 0; i < request.lines.size(); ++i) {
        const json& p = one ? prefix : prefix[i];
        if (!p.is_string()) throw Refusal{400, "prefix[" + std::to_string(i) + "] is not a string"};
        request.prefixes.push_back(p.get<std::string>());
      }
    }
    std::future<std::vector<Translation>> answer;
    try {
      answer = m.translator->submit(request);
    } catch (const TooLong& e) {
      throw Refusal{413, std::string(e.what()) + " (see --max-sentence-subwords)"};
    }
    json translations = json::array();
    for (const Translation& tr : answer.get()) {
      const auto& hs = tr.hypotheses;
      json t = {{"text", hs.empty() ? "" : hs.front().text}, {"score", hs.empty() ? json(nullptr) : json(hs.front().score)}};
      if (request.nbest > 1) {
        json all = json::array();
        for (const auto& h : hs) all.push_back({{"text", h.text}, {"score", h.score}});
        t["nbest"] = all;
      }
      translations.push_back(t);
    }
    return json_response(200, {{"model", m.name}, {"translations", translations}});
  }

  HttpResponse generate(const HttpRequest& req) {
    const json body = parse_body(req);
    refuse_unknown_keys(body, {"prompt", "model", "max_tokens", "temperature", "top_k", "top_p", "seed"}, "/generate");
    ServedModel& m = pick_model(body, Task::lm);
    std::string prompt;
    if (body.contains("prompt")) {
      if (!body["prompt"].is_string()) throw Refusal{400, "\"prompt\" must be a string"};
      prompt = body["prompt"].get<std::string>();
    }
    SamplingOptions o;
    o.max_tokens = integer_field(body, "max_tokens", 50, 1, options_.max_generate_tokens);
    o.temperature = number_field(body, "temperature", 0.0, 0.0, 100.0);
    o.top_k = integer_field(body, "top_k", 0, 0, 1 << 30);
    o.top_p = number_field(body, "top_p", 1.0, 1e-9, 1.0);
    o.seed = uint64_t(integer_field(body, "seed", 1, 0, int64_t(1) << 62));
    Prompt start;
    try {
      start = make_prompt(m.lm.tgt_vocab, m.lm.config.lm_block > 0, m.lm.model->spec().max_positions, prompt);
    } catch (const PromptTooLong& e) {
      throw Refusal{413, e.what()};
    }
    std::vector<int> out;
    {
      std::lock_guard<std::mutex> use(m.use);
      out = generate_tokens(*m.lm.model, start.context, o);
    }
    metrics_.count_sentences(m.name, 1, out.size());
    return json_response(200, {{"model", m.name},
                               {"text", prompt_and_continuation(m.lm.tgt_vocab, start, out)},
                               {"tokens", out.size()}});
  }

  const ServeOptions options_;
  std::function<void(const std::string&)> log_;
  std::map<std::string, std::unique_ptr<ServedModel>> models_;
  Metrics metrics_;
};

}  // namespace

void run_server(const std::vector<ModelToServe>& models, const ServeOptions& options,
                const std::function<void(const std::string&)>& log) {
  Server server(models, options, log);
  server.serve();
}

}  // namespace yoke::serve
