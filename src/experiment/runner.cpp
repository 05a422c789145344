#include "experiment/runner.h"

#include <csignal>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "analysis/analyze_model.h"
#include "analysis/gradient_shares.h"
#include "decode/parallel_batches.h"
#include "service/translator.h"
#include "decode/batched_decoding.h"
#include "eval/score_files.h"
#include "eval/bleu_stats_file.h"
#include "eval/sentence_nll_file.h"
#include "experiment/convergence.h"
#include "experiment/experiment_dir.h"
#include "experiment/experiment_record.h"
#include "experiment/grid.h"
#include "experiment/pictures.h"
#include "lm/perplexity.h"
#include "report/report.h"
#include "report/svg_chart.h"
#include "store/model_files.h"
#include "text/corpus.h"
#include "text/data_meta.h"
#include "store/average.h"
#include "train/local_launch.h"
#include "store/model_store.h"
#include "train/trainer.h"
#include "util/atomic_file.h"
#include "util/dir_lock.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/progress.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

struct TestSet {
  std::string name, src, ref;  // raw source and reference text files
};

// The test sets `yoke prepare --test NAME:SRC:REF` put into a data directory.
std::vector<TestSet> test_sets(const std::string& data_dir) {
  std::vector<TestSet> out;
  const auto meta = DataMeta::read(data_dir);
  for (const auto& s : meta.tests())
    if (!s.src_text.empty()) out.push_back({s.test_name(), meta.path(s.src_text), meta.path(s.tgt_text)});
  return out;
}

// Translates and scores every test set of the run's data with the finished model.
std::map<std::string, TestResult> translate_and_score(const Grid& grid, const Config& cfg, const RunDir& dir,
                                                     const Translator& translator, std::ostream& log) {
  SearchOptions so;
  so.beam = grid.beam;
  so.lenpen = grid.lenpen;
  so.max_len_a = cfg.max_len_a;
  so.max_len_b = cfg.max_len_b;
  // As `yoke translate` decodes: on the CPU a worker per thread, batches by the one rule
  // (decode/batched_decoding.h); the translations are the same.
  so.workers = default_workers(cfg.threads);
  std::map<std::string, TestResult> tests;
  for (const auto& t : test_sets(cfg.data)) {
    TranslationRequest request;
    request.lines = read_lines(t.src);
    request.search = so;
    Progress bar("translate " + t.name, double(request.lines.size()), "sent", 30.0);
    TranslationTimings timings;
    std::vector<std::string> hyp;
    for (const auto& tr : translator.translate(request, {[&](size_t d) { bar.update(double(d)); }, {}}, &timings))
      hyp.push_back(tr.hypotheses.front().text);
    const double seconds = timings.seconds();
    bar.finish();
    std::string text;
    for (const auto& h : hyp) text += h + "\n";
    const auto hyp_path = dir.hypotheses(t.name);
    write_file_atomically(hyp_path.string(), text);
    auto s = score_files(hyp_path.string(), t.ref, false);
    // Per-sentence BLEU statistics: what the report's test resamples, and what lets the folder be
    // reported again without the references.
    const auto stats_path = dir.bleu_stats(t.name);
    write_bleu_stats(stats_path.string(), bleu_stats_of(hyp, read_lines(t.ref), hyp_path.string()));
    TestResult& r = tests[t.name];
    for (const char* metric : {"bleu", "chrf", "chrf_pp"}) r.scores[metric] = s.at(metric).get<double>();
    r.decoding = {{"seconds", seconds}, {"beam", grid.beam}};
    r.hyp = hyp_path.filename().string();
    r.bleu_stats = stats_path.filename().string();
    r.ref = t.ref;
    log << "  " << t.name << ": BLEU " << s.at("bleu").get<double>() << ", chrF " << s.at("chrf").get<double>() << " (beam "
        << grid.beam << ", " << format_duration(seconds) << ")" << std::endl;
  }
  return tests;
}

