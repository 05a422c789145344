// yoke's side of bench/decode.sh, the decoding benchmark in the shape of CTranslate2's: beam 4,
// batches of 32 sentences, target tokens per second, model loading excluded.
//   yoke_bench_decode --model DIR --input FILE [--sentences N] [--beam 4] [--batch 32]
//                     [--threads T] [--workers W] [--name NAME] [--src-ids-out FILE] [--hyp-ids-out FILE] [--hyp-out FILE]
//                     [--trace FILE]
// Loads the model (an fp32 or an int8 directory, as `yoke translate` does), turns the input lines
// into subword ids, sorts them by length (longest first, stable) and cuts them into batches of
// --batch sentences; then, timed, runs beam search over every batch (after one untimed warm-up
// batch, which every implementation in bench/decode.sh gets too). Subword encoding and decoding
// are outside the timing, as is loading. --workers W decodes W batches at once, each on
// T / W threads (decode/parallel_batches.h). Target tokens = the subwords of the best hypotheses,
// without eos. --src-ids-out writes the sources' ids (input order, one line each: what the
// PyTorch reference decodes), --hyp-ids-out the output ids, --hyp-out the detokenized output.
// --trace writes LibTorch's operator trace of the timed part (Chrome trace JSON; the timing then
// includes the tracer's cost, about a quarter more): bench/summarize_torch_trace.py ranks its
// operators by their own time.
// Prints one JSON object on its last line.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>
#include <torch/csrc/autograd/profiler_legacy.h>

#include "decode/parallel_batches.h"
#include "decode/search.h"
#include "decode/translation_service.h"
#include "decode/batched_decoding.h"
#include "text/corpus.h"
#include "store/model_store.h"
#include "util/thread_policy.h"

using namespace yoke;

namespace {

void write_ids(const std::string& path, const std::vector<std::vector<int>>& ids) {
  std::ofstream f(path);
  for (const auto& s : ids) {
    for (size_t i = 0; i < s.size(); ++i) f << (i ? " " : "") << s[i];
    f << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  yoke::use_fast_math_library_settings(argv);
  std::string model_dir, input, name, src_ids_out, hyp_ids_out, hyp_out, trace;
  int sentences = 0, beam = 4, batch = 32, threads = 0, workers = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--model") model_dir = v;
    else if (k == "--input") input = v;
    else if (k == "--sentences") sentences = std::atoi(v.c_str());
    else if (k == "--beam") beam = std::atoi(v.c_str());
    else if (k == "--batch") batch = std::atoi(v.c_str());
    else if (k == "--threads") threads = std::atoi(v.c_str());
    else if (k == "--workers") workers = std::atoi(v.c_str());
    else if (k == "--name") name = v;
    else if (k == "--src-ids-out") src_ids_out = v;
    else if (k == "--hyp-ids-out") hyp_ids_out = v;
    else if (k == "--hyp-out") hyp_out = v;
    else if (k == "--trace") trace = v;
    else { std::fprintf(stderr, "unknown option %s\n", k.c_str()); return 2; }
  }
  if (model_dir.empty() || input.empty()) {
    std::fprintf(stderr, "usage: yoke_bench_decode --model DIR --input FILE [--sentences N] [--beam 4] [--batch 32] ...\n");
    return 2;
  }
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  yoke::compat::set_compute_threads(threads);  // LibTorch's threads and OpenBLAS's
  try {
    auto m = load_model_for(Task::translate, model_dir);
    auto lines = read_lines(input);
    if (sentences > 0 && size_t(sentences) < lines.size()) lines.resize(size_t(sentences));
    TranslationRequest request;
    request.lines = lines;
    const auto sources = TranslationService(*m.model, m.src_vocab, m.tgt_vocab).encode(request).sources;
    if (!src_ids_out.empty()) write_ids(src_ids_out, sources);
    std::vector<size_t> order(sources.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sources[a].size() > sources[b].size(); });
    std::vector<std::vector<size_t>> batches;
    for (size_t i = 0; i < order.size(); i += size_t(batch))
      batches.emplace_back(order.begin() + long(i), order.begin() + long(std::min(order.size(), i + size_t(batch))));
    SearchOptions opts;
    opts.beam = beam;
    std::vector<std::vector<int>> out(sources.size());
    auto run = [&](const std::vector<size_t>& idx) {
      std::vector<std::vector<int>> srcs;
      for (size_t i : idx) srcs.push_back(sources[i]);
      auto hyps = translate_ids(*m.model, srcs, opts, 1 << 30);  // one batch: a budget above its tokens
      for (size_t r = 0; r < idx.size(); ++r) out[idx[r]] = std::move(hyps[r]);
    };
    run(batches.back());  // warm-up, untimed
    std::unique_ptr<torch::autograd::profiler::RecordProfile> tracer;  // writes the file when reset
    if (!trace.empty()) tracer = std::make_unique<torch::autograd::profiler::RecordProfile>(trace);
    const auto t0 = std::chrono::steady_clock::now();
    run_batches(batches.size(), workers, [&](size_t b) { run(batches[b]); });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    tracer.reset();
    int64_t tokens = 0;
    for (const auto& s : out) tokens += int64_t(s.size());
    if (!hyp_ids_out.empty()) write_ids(hyp_ids_out, out);
    if (!hyp_out.empty()) {
      std::ofstream f(hyp_out);
      for (const auto& s : out) f << m.tgt_vocab.decode(s) << "\n";
    }
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    nlohmann::json j = {{"impl", name.empty() ? (m.int8 ? "yoke-int8" : "yoke-fp32") : name},
                        {"beam", beam},
                        {"batch", batch},
                        {"sentences", sources.size()},
                        {"target_tokens", tokens},
                        {"seconds", seconds},
                        {"tokens_per_s", double(tokens) / seconds},
                        {"sentences_per_s", double(sources.size()) / seconds},
                        {"threads", threads},
                        {"workers", workers},
                        {"int8", m.int8 && m.model->uses_int8()},
                        {"blas_kernels", blas_kernel_name()},
                        {"peak_rss_mb", double(u.ru_maxrss) / 1024.0}};
    std::printf("%s\n", j.dump().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "yoke_bench_decode: %s\n", e.what());
    return 1;
  }
  return 0;
}
