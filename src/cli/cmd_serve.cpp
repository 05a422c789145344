// `yoke serve`: translation and language models behind an HTTP server with a JSON API.
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "cli/options.h"
#include "compat/torch.h"
#include "config/decoding_options.h"
#include "decode/parallel_batches.h"
#include "decode/batched_decoding.h"
#include "serve/server.h"
#include "util/error.h"
#include "util/thread_policy.h"

namespace yoke::cli {

namespace {

// The decoding options a /translate body may hold, from their table (config/decoding_options.h).
std::string translate_options_help() {
  std::ostringstream s;
  for (const auto& o : decoding_options())
    s << "       \"" << o.name << "\" (default " << o.default_value << ", " << o.range << "): " << o.help << "\n";
  return s.str();
}

}  // namespace

int cmd_serve(int argc, char** argv) {
  Command cmd("serve",
              "Serves models over HTTP with a JSON API, on 127.0.0.1 unless --host says otherwise:\n"
              "  POST /translate {\"text\": [\"…\"], \"model\": NAME, \"prefix\": [\"…\"], and decoding options:\n" +
              translate_options_help() +
              "       → {\"translations\": [{\"text\", \"score\", \"nbest\": [{\"text\", \"score\"}] when nbest > 1}]}\n"
              "  POST /generate  {\"prompt\": \"…\", \"max_tokens\": 50, \"temperature\": 0, \"top_k\", \"top_p\", \"seed\"}\n"
              "  GET  /health, GET /metrics (Prometheus text), GET / (what the server answers)\n"
              "Concurrent requests for one model are decoded together: a request waits up to\n"
              "--batch-window-ms for others, within --batch-tokens. A key an endpoint does not take is\n"
              "refused (400, naming it). Malformed requests get 400, too large\n"
              "ones 413, an unknown model 404, a full queue or more than --max-connections connections 503,\n"
              "headers or bodies slower than their timeouts 408, each with {\"error\": REASON}.\n"
              "With a token (--token, or the environment variable YOKE_SERVE_TOKEN, which `ps` does not\n"
              "show), every request must send \"Authorization: Bearer TOKEN\" (else 401): use one when\n"
              "--host is reachable from other machines.\n"
              "SIGTERM or Ctrl-C: stop accepting, answer the requests in flight, exit 0.\n\n"
              "example: yoke serve --model ende=runs/ende --model lm=runs/lm --port 8080");
  std::vector<std::string> model_args;
  std::string checkpoint, device = "cpu";
  serve::ServeOptions o;
  int threads = 0, window_ms = 5, max_queue = int(o.batching.max_queued_sentences),
      max_request_bytes = int(o.http.max_body_bytes), max_connections = int(o.http.max_connections);
  int max_sentences = int(o.max_sentences), max_subwords = int(o.max_sentence_subwords);
  double header_timeout = o.http.header_timeout.count() / 1000.0, body_timeout = o.http.body_timeout.count() / 1000.0;
  add_repeated(cmd, "--model", model_args, "[NAME=]DIR[,DIR…]",
               "a model directory to serve, named NAME in requests (default: the directory's name); several\n"
               "comma-separated translation models are served as one ensemble (equal weights)")
      ->required();
  add_checkpoint_option(cmd, checkpoint, "checkpoint file in each DIR");
  cmd.add_option("--device", device, "cpu, cuda or auto (a GPU when there is one)")->type_name("D")->capture_default_str();
  cmd.add_option("--host", o.host, "address to listen on")->type_name("HOST")->capture_default_str();
  add_value(cmd, "--port", o.port, "P", "port to listen on; 0 = any free port (logged)")->capture_default_str();
  add_value(cmd, "--batch-window-ms", window_ms, "MS", "how long a request waits for others to share its batch")
      ->capture_default_str();
  add_value(cmd, "--batch-tokens", o.batching.batch_tokens, "N", "(source subwords + 1) × beam per decoding batch")
      ->default_str(default_batch_tokens_text());
  add_value(cmd, "--max-queue", max_queue, "N", "sentences waiting at most; more get 503")->capture_default_str();
  add_value(cmd, "--max-request-bytes", max_request_bytes, "N",
            "largest request body, however it is sent (chunked too); larger get 413 as soon as they pass it")
      ->capture_default_str();
  add_value(cmd, "--max-connections", max_connections, "N",
            "connections open at once (also the listen backlog); one more gets 503 and is closed")
      ->capture_default_str();
  add_value(cmd, "--header-timeout", header_timeout, "S",
            "seconds a connection has to send a request's headers (from connecting or the last answer); then 408")
      ->capture_default_str();
  add_value(cmd, "--body-timeout", body_timeout, "S", "seconds a request has to send its body; then 408")
      ->capture_default_str();
  std::string token;
  cmd.add_option("--token", token, "bearer token every request must send (default: $YOKE_SERVE_TOKEN, else none)")
      ->type_name("TOKEN");
  cmd.add_option("--cors", o.http.cors_origin,
                 "let browser pages from this origin (http://localhost:8000, or * for any) call the server: CORS "
                 "headers on every answer, and preflight requests answered without the token; one origin (a\n"
                 "second --cors is refused: browsers accept one Access-Control-Allow-Origin)")
      ->type_name("ORIGIN")
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  add_value(cmd, "--max-sentences", max_sentences, "N", "sentences per request at most")->capture_default_str();
  add_value(cmd, "--max-sentence-subwords", max_subwords, "N", "subwords per source sentence at most")
      ->capture_default_str();
  add_value(cmd, "--max-beam", o.max_beam, "N", "largest beam a request may ask for")->capture_default_str();
  add_value(cmd, "--http-threads", o.http.handler_threads, "N",
            "requests handled at once (one waiting for its batch holds one); slow clients hold none")
      ->capture_default_str();
  int workers = 0;
  add_value(cmd, "--workers", workers, "W",
            "batches decoded at once per model on the CPU, each on --threads / W threads, a batch's\n"
            "sentences dealt over its worker's threads")
      ->default_str("one per core on the CPU, 1 on a GPU");
  CLI::Option* threads_given = add_threads_option(cmd, threads);
  if (!cmd.read(argc, argv)) return 0;
  if (*threads_given) compat::set_compute_threads(threads);
  for (auto [name, value] : {std::pair<const char*, int>{"--batch-window-ms", window_ms}, {"--max-queue", max_queue},
                             {"--max-request-bytes", max_request_bytes}, {"--max-sentences", max_sentences},
                             {"--max-sentence-subwords", max_subwords}, {"--max-beam", o.max_beam},
                             {"--http-threads", o.http.handler_threads},
                             {"--max-connections", max_connections}})
    if (value < (std::string(name) == "--batch-window-ms" ? 0 : 1))
      throw InputError(std::string(name) + " must be " + (std::string(name) == "--batch-window-ms" ? "0 or more" : "at least 1"));
  if (o.batching.batch_tokens < 0) throw InputError("--batch-tokens must be positive");
  if (workers < 0) throw InputError("--workers must be at least 1");
  if (workers == 0)
    workers = compat::device_from_name(device).is_cpu() ? default_workers(*threads_given ? threads : 0) : 1;
  o.batching.workers = workers;
  // Workers decode one thread each: OpenBLAS's own pool would run each one's products on every core.
  std::optional<BlasThreadsOverride> one_blas_thread;
  if (workers > 1) one_blas_thread.emplace(1);
  if (o.port < 0 || o.port > 65535) throw InputError("--port must be in [0, 65535]");
  o.device = device;
  o.batching.window = std::chrono::milliseconds(window_ms);
  o.batching.max_queued_sentences = size_t(max_queue);
  o.http.max_body_bytes = size_t(max_request_bytes);
  o.http.max_connections = size_t(max_connections);
  for (auto [name, seconds] : {std::pair<const char*, double>{"--header-timeout", header_timeout}, {"--body-timeout", body_timeout}})
    if (!(seconds >= 0.01 && seconds <= 86400)) throw InputError(std::string(name) + " must be in [0.01, 86400] seconds");
  o.http.header_timeout = std::chrono::milliseconds(int64_t(header_timeout * 1000));
  o.http.body_timeout = std::chrono::milliseconds(int64_t(body_timeout * 1000));
  if (token.empty())
    if (const char* from_env = std::getenv("YOKE_SERVE_TOKEN")) token = from_env;
  for (unsigned char c : token)
    if (c <= ' ' || c >= 127) throw InputError("the token (--token or YOKE_SERVE_TOKEN) must be printable ASCII without spaces");
  o.http.bearer_token = token;
  for (unsigned char c : o.http.cors_origin)  // it goes into a header as it is
    if (c <= ' ' || c >= 127) throw InputError("--cors must be an origin such as http://localhost:8000, or *");
  o.max_sentences = size_t(max_sentences);
  o.max_sentence_subwords = size_t(max_subwords);
  std::vector<serve::ModelToServe> models;
  for (const auto& arg : model_args) {
    serve::ModelToServe m;
    const auto eq = arg.find('=');
    std::stringstream dirs(eq == std::string::npos ? arg : arg.substr(eq + 1));
    for (std::string d; std::getline(dirs, d, ',');)
      if (!d.empty()) m.dirs.push_back(d);
    if (m.dirs.empty()) throw InputError("--model " + arg + " names no directory");
    m.name = eq == std::string::npos ? "" : arg.substr(0, eq);
    if (m.name.empty()) {
      std::string d = m.dirs.front();
      while (d.size() > 1 && d.back() == '/') d.pop_back();
      m.name = d.substr(d.find_last_of('/') == std::string::npos ? 0 : d.find_last_of('/') + 1);
    }
    m.checkpoint = checkpoint;
    for (const auto& other : models)
      if (other.name == m.name) throw InputError("two models are named '" + m.name + "'; name them: --model NAME=DIR");
    models.push_back(m);
  }
  serve::run_server(models, o, [](const std::string& line) { std::cerr << "yoke serve: " << line << std::endl; });
  return 0;
}

}  // namespace yoke::cli