// A language model's scores: perplexity of every test text of its data, scored as it was trained,
// and each line's NLL (nll.<test>.tsv.gz), from which the report counts the test set's noise.
std::map<std::string, TestResult> perplexity_of_tests(const Config& cfg, const LoadedModel& m, const RunDir& dir,
                                                     std::ostream& log) {
  const auto meta = DataMeta::read(cfg.data);
  std::map<std::string, TestResult> tests;
  for (const auto& s : meta.tests()) {
    // An LM data directory has the text; an LM on a parallel corpus reads its target side.
    const std::string path = meta.path(s.text.empty() ? s.tgt_text : s.text);
    const auto t0 = std::chrono::steady_clock::now();
    const Perplexity p = text_perplexity(*m.model, m.tgt_vocab, read_lines(path), cfg.lm_block, cfg.lm_block);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string name = s.test_name();
    const auto nll_path = dir.sentence_nll(name);
    SentenceNll lines;
    lines.nll = p.line_nll;
    lines.subwords.assign(p.line_subwords.begin(), p.line_subwords.end());
    lines.words.assign(p.line_words.begin(), p.line_words.end());
    write_sentence_nll(nll_path.string(), lines);
    TestResult& r = tests[name];
    r.scores = {{"ppl", p.per_subword()}, {"ppl_word", p.per_word()}};
    r.nll = nll_path.filename().string();
    r.scoring = {{"text", path}, {"subwords", p.subwords}, {"words", p.words}, {"block", p.block},
                 {"stride", p.stride}, {"how", p.scoring()}, {"seconds", seconds}};
    log << "  " << name << ": perplexity " << p.per_subword() << " per subword, " << p.per_word() << " per word ("
        << p.scoring() << ")" << std::endl;
  }
  return tests;
}

// yoke analyze's files for the model, plus the gradient-path curve when training logged one.
nlohmann::json analyze_run(const std::string& model_dir, const LoadedModel& m, const fs::path& out, std::ostream& log) {
  ModelAnalysis result = analyze_model(m, out.string());
  if (draw_gradient_paths((fs::path(model_dir) / kMetricsLog).string(), (out / "grad_paths.svg").string()))
    result.pictures.push_back("grad_paths.svg");
  log << "  analysis: " << out.string() << std::endl;
  return to_json(result);  // carried into result.json as analysis.json holds it
}

// `yoke train --config <the run's config> --nproc N`, as a user would type it: the workers must be
// processes of their own (one Gloo rank each), and this process stays the experiment's. What
// the run reports comes from rank 0's metrics.jsonl.
TrainResult train_on_local_workers(const Config& cfg, int nproc, const fs::path& run_dir, std::ostream& log) {
  const auto conf = run_dir / "train.conf";
  write_file_atomically(conf.string(), "# written by yoke experiment for this run\n" + config_file_text(cfg));
  log << "training on " << nproc << " local workers: yoke train --config " << conf.string() << " --nproc " << nproc
      << std::endl;
  const int rc = run_local_workers(nproc, {"yoke", "train", "--config", conf.string()}, log);
  TrainResult r;
  if (rc == 128 + SIGINT || rc == 128 + SIGTERM) {
    r.stop_reason = "interrupted";
    return r;
  }
  if (rc != 0)
    throw RunError("training " + run_dir.string() + " on " + std::to_string(nproc) + " workers failed (exit status " +
                   std::to_string(rc) + "); its log is above, its checkpoints in " + cfg.save_dir);
  for (const auto& end : read_json_lines((fs::path(cfg.save_dir) / kMetricsLog).string(), "end")) {
    r.updates = end.at("update");
    r.epochs = end.at("epoch");
    r.stop_reason = end.at("reason");
    r.tokens_per_s = end.at("tokens_per_s");
    r.train_seconds = end.at("elapsed_s");
    r.comm_wait_s = end.value("comm_wait_s", 0.0);
  }
  if (r.stop_reason.empty()) throw RunError(cfg.save_dir + "/metrics.jsonl: the workers ended without an end record");
  return r;
}

