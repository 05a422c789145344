// `yoke experiment` end to end on the tiny grid: every run done once, a report whose numbers are
// the runs' own, and an interrupted experiment that resumes without redoing finished runs.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "embed/sharing.h"
#include "experiment/experiment_record.h"
#include "experiment/grid.h"
#include "experiment/runner.h"
#include "model/transformer.h"
#include "store/model_store.h"
#include "util/error.h"
#include "margin.h"

using namespace yoke;
using namespace yoke::test;

namespace {

const std::string kGrid = std::string(YOKE_SOURCE_DIR) + "/configs/grids/tiny.grid";

std::vector<std::string> experiment_args(const fs::path& out) {
  return {YOKE_BINARY, "experiment", "--grid", kGrid, "--set", "data=" + data_dir().string(), "--out", out.string()};
}

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(slurp(p)); }

// Everything of a report that does not depend on the clock.
nlohmann::json without_timings(nlohmann::json report) {
  for (auto& v : report) { v.erase("tokens_per_s"); v.erase("wall_s"); }
  return report;
}

}  // namespace

TEST(Experiment, TinyGridRunsReportsAndResumes) {
  const auto out = work_dir() / "experiment";
  ASSERT_EQ(run(experiment_args(out), work_dir() / "experiment.log"), 0) << slurp(work_dir() / "experiment.log");
  for (const char* f : {"report.md", "report.csv", "report.json", "report.html", "curves.svg", "scores.svg",
                        "grad_share.svg"})
    EXPECT_TRUE(fs::exists(out / f)) << f;

  // The table holds each variant's mean over its seeds of the runs' own numbers.
  const auto report = read_json(out / "report.json").at("variants");
  ASSERT_EQ(report.size(), 2u);
  for (const auto& entry : report) {
    const std::string v = entry.at("variant");
    EXPECT_EQ(entry.at("seeds").get<int>(), 2) << v;
    double bleu = 0;
    for (int seed : {1, 2}) {
      const auto r = read_json(out / "runs" / v / ("seed" + std::to_string(seed)) / "result.json");
      bleu += r.at("tests").at("toy").at("bleu").get<double>() / 2;
      EXPECT_EQ(r.at("params"), entry.at("params")) << v;
      EXPECT_TRUE(r.at("analysis").contains("identity")) << v;
      EXPECT_EQ(r.at("updates").get<int>(), 12) << v;
      // The run's word-parameter share and its gradient-path shares (the grid logs them).
      YOKE_EXPECT_NEAR(r.at("emb_fraction").get<double>(), r.at("emb").get<double>() / r.at("params").get<double>(), 1e-12);
      EXPECT_FALSE(r.contains("emb_fraction_closed_form")) << "a translation model has no closed form here";
      for (const char* k : {"grad_share_output_early", "grad_share_output_late"}) {
        EXPECT_GT(r.at(k).get<double>(), 0.0) << v << " " << k;
        EXPECT_LT(r.at(k).get<double>(), 1.0) << v << " " << k;
      }
    }
    EXPECT_TRUE(entry.at("grad_share_output_early").is_number()) << v;
    YOKE_EXPECT_NEAR(entry.at("tests").at("toy").at("bleu").at("mean").get<double>(), bleu, 1e-9) << v;
    EXPECT_EQ(entry.at("baseline").get<bool>(), v == "dot");
  }
  const auto html = slurp(out / "report.html");
  EXPECT_NE(html.find("<table"), std::string::npos);
  EXPECT_NE(html.find("curves.svg"), std::string::npos);
  EXPECT_NE(html.find("norms.svg"), std::string::npos);
  EXPECT_NE(html.find("grad_share.svg"), std::string::npos);
  EXPECT_NE(html.find("output share of"), std::string::npos);  // the training table's column

  // Run again: nothing to do, the same report.
  const auto before = fs::last_write_time(out / "runs" / "dot" / "seed1" / "result.json");
  ASSERT_EQ(run(experiment_args(out), work_dir() / "experiment2.log"), 0);
  EXPECT_NE(slurp(work_dir() / "experiment2.log").find("4 already done"), std::string::npos)
      << slurp(work_dir() / "experiment2.log");
  EXPECT_EQ(fs::last_write_time(out / "runs" / "dot" / "seed1" / "result.json"), before);
  EXPECT_EQ(without_timings(read_json(out / "report.json").at("variants")), without_timings(report));

  // Exported as a folder to commit (no checkpoints), the report is rebuilt from its files alone:
  // the same bytes as the runner's, and again the same after the report files are deleted.
  const auto exported = work_dir() / "exported";
  ASSERT_EQ(run({YOKE_BINARY, "report", out.string(), "--export", exported.string()}, work_dir() / "export.log"), 0)
      << slurp(work_dir() / "export.log");
  EXPECT_TRUE(fs::exists(exported / "experiment.json"));
  EXPECT_TRUE(fs::exists(exported / "runs" / "dot" / "seed1" / "bleu.toy.tsv.gz"));
  EXPECT_TRUE(fs::exists(exported / "runs" / "dot" / "seed1" / "model" / "metrics.jsonl"));
  for (const auto& f : fs::recursive_directory_iterator(exported))
    EXPECT_NE(f.path().extension(), ".ykp") << "a checkpoint was exported: " << f.path();
  std::map<std::string, std::string> exported_bytes;
  for (const char* f : {"report.md", "report.csv", "report.json", "report.html"}) {
    exported_bytes[f] = slurp(exported / f);
    EXPECT_EQ(exported_bytes[f], slurp(out / f)) << f << " differs from the runner's";
    fs::remove(exported / f);
  }
  ASSERT_EQ(run({YOKE_BINARY, "report", exported.string()}, work_dir() / "rereport.log"), 0)
      << slurp(work_dir() / "rereport.log");
  for (const auto& [f, bytes] : exported_bytes) EXPECT_EQ(slurp(exported / f), bytes) << f << " was not rebuilt byte for byte";
  const auto md = slurp(exported / "report.md");
  EXPECT_NE(md.find("## Runs"), std::string::npos) << md;  // per-run convergence
  EXPECT_NE(md.find("yoke experiment --grid"), std::string::npos) << md;  // the command that ran
  // The claims index's lines come from report.json.
  const std::string verdicts = output_of({YOKE_BINARY, "report", exported.string(), "--verdicts"});
  EXPECT_EQ(verdicts.rfind("- cosine vs dot, toy: ", 0), 0u) << verdicts;
  const std::string said = read_json(exported / "report.json")["variants"][1]["tests"]["toy"]["verdict"]["verdict"];
  EXPECT_NE(verdicts.find(": " + said + " \xE2\x80\x94 "), std::string::npos) << verdicts;

  // The seed paper's rows (grid key `paper`, kept in experiment.json) get a table beside the counts.
  const auto with_paper = work_dir() / "exported-paper";
  fs::copy(exported, with_paper, fs::copy_options::recursive);
  auto record = read_json(with_paper / "experiment.json");
  record["paper"] = {{"rows", {{"dot", {"98.7M", "54.5M", "0%", "27.62"}}}}, {"source", "Table 2"}};
  std::ofstream(with_paper / "experiment.json") << record.dump(1);
  ASSERT_EQ(run({YOKE_BINARY, "report", with_paper.string()}, work_dir() / "paper.log"), 0) << slurp(work_dir() / "paper.log");
  const auto paper_md = slurp(with_paper / "report.md");
  EXPECT_NE(paper_md.find("## Beside the seed paper (Table 2)"), std::string::npos) << paper_md;
  EXPECT_NE(paper_md.find("| 98.7M | 54.5M | 0% | 27.62 |"), std::string::npos) << paper_md;
  EXPECT_EQ(md.find("Beside the seed paper"), std::string::npos) << "a grid without `paper` has no such table";

  // Killed after its first run, the experiment resumes without redoing it and ends with the same numbers.
  const auto out2 = work_dir() / "experiment-killed";
  // Killed as the second run (cosine, seed 1) makes its folder, which it does as it starts: a run
  // takes ~0.1 s here and the last three with the report 0.34 s, so a fixed wait after the first
  // result (300 ms) once let the experiment finish before the kill. Polling can still be late on a
  // loaded machine (ctest -j3 on two cores): a kill that came after the second run's result is
  // tried again in a new folder, up to five times.
  const auto first = out2 / "runs" / "dot" / "seed1" / "result.json", second = out2 / "runs" / "cosine" / "seed1";
  for (int attempt = 1;; ++attempt) {
    fs::remove_all(out2);
    const pid_t pid = spawn(experiment_args(out2), work_dir() / "killed.log");
    for (int i = 0; i < 60000 && !fs::exists(second); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    kill(pid, SIGKILL);
    wait_child(pid, nullptr, 0);
    ASSERT_TRUE(fs::exists(first)) << slurp(work_dir() / "killed.log");
    ASSERT_TRUE(fs::exists(second)) << slurp(work_dir() / "killed.log");
    if (!fs::exists(second / "result.json")) break;
    ASSERT_LT(attempt, 5) << "the second run ended before the kill five times";
  }
  ASSERT_FALSE(fs::exists(out2 / "report.json"));
  const auto first_time = fs::last_write_time(first);
  ASSERT_EQ(run(experiment_args(out2), work_dir() / "resumed.log"), 0) << slurp(work_dir() / "resumed.log");
  EXPECT_NE(slurp(work_dir() / "resumed.log").find("already done"), std::string::npos);
  EXPECT_EQ(fs::last_write_time(first), first_time);
  EXPECT_EQ(without_timings(read_json(out2 / "report.json").at("variants")), without_timings(report));
}

TEST(Experiment, CompareOfIdenticalSystemsIsNotSignificant) {
  const auto hyp = work_dir() / "same.txt";
  std::ofstream(hyp) << "a small dog runs\nthe cat sleeps here\ntwo men talk\n";
  auto j = nlohmann::json::parse(output_of({YOKE_BINARY, "compare", "--hyp-a", hyp.string(), "--hyp-b", hyp.string(),
                                            "--ref", hyp.string(), "--json"}));
  // One file a system: only the sentence-only bootstrap, said so; two-sided, every resample ties.
  YOKE_EXPECT_NEAR(j.at("p_value").get<double>(), 1.0, 1e-12);
  EXPECT_NE(j.at("method").get<std::string>().find("sentences only"), std::string::npos);
  EXPECT_EQ(j.at("delta").get<double>(), 0.0);
  // Too few resamples is the user's error (exit 2, naming the option), not an internal one.
  EXPECT_EQ(run({YOKE_BINARY, "compare", "--hyp-a", hyp.string(), "--hyp-b", hyp.string(), "--ref", hyp.string(),
                 "--samples", "0"},
                work_dir() / "samples0.log"),
            2);
  EXPECT_NE(slurp(work_dir() / "samples0.log").find("--samples"), std::string::npos);
}

TEST(Experiment, CompareTakesOneFilePerSeedForEachSystem) {
  // Two "seeds" per system: A gets every sentence wrong on one seed and two of three on the
  // other; B is the reference on one seed and one sentence off on the other.
  const auto dir = work_dir();
  const std::string ref_text = "a small dog runs on the grass\nthe black cat sleeps here today\ntwo young men talk in a bar\n";
  std::ofstream(dir / "ref.txt") << ref_text;
  std::ofstream(dir / "a1.txt") << "x y z\nu v w\np q r\n";
  std::ofstream(dir / "a2.txt") << "a small dog runs on the grass\nu v w\np q r\n";
  std::ofstream(dir / "b1.txt") << ref_text;
  std::ofstream(dir / "b2.txt") << "a small dog runs on the grass\nthe black cat sleeps here today\np q r\n";
  auto j = nlohmann::json::parse(output_of({YOKE_BINARY, "compare", "--hyp-a", (dir / "a1.txt").string(),
                                            (dir / "a2.txt").string(), "--hyp-b", (dir / "b1.txt").string(),
                                            (dir / "b2.txt").string(), "--ref", (dir / "ref.txt").string(),
                                            "--samples", "200", "--json"}));
  ASSERT_EQ(j.at("bleu_a_per_file").size(), 2u);
  ASSERT_EQ(j.at("delta_per_file").size(), 2u);
  YOKE_EXPECT_NEAR(j.at("bleu_b_per_file")[0].get<double>(), 100.0, 1e-9);  // through exp(log(...))
  YOKE_EXPECT_NEAR(j.at("delta").get<double>(),
              (j.at("delta_per_file")[0].get<double>() + j.at("delta_per_file")[1].get<double>()) / 2, 1e-9);
  EXPECT_GT(j.at("delta_per_file")[1].get<double>(), 0.0);
  EXPECT_LE(j.at("ci95")[0].get<double>(), j.at("delta").get<double>());
  EXPECT_GE(j.at("ci95")[1].get<double>(), j.at("delta").get<double>());
  // Two seeds a side: the test with seed variance (1 df), whose interval is wider than the
  // sentence-only one's and whose p is two-sided.
  EXPECT_EQ(j.at("method"), "seeds and sentences");
  EXPECT_TRUE(j.at("test").at("paired").get<bool>());
  EXPECT_GT(j.at("detectable").get<double>(), 0.0);
  EXPECT_GT(j.at("ci95")[1].get<double>() - j.at("ci95")[0].get<double>(),
            j.at("sentence_bootstrap").at("ci95")[1].get<double>() - j.at("sentence_bootstrap").at("ci95")[0].get<double>());
  // A file of another length is named in the error.
  std::ofstream(dir / "short.txt") << "one line\n";
  const auto r = run({YOKE_BINARY, "compare", "--hyp-a", (dir / "a1.txt").string(), (dir / "short.txt").string(),
                      "--hyp-b", (dir / "b1.txt").string(), "--ref", (dir / "ref.txt").string()},
                     dir / "short.log");
  EXPECT_EQ(r, 2);
  EXPECT_NE(slurp(dir / "short.log").find("short.txt has 1 lines"), std::string::npos) << slurp(dir / "short.log");
}

// Seed 004 §5.1's closed form beside the counted parameters of the models it describes: it
// leaves out biases and layer norms (a few d per layer against 12d²), so the two agree to 1%.
TEST(Experiment, EmbeddingFractionClosedFormMatchesTheCountedModel) {
  Config cfg;
  cfg.task = Task::lm;
  cfg.tgt_vocab_size = cfg.src_vocab_size = 8000;
  cfg.d_model = 128;
  cfg.ffn_dim = 512;  // 4d: the 12d² per layer of the formula (4d² attention + 8d² FFN)
  cfg.decoder_layers = 2;
  for (Tie tie : {Tie::all, Tie::none}) {
    cfg.tie = tie;
    auto model = build_model(cfg);
    const double counted = double(count_embeddings(model->embeddings->spec()).emb) / double(count_parameters(*model));
    const auto closed = embedding_fraction_closed_form(cfg);
    ASSERT_TRUE(closed.has_value());
    const double v = 8000, d = 128, l = 2;
    YOKE_EXPECT_NEAR(*closed, tie == Tie::all ? 1 / (1 + 12 * l * d / v) : 2 * v * d / (2 * v * d + 12 * l * d * d), 1e-12);
    YOKE_EXPECT_NEAR(counted, *closed, 0.01) << (tie == Tie::all ? "tied" : "untied");
  }
  cfg.factored_rank = 32;
  EXPECT_FALSE(embedding_fraction_closed_form(cfg).has_value());
  cfg.factored_rank = 0;
  cfg.task = Task::translate;
  EXPECT_FALSE(embedding_fraction_closed_form(cfg).has_value());
}

TEST(Grid, ErrorsNameTheFileAndLine) {
  const auto path = work_dir() / "bad.grid";
  std::ofstream(path) << "[grid]\nseeds = 1\n\n[variant a]\nd_modle = 3\n";
  try {
    load_grid(path.string());
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ":5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("d_model"), std::string::npos) << e.what();
  }
  std::ofstream(path) << "[grid]\nbaseline = b\n[variant a]\ntie = all\n";
  EXPECT_THROW(load_grid(path.string()), InputError);
  std::ofstream(path) << "[grid]\n[variant a/b]\n";
  EXPECT_THROW(load_grid(path.string()), InputError);
  // Precedence: [base] < [variant] < seed < --set.
  std::ofstream(path) << "[grid]\nseeds = 4 5\n[base]\nd_model = 64\nheads = 2\n[variant a]\nheads = 8\n";
  const auto g = load_grid(path.string());
  const auto c = g.run_config(g.variants[0], 5, {"d_model=128"});
  EXPECT_EQ(c.heads, 8);
  EXPECT_EQ(c.d_model, 128);
  EXPECT_EQ(c.seed, 5);
  EXPECT_EQ(g.baseline, "a");
}

TEST(Grid, ExpectNamesEachVariantsEffect) {
  const auto path = work_dir() / "expect.grid";
  std::ofstream(path) << "[grid]\nexpect = b:+0.6 c:-1.5\n[variant a]\ntie = all\n[variant b]\noutput = l2\n"
                         "[variant c]\noutput = cosine\n";
  const auto g = load_grid(path.string());
  ASSERT_EQ(g.expected.size(), 2u);
  // Exact: the text "+0.6" reads as the same double as the literal 0.6.
  EXPECT_DOUBLE_EQ(g.expected.at("b"), 0.6);
  EXPECT_DOUBLE_EQ(g.expected.at("c"), -1.5);
  std::ofstream(path) << "[grid]\nexpect = z:+0.6\n[variant a]\ntie = all\n";
  EXPECT_THROW(load_grid(path.string()), InputError);  // no variant z
  std::ofstream(path) << "[grid]\nexpect = b0.6\n[variant b]\ntie = all\n";
  EXPECT_THROW(load_grid(path.string()), InputError);  // no colon
}

TEST(Grid, PaperRowsAreTheSeedsNumbersAsPrinted) {
  const auto path = work_dir() / "paper.grid";
  std::ofstream(path) << "[grid]\npaper = a:98.7M,54.5M,0%,27.62 b:80.4M,36.2M,33.6%\npaper_source = Table 2\n"
                         "[variant a]\ntie = none\n[variant b]\ntie = decoder\n";
  const auto g = load_grid(path.string());
  EXPECT_EQ(g.paper.at("a"), (std::vector<std::string>{"98.7M", "54.5M", "0%", "27.62"}));
  EXPECT_EQ(g.paper.at("b"), (std::vector<std::string>{"80.4M", "36.2M", "33.6%"}));
  EXPECT_EQ(g.paper_source, "Table 2");
  std::ofstream(path) << "[grid]\npaper = z:1M,1M,0%\n[variant a]\ntie = all\n";
  EXPECT_THROW(load_grid(path.string()), InputError);  // no variant z
  std::ofstream(path) << "[grid]\npaper = a:1M,1M\n[variant a]\ntie = all\n";
  EXPECT_THROW(load_grid(path.string()), InputError);  // Red. missing
}

// The tiny grid with a registered decision: cosine against dot, not worse by 100 BLEU (a margin
// any two toy models meet, so that the test is about the machinery, not the models).
const char* kRegistration =
    "\n[registration]\n"
    "question = Is cosine as good as dot on the toy task?\n"
    "metric = bleu\n"
    "test = toy\n"
    "pairing = unpaired\n"
    "pairing_why = the test says why it chose\n"
    "compare = cosine - dot: not worse, margin 100\n"
    "seed_plan = seeds 1 and 2\n"
    "stopping = 12 updates\n";

fs::path registered_tiny_grid() {
  const auto path = work_dir() / "registered-tiny.grid";
  std::ofstream(path) << slurp(kGrid) << kRegistration;
  return path;
}

TEST(Grid, ARegistrationIsParsedAndItsMistakesNameTheLine) {
  const auto g = load_grid(registered_tiny_grid().string(), {"data=" + data_dir().string()});
  ASSERT_TRUE(g.registration.on());
  EXPECT_EQ(g.registration.test, "toy");
  EXPECT_FALSE(g.registration.paired);
  ASSERT_EQ(g.registration.comparisons.size(), 1u);
  EXPECT_EQ(g.registration.comparisons[0].kind, ClaimKind::not_worse);
  const auto path = work_dir() / "bad-registration.grid";
  auto message = [&](const std::string& text) {
    std::ofstream(path) << text;
    try {
      load_grid(path.string(), {"data=" + data_dir().string()});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  const std::string tiny = slurp(kGrid), text = tiny + kRegistration;
  const size_t line = std::count(tiny.begin(), tiny.end(), '\n') + 8;  // the compare line
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    return t.replace(t.find(from), from.size(), to);
  };
  EXPECT_NE(message(replaced("margin 100", "margin 0")).find(path.string() + ":" + std::to_string(line)), std::string::npos)
      << message(replaced("margin 100", "margin 0"));
  EXPECT_NE(message(replaced("test = toy", "test = toy\nalpha = 2")).find("alpha"), std::string::npos);
  EXPECT_NE(message(replaced("cosine - dot", "cosine - l2")).find("names 'l2'"), std::string::npos);
  EXPECT_NE(message(replaced("seeds = 1 2", "seeds = auto 2..3")).find("lists its seeds"), std::string::npos);
  EXPECT_NE(message(replaced("seeds = 1 2", "seeds = 1 2\nexpect = cosine:+1")).find("drop [grid] expect"), std::string::npos);
  EXPECT_NE(message(replaced("stopping = 12 updates", "stoping = 12")).find("unknown [registration] key"), std::string::npos);
  EXPECT_NE(message(replaced("metric = bleu", "metric = ppl")).find("metric = ppl"), std::string::npos);
}

TEST(Experiment, ARegisteredDesignCannotChangeOnceARunHasFinished) {
  const auto out = work_dir() / "registered-record";
  fs::remove_all(out);
  fs::create_directories(out);
  const std::vector<std::string> data = {"data=" + data_dir().string()};
  const Grid g = load_grid(registered_tiny_grid().string(), data);
  const nlohmann::json design = registered_design(g, data);
  auto record = [&](const nlohmann::json& d) { record_invocation(g, kGrid, out.string(), data, "test", "bleu", d); };
  record(design);
  // Before any run has finished the design may still change: the last one is recorded.
  nlohmann::json changed = design;
  changed["variants"]["cosine"]["patience"] = 9;
  record(changed);
  EXPECT_EQ(read_json(out / "experiment.json")["registration"]["design"], changed);
  record(design);
  // A finished run fixes it.
  fs::create_directories(out / "runs" / "dot" / "seed1");
  std::ofstream(out / "runs" / "dot" / "seed1" / "result.json") << "{}";
  EXPECT_NO_THROW(record(design));
  try {
    record(changed);
    FAIL() << "a changed design was accepted after a run finished";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/variants/cosine/patience"), std::string::npos) << e.what();
  }
  EXPECT_THROW(record(nullptr), InputError);  // dropping the registration
  // A record made before a config key existed: the key at its default changes no run, so a newer
  // yoke's design is the same; set otherwise, it is a change.
  {
    auto file = read_json(out / "experiment.json");
    ASSERT_EQ(design["variants"]["dot"]["clip_norm"], 0.0);
    file["registration"]["design"]["variants"]["dot"].erase("clip_norm");
    std::ofstream(out / "experiment.json") << file.dump();
    EXPECT_NO_THROW(record(design));
    nlohmann::json clipped = design;
    clipped["variants"]["dot"]["clip_norm"] = 1.0;
    EXPECT_THROW(record(clipped), InputError);
  }
  // A folder whose runs finished unregistered cannot be registered after the fact.
  const auto late = work_dir() / "registered-late";
  fs::remove_all(late);
  fs::create_directories(late);
  record_invocation(g, kGrid, late.string(), data, "test", "bleu", nullptr);
  fs::create_directories(late / "runs" / "dot" / "seed1");
  std::ofstream(late / "runs" / "dot" / "seed1" / "result.json") << "{}";
  EXPECT_THROW(record_invocation(g, kGrid, late.string(), data, "test", "bleu", design), InputError);
  // The design leaves out what changes no model (threads), and holds every variant's whole config.
  const nlohmann::json threads = registered_design(g, {"data=" + data_dir().string(), "threads=2"});
  EXPECT_EQ(threads, design);
  EXPECT_NE(registered_design(g, {"data=" + data_dir().string(), "dropout=0.2"}), design);
}

TEST(Grid, EveryCommittedGridLoads) {
  // Each grid as a user would run it: the keys of every variant checked against the config table.
  size_t grids = 0;
  for (const auto& f : fs::directory_iterator(fs::path(YOKE_SOURCE_DIR) / "configs" / "grids")) {
    if (f.path().extension() != ".grid") continue;
    const auto cwd = fs::current_path();
    fs::current_path(YOKE_SOURCE_DIR);  // their config = paths are relative to the repository
    EXPECT_NO_THROW(load_grid(f.path().string())) << f.path();
    fs::current_path(cwd);
    ++grids;
  }
  EXPECT_GE(grids, 10u);
}

TEST(Experiment, AutoSeedsAddSeedsOnlyWhileAComparisonIsUndecided) {
  // The tiny grid with seeds = auto 2..3: every comparison is looked at after two seeds; a third
  // seed is trained only for the baseline and the variants still undecided, then the runner stops.
  const auto grid = work_dir() / "auto.grid";
  {
    std::string text = slurp(kGrid);
    const size_t at = text.find("seeds = 1 2");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 11, "seeds = auto 2..3");
    std::ofstream(grid) << text;
  }
  const auto out = work_dir() / "auto";
  ASSERT_EQ(run({YOKE_BINARY, "experiment", "--grid", grid.string(), "--set", "data=" + data_dir().string(), "--out",
                 out.string()},
                work_dir() / "auto.log"),
            0)
      << slurp(work_dir() / "auto.log");
  const auto record = read_json(out / "experiment.json");
  const auto& q = record.at("sequential");
  EXPECT_EQ(q.at("looks"), 2);
  EXPECT_DOUBLE_EQ(q.at("alpha").get<double>(), 0.025);  // 0.05 / 2: halving is exact in binary
  ASSERT_GE(q.at("rounds").size(), 1u);
  const auto& first = q.at("rounds")[0];
  EXPECT_EQ(first.at("seeds"), 2);
  const bool more = !first.at("undecided").empty();
  // A third seed exactly where the first look left the comparison undecided.
  EXPECT_EQ(fs::exists(out / "runs" / "dot" / "seed3" / "result.json"), more);
  EXPECT_EQ(fs::exists(out / "runs" / "cosine" / "seed3" / "result.json"), more);
  EXPECT_EQ(q.at("rounds").size(), more ? 2u : 1u);
  const std::string stopped = q.at("stopped");
  EXPECT_NE(stopped.find(more ? "maximum, 3 seeds" : "every comparison decided"), std::string::npos) << stopped;
  // The report says how the seeds were chosen and decides at the sequential level.
  const auto md = slurp(out / "report.md");
  EXPECT_NE(md.find("seeds = auto 2..3"), std::string::npos) << md;
  EXPECT_NE(md.find(stopped), std::string::npos) << md;
}

TEST(Experiment, CompareFromPerSeedScores) {
  // Seed 001's l2 against dot on the GPU (docs/results/archive/seed001-ende-gpu): per-seed Δ
  // +0.22, −0.28, +1.03 (sum 0.97); paired t on 2 df. The hypotheses are gone: the seed part alone.
  auto j = nlohmann::json::parse(output_of({YOKE_BINARY, "compare", "--scores-a", "37.62", "36.69", "35.95",
                                            "--scores-b", "37.84", "36.41", "36.98", "--expect", "0.6", "--json"}));
  EXPECT_EQ(j.at("method"), "seeds");
  EXPECT_TRUE(j.at("paired").get<bool>());
  YOKE_EXPECT_NEAR(j.at("delta").get<double>(), 0.97 / 3, 1e-9);
  YOKE_EXPECT_NEAR(j.at("df").get<double>(), 2.0, 1e-12);
  EXPECT_LT(j.at("ci95")[0].get<double>(), 0.0);  // holds 0 ...
  EXPECT_GT(j.at("ci95")[1].get<double>(), 0.6);  // ... and the seed's +0.6: inconclusive
  EXPECT_GT(j.at("seeds_needed").get<int>(), 3);
  EXPECT_NE(run({YOKE_BINARY, "compare", "--scores-a", "1", "2", "--hyp-b", "x.txt"}, work_dir() / "mixed.log"), 0);
  // --unpaired: the same scores as independent samples, Welch. s² of A = 0.70023, of B = 0.51823:
  // SE² = (0.70023 + 0.51823) / 3 = 0.40616, df = SE⁴ / ((0.70023/3)² / 2 + (0.51823/3)² / 2) = 3.913.
  j = nlohmann::json::parse(output_of({YOKE_BINARY, "compare", "--scores-a", "37.62", "36.69", "35.95",
                                       "--scores-b", "37.84", "36.41", "36.98", "--unpaired", "--json"}));
  EXPECT_FALSE(j.at("paired").get<bool>());
  YOKE_EXPECT_NEAR(j.at("delta").get<double>(), 0.97 / 3, 1e-9);
  YOKE_EXPECT_NEAR(j.at("se").get<double>() * j.at("se").get<double>(), 0.40616, 1e-5);
  YOKE_EXPECT_NEAR(j.at("df").get<double>(), 3.9127, 1e-3);
}

// Every result folder committed under docs/results/ (not the archive) is rebuilt from its own
// files, in a copy, to the same report bytes: what a reader of a fresh clone can check with
// `yoke report DIR`. A file the folder needs but git does not track is missing from a clone and
// fails here.
TEST(Results, CommittedFoldersRebuildByteForByte) {
  const fs::path results = fs::path(YOKE_SOURCE_DIR) / "docs" / "results";
  size_t folders = 0;
  for (const auto& entry : fs::directory_iterator(results)) {
    if (!fs::exists(entry.path() / "experiment.json")) continue;
    const fs::path copy = work_dir() / ("rebuilt-" + entry.path().filename().string());
    fs::remove_all(copy);
    fs::copy(entry.path(), copy, fs::copy_options::recursive);
    for (const char* f : {"report.md", "report.csv", "report.json", "report.html"}) fs::remove(copy / f);
    ASSERT_EQ(run({YOKE_BINARY, "report", copy.string()}, work_dir() / "rebuild.log"), 0)
        << entry.path() << ": " << slurp(work_dir() / "rebuild.log");
    for (const char* f : {"report.md", "report.csv", "report.json", "report.html"})
      EXPECT_EQ(slurp(copy / f), slurp(entry.path() / f)) << entry.path().filename() << "/" << f;
    ++folders;
  }
  EXPECT_GE(folders, 2u);
}

// scripts/run-grid-parallel.sh: each (variant, seed) its own process, two at a time; the gathered
// folder reports every run, and its record names the parts' calls that made them, not only the
// report's own. A second --report-only call adds nothing twice.
TEST(Experiment, RunGridParallelGathersThePartsAndTheirProvenance) {
  // A registered grid: each part records the same design, and the gathered report reads it.
  const auto out = work_dir() / "parallel";
  fs::remove_all(out);
  const std::string script = std::string(YOKE_SOURCE_DIR) + "/scripts/run-grid-parallel.sh";
  const std::vector<std::string> base = {"/usr/bin/env", std::string("YOKE=") + YOKE_BINARY, "bash", script,
                                         "--grid", registered_tiny_grid().string(), "--out", out.string(),
                                         "--set", "data=" + data_dir().string()};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  ASSERT_EQ(run(with({"--jobs", "2"}), work_dir() / "parallel.log"), 0) << slurp(work_dir() / "parallel.log");
  for (const char* v : {"dot", "cosine"})
    for (int seed : {1, 2}) {
      const fs::path part = out / "parts" / (std::string(v) + "-s" + std::to_string(seed));
      const fs::path gathered = out / "runs" / v / ("seed" + std::to_string(seed)) / "result.json";
      ASSERT_TRUE(fs::exists(gathered)) << gathered;
      EXPECT_EQ(slurp(gathered), slurp(part / "runs" / v / ("seed" + std::to_string(seed)) / "result.json"));
    }
  const auto report = read_json(out / "report.json").at("variants");
  ASSERT_EQ(report.size(), 2u);
  for (const auto& entry : report) EXPECT_EQ(entry.at("seeds").get<int>(), 2) << entry.at("variant");
  // The grid's baseline, not the first part's (each part's record names its one variant).
  const std::string baseline = load_grid(registered_tiny_grid().string(), {"data=" + data_dir().string()}).baseline;
  EXPECT_EQ(read_json(out / "experiment.json").at("baseline"), baseline);
  for (const auto& entry : report)
    EXPECT_EQ(entry.at("baseline").get<bool>(), entry.at("variant") == baseline) << entry.at("variant");

  auto part_calls = [&] {
    size_t n = 0;
    const nlohmann::json record = read_json(out / "experiment.json");  // not a temporary: the loop outlives it
    for (const auto& call : record.at("invocations"))
      n += call.at("command").get<std::string>().find("/parts/") != std::string::npos;
    return n;
  };
  EXPECT_EQ(part_calls(), 4u);
  ASSERT_EQ(run(with({"--report-only"}), work_dir() / "parallel2.log"), 0) << slurp(work_dir() / "parallel2.log");
  EXPECT_EQ(part_calls(), 4u);
  EXPECT_NE(slurp(out / "report.md").find("/parts/dot-s1"), std::string::npos) << "the provenance names the parts";
  // Every part holds the same registration; the gathered report reads it for the one comparison.
  const auto record = read_json(out / "experiment.json");
  EXPECT_EQ(record.at("seeds"), nlohmann::json::array({1, 2}));
  EXPECT_EQ(record.at("registration").at("design"), read_json(out / "parts" / "cosine-s2" / "experiment.json").at("registration").at("design"));
  const auto decision = read_json(out / "report.json").at("registration");
  ASSERT_EQ(decision.at("comparisons").size(), 1u);
  EXPECT_FALSE(decision["comparisons"][0].at("interim").get<bool>());
  EXPECT_EQ(decision["comparisons"][0].at("seeds_b"), nlohmann::json::array({1, 2}));
  EXPECT_NE(slurp(out / "report.md").find("## Registered decision"), std::string::npos);
  // A fresh clone resumes from the committed export (no checkpoints): every finished run becomes
  // its part again, with its own calls, and the gathered report reads as the original.
  const auto exported = work_dir() / "parallel-export", resumed = work_dir() / "parallel-resumed";
  fs::remove_all(exported);
  fs::remove_all(resumed);
  ASSERT_EQ(run({YOKE_BINARY, "report", out.string(), "--export", exported.string()}, work_dir() / "export.log"), 0)
      << slurp(work_dir() / "export.log");
  auto resume = base;
  *std::next(std::find(resume.begin(), resume.end(), "--out")) = resumed.string();
  resume.insert(resume.end(), {"--resume-from", exported.string(), "--report-only"});
  const auto resumed_log = work_dir() / "parallel-resumed.log";
  ASSERT_EQ(run(resume, resumed_log), 0) << slurp(resumed_log);
  EXPECT_NE(slurp(resumed_log).find("4 finished runs taken from"), std::string::npos) << slurp(resumed_log);
  EXPECT_EQ(read_json(resumed / "report.json").at("variants"), read_json(out / "report.json").at("variants"));
  EXPECT_EQ(read_json(resumed / "parts" / "dot-s2" / "experiment.json").at("invocations").size(), 1u);
  size_t resumed_calls = 0;
  const nlohmann::json resumed_record = read_json(resumed / "experiment.json");  // outlives the loop
  for (const auto& call : resumed_record.at("invocations"))
    resumed_calls += call.at("command").get<std::string>().find(out.string() + "/parts/") != std::string::npos;
  EXPECT_EQ(resumed_calls, 4u) << "the parts' calls are the original run's";
  // Parts whose designs differ are not gathered into one report.
  auto part = read_json(out / "parts" / "cosine-s2" / "experiment.json");
  part["registration"]["design"]["seeds"] = {2};
  std::ofstream(out / "parts" / "cosine-s2" / "experiment.json") << part.dump();
  EXPECT_NE(run(with({"--report-only"}), work_dir() / "parallel3.log"), 0);
  EXPECT_NE(slurp(work_dir() / "parallel3.log").find("different registered designs"), std::string::npos)
      << slurp(work_dir() / "parallel3.log");
}