// One (variant, seed): returns false when interrupted.
bool run_one(const Grid& grid, const GridVariant& v, int seed, const ExperimentOptions& o, std::ostream& log) {
  const RunDir dir(o.out_dir, v.name, seed);
  fs::create_directories(dir.path());
  Config cfg = grid.run_config(v, seed, o.overrides);
  cfg.save_dir = dir.model().string();
  if (o.threads > 0) cfg.threads = o.threads;
  const TrainResult tr = o.nproc > 1 ? train_on_local_workers(cfg, o.nproc, dir.path(), log)
                                     : train(cfg, log, greedy_validation_decode);
  if (tr.stop_reason == "interrupted") return false;

  std::string checkpoint;
  if (grid.average_last > 1) {
    const auto used = average_checkpoints(cfg.save_dir, grid.average_last, kCheckpointAveraged);
    log << "  averaged the last " << used.size() << " checkpoints" << std::endl;
    checkpoint = kCheckpointAveraged;
  }
  fill_vocab_sizes(cfg);
  // Loaded once, into the translator `yoke translate` would hold (service/translator.h): counted,
  // then used by the tests and the analysis.
  const Translator translator(ensemble_of_one(load_model(cfg.save_dir, checkpoint, name_of(cfg.device))),
                              TranslatorSource{});
  const LoadedModel& m = translator.first();
  const int64_t params = count_parameters(*m.model);
  const auto counts = count_embeddings(m.model->embeddings->spec());

  RunResult result;
  result.variant = v.name;
  result.seed = seed;
  result.params = double(params);
  result.emb = double(counts.emb);
  result.red = counts.red();
  result.tokens_per_s = tr.tokens_per_s;
  result.wall_s = tr.train_seconds;
  result.updates = double(tr.updates);
  result.stop_reason = tr.stop_reason;
  result.config = cfg.to_json();
  result.checkpoint = checkpoint.empty() ? "best" : checkpoint;
  result.emb_fraction = double(counts.emb) / double(params);
  result.emb_fraction_closed_form = embedding_fraction_closed_form(cfg);
  if (auto g = summarize_gradient_shares(read_gradient_shares(dir.metrics().string()))) {
    result.grad_share_output_early = g->early;
    result.grad_share_output_late = g->late;
  }
  result.tests = cfg.task == Task::lm ? perplexity_of_tests(cfg, m, dir, log) : translate_and_score(grid, cfg, dir, translator, log);
  if (grid.analyze) result.analysis = analyze_run(cfg.save_dir, m, dir.analysis(), log);
  // Written last: its presence is what marks the run as done.
  write_json(dir.result().string(), run_result_json(result));
  return true;
}

// The report's metric: perplexity for language models, BLEU for translation.
std::string metric_of(const Grid& grid, const std::vector<std::string>& overrides) {
  return grid.run_config(grid.variants.front(), grid.seeds.front(), overrides).task == Task::lm ? "ppl" : "bleu";
}

// The grid with only the named variants (all when none are named); the baseline stays when
// selected, else the first selected variant takes its place.
Grid select_variants(Grid grid, const std::vector<std::string>& names, const std::string& grid_path) {
  if (names.empty()) return grid;
  std::vector<GridVariant> kept;
  for (const auto& name : names) {
    auto it = std::find_if(grid.variants.begin(), grid.variants.end(), [&](const GridVariant& v) { return v.name == name; });
    if (it == grid.variants.end()) {
      std::string known;
      for (const auto& v : grid.variants) known += (known.empty() ? "" : ", ") + v.name;
      throw InputError(grid_path + ": no variant '" + name + "' (variants: " + known + ")");
    }
    kept.push_back(*it);
  }
  grid.variants = kept;
  if (std::none_of(kept.begin(), kept.end(), [&](const GridVariant& v) { return v.name == grid.baseline; }))
    grid.baseline = kept.front().name;
  return grid;
}

// The grid with only the named seeds (all when none are named), each of which it must list; what
// scripts/run-grid-parallel.sh gives each of its processes, so that every part reads the grid itself.
Grid select_seeds(Grid grid, const std::vector<int>& seeds, const std::string& grid_path) {
  if (seeds.empty()) return grid;
  if (grid.auto_seeds.on())
    throw InputError(grid_path + ": --seeds picks from a list of seeds; this grid adds them as it goes (seeds = auto)");
  for (int s : seeds)
    if (std::find(grid.seeds.begin(), grid.seeds.end(), s) == grid.seeds.end())
      throw InputError(grid_path + ": --seeds " + std::to_string(s) + " is not one of the grid's seeds");
  grid.seeds = seeds;
  return grid;
}

// The grid as the options select it, and the design its registration fixes (null without one),
// which is the whole grid's, whatever part of it this call runs.
std::pair<Grid, nlohmann::json> selected_grid(const std::string& grid_path, const std::vector<std::string>& overrides,
                                              const std::vector<std::string>& variants, const std::vector<int>& seeds) {
  const Grid whole = load_grid(grid_path, overrides);
  nlohmann::json design = whole.registration.on() ? registered_design(whole, overrides) : nlohmann::json();
  return {select_seeds(select_variants(whole, variants, grid_path), seeds, grid_path), design};
}

}  // namespace

// What the report is built from: the folder's experiment.json and its finished runs.
ReportInput report_input(const std::string& out_dir) {
  const nlohmann::json record = read_experiment_record(out_dir);
  ReportInput in;
  in.title = record.at("title").get<std::string>();
  in.overrides = record.value("overrides", std::vector<std::string>{});
  in.baseline = record.at("baseline").get<std::string>();
  in.metric = record.at("metric").get<std::string>();
  in.expected = record.value("expected", std::map<std::string, double>{});
  if (record.contains("paper")) {
    in.paper = record["paper"].value("rows", std::map<std::string, std::vector<std::string>>{});
    in.paper_source = record["paper"].value("source", std::string());
  }
  in.variant_order = record.at("variants").get<std::vector<std::string>>();
  if (record.contains("sequential")) in.alpha = record["sequential"].at("alpha").get<double>();
  if (record.contains("registration")) {
    const auto& reg = record["registration"];
    const auto& design = reg.at("design");
    try {
      in.registration = registration_from_json(design.at("registration"));
    } catch (const std::exception& e) {
      throw input_error(experiment_record_path(out_dir).string(), 0, std::string("registration: ") + e.what());
    }
    in.registered_seeds = design.at("seeds").get<std::vector<int>>();
    const auto& when = reg.value("recorded", nlohmann::json::object());
    in.registration_recorded = when.value("date", std::string("?")) + ", yoke " + when.value("commit", std::string("?"));
  }
  for (const auto& v : in.variant_order) {
    for (int seed : record.at("seeds").get<std::vector<int>>()) {
      const RunDir run(out_dir, v, seed);
      if (!run.finished()) continue;
      const fs::path& dir = run.path();
      RunResult r = run_result_from_json(read_json(run.result().string()), run.result().string());
      r.variant = v;  // the folder's names are the ones the record lists
      r.seed = seed;
      r.convergence = convergence_of(run.metrics().string());
      for (const auto& [name, t] : r.tests) {
        if (!t.bleu_stats.empty()) r.stats_files[name] = (dir / t.bleu_stats).string();
        if (!t.nll.empty()) r.nll_files[name] = (dir / t.nll).string();
        if (t.hyp.empty()) continue;  // language models have no hypotheses
        if (t.ref.empty()) throw InputError(run.result().string() + ": test " + name + " has hypotheses but no \"ref\"");
        r.hyp_files[name] = (dir / t.hyp).string();
        in.ref_files.emplace(name, t.ref);
      }
      in.runs.push_back(std::move(r));
    }
  }
  if (in.runs.empty()) throw InputError(out_dir + ": no finished runs to report");
  const auto& calls = record.value("invocations", nlohmann::json::array());
  for (const auto& call : calls)
    in.provenance.push_back("Ran " + call.value("command", std::string("?")) + " (yoke " +
                            call.value("commit", std::string("?")) + ", " + call.value("machine", std::string("?")) +
                            ", started " + call.value("started", std::string("?")) + ").");
  if (record.contains("sequential")) {
    const auto& q = record["sequential"];
    char level[32];
    std::snprintf(level, sizeof level, "%.4g", in.alpha);
    in.provenance.push_back("Seeds added one at a time (seeds = auto " + std::to_string(q.value("min", 0)) + ".." +
                            std::to_string(q.value("max", 0)) + ") while a comparison was undecided; verdicts at level " +
                            level + " (0.05 over " + std::to_string(q.value("looks", 0)) +
                            " looks, Bonferroni). " + q.value("stopped", std::string("Not finished.")));
  }
  return in;
}

void write_experiment_report(const std::string& out_dir, std::ostream& log) {
  ReportInput in = report_input(out_dir);
  in.pictures = draw_experiment_pictures(in, out_dir);
  write_report(out_dir, in);
  log << "report: " << (fs::path(out_dir) / "report.html").string() << " (" << in.runs.size() << " runs; also report.md, .csv, .json)"
      << std::endl;
}

void write_experiment_report(const std::string& grid_path, const std::string& out_dir,
                             const std::vector<std::string>& overrides, std::ostream& log,
                             const std::vector<std::string>& variants, const std::vector<int>& seeds,
                             const std::string& command) {
  if (!fs::exists(experiment_record_path(out_dir))) {
    const auto [grid, design] = selected_grid(grid_path, overrides, variants, seeds);
    record_invocation(grid, grid_path, out_dir, overrides, command, metric_of(grid, overrides), design);
  }
  write_experiment_report(out_dir, log);
}

void export_experiment(const std::string& out_dir, const std::string& dest, std::ostream& log) {
  const nlohmann::json record = read_experiment_record(out_dir);
  const fs::path from(out_dir), to(dest);
  fs::create_directories(to);
  size_t bytes = 0, files = 0;
  auto copy = [&](const fs::path& rel) {
    if (!fs::exists(from / rel)) return;
    fs::create_directories((to / rel).parent_path());
    copy_file_atomically((from / rel).string(), (to / rel).string());
    bytes += fs::file_size(to / rel);
    ++files;
  };
  copy(experiment_record_path(""));
  for (const auto& v : record.at("variants").get<std::vector<std::string>>()) {
    bool first = true;  // the report shows the analysis pictures of each variant's first seed only
    for (int seed : record.at("seeds").get<std::vector<int>>()) {
      const RunDir run("", v, seed);  // paths relative to the experiment's folder
      if (!RunDir(from, v, seed).finished()) continue;
      copy(run.result());
      copy(run.metrics());
      const std::string result = (from / run.result()).string();
      for (const auto& [name, t] : run_result_from_json(read_json(result), result).tests)
        for (const std::string* file : {&t.hyp, &t.bleu_stats, &t.nll})
          if (!file->empty()) copy(run.path() / *file);
      if (fs::is_directory(from / run.analysis()))
        for (const auto& f : fs::directory_iterator(from / run.analysis()))
          if (f.path().extension() == ".json" || (first && f.path().extension() == ".svg"))
            copy(run.analysis() / f.path().filename());
      first = false;
    }
  }
  log << "export: " << files << " files, " << bytes / 1024 << " KiB into " << dest << std::endl;
  write_experiment_report(dest, log);
}

namespace {

// The variants whose comparison with the baseline is not decided on some test set (report/verdict.h's
// decided(): the interval at the sequential level excludes 0 or the expected effect).
std::vector<std::string> undecided_variants(const ReportInput& in) {
  std::vector<std::string> out;
  for (const VariantEntry& e : build_report(in)) {
    if (e.baseline) continue;
    bool all = true;
    for (const auto& [name, t] : e.tests) all = all && t.verdict && t.verdict->decided;
    if (!all) out.push_back(e.variant);
  }
  return out;
}

// seeds = auto MIN..MAX: after MIN seeds, look at every comparison; while some are undecided and
// fewer than MAX seeds ran, train one more seed of the baseline and of each undecided variant, and
// look again. Each look tests at 0.05 / (MAX − MIN + 1), so that over every look the chance of a
// false decision stays within 5% (Bonferroni's bound on the looks; simple, and conservative).
int add_seeds_until_decided(const Grid& grid, const ExperimentOptions& o, std::ostream& log) {
  for (int k = grid.auto_seeds.min;; ++k) {
    const auto undecided = undecided_variants(report_input(o.out_dir));
    std::string stopped;
    if (undecided.empty())
      stopped = "Stopped at " + std::to_string(k) + " seeds: every comparison decided.";
    else if (k >= grid.auto_seeds.max)
      stopped = "Stopped at the maximum, " + std::to_string(k) + " seeds, with " + std::to_string(undecided.size()) +
                " comparison" + (undecided.size() == 1 ? "" : "s") + " undecided.";
    record_round(o.out_dir, k, undecided, stopped);
    if (!stopped.empty()) {
      log << "\n" << stopped << std::endl;
      return 0;
    }
    std::string names;
    for (const auto& v : undecided) names += (names.empty() ? "" : ", ") + v;
    log << "\nafter " << k << " seeds undecided: " << names << " — seed " << k + 1 << " for them and the baseline"
        << std::endl;
    for (const auto& v : grid.variants) {
      if (v.name != grid.baseline && std::find(undecided.begin(), undecided.end(), v.name) == undecided.end()) continue;
      if (RunDir(o.out_dir, v.name, k + 1).finished()) continue;
      log << "\n[seed " << k + 1 << "] variant " << v.name << std::endl;
      if (!run_one(grid, v, k + 1, o, log)) {
        log << "experiment interrupted: run the same command again to continue" << std::endl;
        return 128 + stop_signal();
      }
      if (stop_requested()) return 128 + stop_signal();
    }
  }
}

// Finished language-model runs written before runs kept each line's NLL: scored again from their
// model where it is still there, so that their report counts the test set's noise. The perplexity
// found again must be the one recorded (the same model, text and scoring), or the run is left as it was.
void add_missing_sentence_nll(const std::string& out_dir, std::ostream& log) {
  const nlohmann::json record = read_experiment_record(out_dir);
  for (const auto& v : record.at("variants").get<std::vector<std::string>>())
    for (int seed : record.at("seeds").get<std::vector<int>>()) {
      const RunDir run(out_dir, v, seed);
      const fs::path& dir = run.path();
      const fs::path result_path = run.result();
      if (!run.finished()) continue;
      RunResult result = run_result_from_json(read_json(result_path.string()), result_path.string());
      bool missing = false;
      for (const auto& [name, t] : result.tests) missing = missing || (t.scores.count("ppl") && t.nll.empty());
      if (!missing) continue;
      Config cfg = Config::from_json(result.config);
      cfg.save_dir = run.model().string();
      const std::string checkpoint = result.checkpoint.empty() || result.checkpoint == "best" ? "" : result.checkpoint;
      const fs::path file = fs::path(cfg.save_dir) / (checkpoint.empty() ? kCheckpointBest : checkpoint);
      if (!fs::exists(file)) {
        log << "  " << dir.string() << ": no per-line NLL, and its model " << file.string()
            << " is gone: its perplexity comparisons count the seeds only" << std::endl;
        continue;
      }
      log << "  " << dir.string() << ": scoring each test line again for its NLL" << std::endl;
      const LoadedModel m = load_model(cfg.save_dir, checkpoint, name_of(cfg.device));
      const auto again = perplexity_of_tests(cfg, m, run, log);
      for (auto& [name, t] : result.tests) {
        const auto a = again.find(name);
        if (a == again.end()) continue;
        const double before = result.score(name, "ppl").value_or(0.0), now = a->second.scores.at("ppl");
        if (std::fabs(now - before) > 1e-9 * before)
          throw RunError(dir.string() + ": test " + name + " scores perplexity " + std::to_string(now) +
                         " now against the recorded " + std::to_string(before) + "; its model or text has changed");
        t.nll = a->second.nll;
      }
      write_json(result_path.string(), run_result_json(result));
    }
}

}  // namespace

int run_experiment(const ExperimentOptions& o, std::ostream& log) {
  const auto [grid, design] = selected_grid(o.grid_path, o.overrides, o.variants, o.seeds);
  fs::create_directories(o.out_dir);
  const DirLock lock(lock_file_in(o.out_dir), o.out_dir);  // one runner per experiment
  record_invocation(grid, o.grid_path, o.out_dir, o.overrides, o.command, metric_of(grid, o.overrides), design);
  add_missing_sentence_nll(o.out_dir, log);
  const size_t total = grid.variants.size() * grid.seeds.size();
  size_t index = 0, done_before = 0, ran = 0;
  double ran_seconds = 0;
  for (const auto& v : grid.variants)
    for (int seed : grid.seeds) done_before += RunDir(o.out_dir, v.name, seed).finished();
  log << "experiment: " << grid.title << " — " << grid.variants.size() << " variants × " << grid.seeds.size() << " seeds = "
      << total << " runs, " << done_before << " already done" << std::endl;
  // Seed-major: after the first pass every variant has a result, so a stopped experiment
  // already reports the whole table.
  for (int seed : grid.seeds) {
    for (const auto& v : grid.variants) {
      ++index;
      if (RunDir(o.out_dir, v.name, seed).finished()) continue;
      const size_t left = total - done_before - ran;
      log << "\n[run " << index << "/" << total << "] variant " << v.name << ", seed " << seed;
      if (ran > 0) log << " — ETA of the experiment " << format_duration(ran_seconds / double(ran) * double(left));
      log << std::endl;
      const auto t0 = std::chrono::steady_clock::now();
      if (!run_one(grid, v, seed, o, log)) {
        log << "experiment interrupted: run the same command again to continue" << std::endl;
        return 128 + stop_signal();
      }
      ran_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++ran;
      if (stop_requested()) return 128 + stop_signal();
    }
  }
  if (grid.auto_seeds.on()) {
    const int rc = add_seeds_until_decided(grid, o, log);
    if (rc != 0) return rc;
  }
  write_experiment_report(o.out_dir, log);
  return 0;
}

}  // namespace yoke
