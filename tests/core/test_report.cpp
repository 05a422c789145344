// Pictures (src/util/svg_plot) and experiment reports (src/eval/report): the SVG is well formed
// and finite whatever the input, ticks are 1/2/5×10^k, and the report's numbers (mean, std, Δ,
// bootstrap p) are right in every format.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "eval/bleu.h"
#include "eval/sentence_nll_file.h"
#include "file_helpers.h"
#include "scoped_env.h"
#include "report/report.h"
#include "report/svg_chart.h"
#include "report/svg_to_png.h"
#include "text/corpus.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace yoke {
namespace {

namespace fs = std::filesystem;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

std::string report_dir(const std::string& name) { return test::temp_dir("report_" + name); }
using test::read_file;
using test::ScopedEnv;

// ---------------------------------------------------------------- SVG checks

// Every start tag has its end tag, in order; "" when so, else what went wrong.
std::string tag_balance(const std::string& xml) {
  std::vector<std::string> open;
  size_t i = 0;
  while ((i = xml.find('<', i)) != std::string::npos) {
    const size_t end = xml.find('>', i);
    if (end == std::string::npos) return "unterminated tag at " + std::to_string(i);
    const std::string tag = xml.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty()) return "empty tag";
    if (tag[0] == '?' || tag[0] == '!') continue;
    if (tag.back() == '/') continue;
    const bool closing = tag[0] == '/';
    const std::string name = tag.substr(closing ? 1 : 0, tag.find_first_of(" \t\n/", 1) - (closing ? 1 : 0));
    if (name == "meta" || name == "img" || name == "br" || name == "link") continue;  // HTML void
    if (!closing) {
      open.push_back(name);
    } else if (open.empty() || open.back() != name) {
      return "unexpected </" + name + ">";
    } else {
      open.pop_back();
    }
  }
  return open.empty() ? "" : "unclosed <" + open.back() + ">";
}

bool has_non_finite(const std::string& svg) {
  std::string lower = svg;
  for (auto& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("nan") != std::string::npos || lower.find("inf") != std::string::npos;
}

void expect_sound(const std::string& svg) {
  EXPECT_EQ(svg.rfind("<svg", 0), 0u) << svg.substr(0, 40);
  EXPECT_EQ(tag_balance(svg), "");
  EXPECT_FALSE(has_non_finite(svg)) << svg;
  EXPECT_NE(svg.find("viewBox=\""), std::string::npos);
  EXPECT_NE(svg.find("font-family=\"sans-serif\""), std::string::npos);
}

// Texts of the elements with the given class attribute, in order.
std::vector<std::string> texts_of_class(const std::string& svg, const std::string& cls) {
  std::vector<std::string> out;
  const std::regex re("<text[^>]*class=\"" + cls + "\"[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

bool is_nice_step(double step) {
  if (!(step > 0)) return false;
  const double mag = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  const double m = step / mag;
  for (double nice : {1.0, 2.0, 5.0, 10.0}) {
    if (std::fabs(m - nice) < 1e-6) return true;
  }
  return false;
}

PlotOptions options(const std::string& title = "T") {
  PlotOptions o;
  o.title = title;
  o.x_label = "step";
  o.y_label = "loss";
  return o;
}

TEST(SvgPlot, NiceTicksCoverTheDataWithNiceSteps) {
  const std::vector<std::pair<double, double>> ranges = {
      {0, 1}, {0.013, 0.087}, {-3, 1234}, {1e6, 3.2e6}, {-7e-5, 2e-5}, {17, 18}, {-50, -49.5}};
  for (const auto& [lo, hi] : ranges) {
    const AxisTicks t = nice_ticks(lo, hi, 6);
    EXPECT_TRUE(is_nice_step(t.step)) << lo << ".." << hi << " step " << t.step;
    EXPECT_LE(t.lo, lo);
    EXPECT_GE(t.hi, hi);
    ASSERT_GE(t.values.size(), 2u);
    EXPECT_LE(t.values.size(), 13u);
    EXPECT_DOUBLE_EQ(t.values.front(), t.lo);
    EXPECT_NEAR(t.values.back(), t.hi, t.step * 1e-9);
    for (size_t i = 1; i < t.values.size(); ++i) {
      EXPECT_NEAR(t.values[i] - t.values[i - 1], t.step, t.step * 1e-6);
    }
  }
  // The step is a digit times pow(10, k) from libm: within an ulp of the nice value, not exact.
  EXPECT_NEAR(nice_ticks(0, 1, 5).step, 0.2, 1e-15);
  EXPECT_NEAR(nice_ticks(0, 100, 5).step, 20, 1e-13);
  EXPECT_NEAR(nice_ticks(0, 10, 2).step, 5, 1e-14);
}

TEST(SvgPlot, NiceTicksWidenAConstantAndSurviveNonFinite) {
  for (double v : {0.0, 5.0, -3.0, 1e-9, 2e9}) {
    const AxisTicks t = nice_ticks(v, v, 6);
    EXPECT_LT(t.lo, v);
    EXPECT_GT(t.hi, v);
    EXPECT_TRUE(is_nice_step(t.step));
  }
  const AxisTicks t = nice_ticks(kNaN, kInf, 6);
  EXPECT_TRUE(std::isfinite(t.lo) && std::isfinite(t.hi) && t.hi > t.lo);
}

TEST(SvgPlot, LineChartIsWellFormedAndEscapesText) {
  PlotOptions o = options("BLEU <dev> & \"test\"");
  o.x_label = "updates";
  o.y_label = "cross-entropy";
  const std::vector<Series> s = {{"tie <all>", {0, 1, 2, 3}, {4.1, 3.2, 2.9, 2.7}},
                                 {"untied", {0, 1, 2, 3}, {4.3, 3.5, 3.0, 2.8}}};
  const std::string svg = line_chart(s, o);
  expect_sound(svg);
  EXPECT_NE(svg.find("BLEU &lt;dev&gt; &amp; &quot;test&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("<dev>"), std::string::npos);
  EXPECT_NE(svg.find(">updates<"), std::string::npos);
  EXPECT_NE(svg.find(">cross-entropy<"), std::string::npos);
  EXPECT_NE(svg.find("tie &lt;all&gt;"), std::string::npos);  // the legend
  EXPECT_NE(svg.find(">untied<"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
}

TEST(SvgPlot, TickLabelsAreNiceNumbers) {
  const std::vector<Series> s = {{"a", {3, 17, 45, 118}, {0.0123, 0.0456, 0.0789, 0.0871}}};
  const std::string svg = line_chart(s, options());
  for (const std::string cls : {"tick y", "tick x"}) {
    const auto labels = texts_of_class(svg, cls);
    ASSERT_GE(labels.size(), 3u) << cls;
    std::vector<double> v;
    for (const auto& l : labels) v.push_back(std::stod(l));
    const double step = v[1] - v[0];
    EXPECT_TRUE(is_nice_step(step)) << cls << " step " << step;
    for (size_t i = 1; i < v.size(); ++i) EXPECT_NEAR(v[i] - v[i - 1], step, step * 1e-3);
  }
}

TEST(SvgPlot, LargeNumbersGetASuffix) {
  const std::vector<Series> s = {{"a", {0, 1e6, 2e6, 3e6}, {1, 2, 3, 4}}};
  const auto labels = texts_of_class(line_chart(s, options()), "tick x");
  ASSERT_FALSE(labels.empty());
  EXPECT_EQ(labels.back().back(), 'M');
}

TEST(SvgPlot, NanBreaksTheLine) {
  const std::vector<Series> s = {{"a", {0, 1, 2, 3, 4, 5}, {1, 2, kNaN, 3, 4, 5}}};
  const std::string svg = line_chart(s, options());
  expect_sound(svg);
  size_t lines = 0;
  for (size_t i = 0; (i = svg.find("<polyline", i)) != std::string::npos; ++i) ++lines;
  EXPECT_EQ(lines, 2u);
}

TEST(SvgPlot, EdgeCasesStayFinite) {
  const PlotOptions o = options();
  PlotOptions log = o;
  log.log_y = true;
  const std::vector<std::vector<Series>> inputs = {
      {},
      {{"empty", {}, {}}},
      {{"one", {3}, {7}}},
      {{"flat", {1, 2, 3}, {5, 5, 5}}},
      {{"zero", {0, 0}, {0, 0}}},
      {{"bad", {kNaN, 1, kInf, 2}, {1, -kInf, 3, kNaN}}},
      {{"mismatch", {1, 2, 3}, {1}}},
      {{"huge", {0, 1}, {1e308, -1e308}}}};
  for (const auto& in : inputs) {
    expect_sound(line_chart(in, o));
    expect_sound(line_chart(in, log));
  }
  expect_sound(line_chart({{"neg", {1, 2, 3}, {-1, 0, 10}}}, log));

  using Samples = std::vector<std::pair<std::string, std::vector<double>>>;
  for (const Samples& h : std::vector<Samples>{{}, {{"none", {}}}, {{"one", {2.5}}},
                                               {{"same", {4, 4, 4}}}, {{"bad", {kNaN, kInf}}},
                                               {{"a", {1, 2, 3}}, {"b", {2, 3, 9}}}}) {
    expect_sound(histogram(h, 10, o));
    expect_sound(histogram(h, 0, log));
  }

  for (const auto& pts : std::vector<std::vector<LabelledPoint>>{
           {}, {{1, 1, "g", "only"}}, {{2, 2, "", ""}, {2, 2, "", ""}}, {{kNaN, 1, "g", "x"}}}) {
    expect_sound(scatter(pts, o));
  }

  expect_sound(bar_chart({}, {}, o));
  expect_sound(bar_chart({"a"}, {{"s", {}, {}}}, o));
  expect_sound(bar_chart({"a", "b"}, {{"s", {}, {0, 0}}}, log));
  const std::vector<std::vector<double>> err = {{kNaN, 1e9}};
  expect_sound(bar_chart({"a", "b"}, {{"s", {}, {3, kInf}}}, o, &err));

  PlotOptions tiny = o;
  tiny.width = 10;
  tiny.height = -5;
  expect_sound(line_chart({{"a", {1, 2}, {1, 2}}, {"b", {1, 2}, {2, 1}}}, tiny));
}

TEST(SvgPlot, HistogramOverlaysSamplesOnSharedBins) {
  std::vector<double> a, b;
  for (int i = 0; i < 200; ++i) a.push_back(std::sin(i) * 2), b.push_back(1 + std::cos(i));
  const std::string svg = histogram({{"encoder", a}, {"decoder", b}}, 20, options("Norms"));
  expect_sound(svg);
  EXPECT_NE(svg.find("fill-opacity=\"0.45\""), std::string::npos);
  EXPECT_NE(svg.find(">encoder<"), std::string::npos);
  EXPECT_NE(svg.find(">decoder<"), std::string::npos);
  // The count axis starts at 0 and its labels are whole numbers.
  const auto labels = texts_of_class(svg, "tick y");
  ASSERT_FALSE(labels.empty());
  EXPECT_EQ(labels.front(), "0");
}

TEST(SvgPlot, ScatterColoursGroupsAndPlacesLabels) {
  std::vector<LabelledPoint> pts = {{0, 0, "en", "house"}, {1, 1, "de", "Haus"},
                                    {2, 0.5, "en", "a&b"}, {3, 2, "de", ""}};
  const std::string svg = scatter(pts, options("PCA"));
  expect_sound(svg);
  EXPECT_NE(svg.find(">house<"), std::string::npos);
  EXPECT_NE(svg.find(">Haus<"), std::string::npos);
  EXPECT_NE(svg.find(">a&amp;b<"), std::string::npos);
  EXPECT_NE(svg.find(">en<"), std::string::npos);  // legend
  EXPECT_NE(svg.find(">de<"), std::string::npos);
  // Many labels on one spot: only those that fit are drawn, none on top of another.
  std::vector<LabelledPoint> crowd;
  for (int i = 0; i < 50; ++i) crowd.push_back({1, 1, "g", "word" + std::to_string(i)});
  const std::string busy = scatter(crowd, options());
  expect_sound(busy);
  size_t drawn = 0;
  for (size_t i = 0; (i = busy.find(">word", i)) != std::string::npos; ++i) ++drawn;
  EXPECT_GE(drawn, 1u);
  EXPECT_LE(drawn, 8u);
}

TEST(SvgPlot, BarChartWithErrorBarsAndLongCategories) {
  const std::vector<std::string> cats = {"none", "decoder tie", "three-way tie with a long name",
                                         "shared-private", "factored rank 64", "normalized"};
  const std::vector<Series> s = {{"BLEU", {}, {27.4, 28.1, 27.9, 28.4, 26.9, 27.7}},
                                 {"chrF", {}, {55.0, 56.2, 55.8, 56.9, 54.1, 55.5}}};
  const std::vector<std::vector<double>> err = {{0.3, 0.2, 0.4, 0.3, 0.6, 0.2},
                                                {0.5, 0.1, 0.2, 0.4, 0.3, 0.3}};
  const std::string svg = bar_chart(cats, s, options("Results"), &err);
  expect_sound(svg);
  EXPECT_NE(svg.find("rotate(-35"), std::string::npos);  // long labels are turned
  EXPECT_NE(svg.find(">decoder tie<"), std::string::npos);
  EXPECT_EQ(texts_of_class(svg, "tick y").front(), "0");
}

TEST(SvgPlot, SvgToPngConvertsOrLeavesNothing) {
  const std::string dir = report_dir("png");
  const std::string svg = dir + "/-chart.svg";  // a name that looks like an option
  write_file_atomically(svg, line_chart({{"a", {0, 1, 2}, {1, 3, 2}}}, options()));
  const std::string png = dir + "/-chart.png";
  if (svg_to_png(svg, png)) {
    const std::string bytes = read_file(png);
    ASSERT_GT(bytes.size(), 8u);
    EXPECT_EQ(bytes.substr(1, 3), "PNG");
  } else {
    EXPECT_FALSE(fs::exists(png));
  }
  EXPECT_FALSE(svg_to_png(dir + "/missing.svg", dir + "/missing.png"));
  EXPECT_FALSE(fs::exists(dir + "/missing.png"));

  // No converter on PATH: false, nothing written.
  {
    ScopedEnv path("PATH", dir.c_str());
    EXPECT_FALSE(svg_to_png(svg, dir + "/none.png"));
  }
  EXPECT_FALSE(fs::exists(dir + "/none.png"));
}

// A converter that fails is run once a process, not once a picture: a report converts one per chart.
TEST(SvgPlot, AConverterThatFailedIsNotRunAgain) {
  const std::string dir = report_dir("png_failing");
  const std::string svg = dir + "/chart.svg", calls = dir + "/calls.txt";
  write_file_atomically(svg, line_chart({{"a", {0, 1, 2}, {1, 3, 2}}}, options()));
  const std::string fake = dir + "/rsvg-convert";  // the only converter on PATH below
  write_file_atomically(fake, "#!/bin/sh\necho called >> '" + calls + "'\nexit 1\n");
  fs::permissions(fake, fs::perms::owner_all);
  {
    ScopedEnv path("PATH", dir.c_str());
    EXPECT_FALSE(svg_to_png(svg, dir + "/one.png"));
    EXPECT_FALSE(svg_to_png(svg, dir + "/two.png"));
  }
  EXPECT_EQ(read_file(calls), "called\n") << "the failing converter ran more than once";
  EXPECT_FALSE(fs::exists(dir + "/one.png"));
  EXPECT_FALSE(fs::exists(dir + "/two.png"));
}

// ---------------------------------------------------------------- report fixture

struct Grid {
  std::string dir;
  ReportInput input;
};

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary);
  for (const auto& l : lines) out << l << "\n";
}

// base: poor hypotheses; same: identical to base; oracle: the references themselves.
Grid make_grid(const std::string& name) {
  Grid g;
  g.dir = report_dir(name);
  std::vector<std::string> refs, poor;
  const char* animals[] = {"dog", "cat", "horse", "bird", "child", "woman", "man", "girl"};
  const char* places[] = {"park", "street", "beach", "field", "kitchen", "garden"};
  for (int i = 0; i < 40; ++i) {
    const std::string a = animals[i % 8], p = places[i % 6];
    refs.push_back("a " + a + " is running through the " + p + " on a sunny day number " + std::to_string(i));
    poor.push_back("the " + p + " " + std::to_string(i % 3));
  }
  write_lines(g.dir + "/ref.de", refs);
  write_lines(g.dir + "/poor.de", poor);
  write_lines(g.dir + "/good.de", refs);

  ReportInput& in = g.input;
  in.title = "Tie schemes on Multi30k";
  in.baseline = "base";
  in.variant_order = {"base", "same", "oracle"};
  in.ref_files = {{"test2016", g.dir + "/ref.de"}};
  in.test_names = {"test2016"};
  in.pictures = {{"Training loss", "pictures/loss.svg"}, {"Norms & ranks", "pictures/norms.png"}};
  auto run = [&](const std::string& variant, int seed, double bleu, double chrf, double params,
                 const std::string& hyp) {
    RunResult r;
    r.variant = variant;
    r.seed = seed;
    r.params = params;
    r.emb = params / 2;
    r.red = variant == "base" ? 0.0 : 2.0 / 3;
    r.tokens_per_s = 12000.0 + seed;
    r.wall_s = 3600.0 * seed;
    r.tests["test2016"].scores = {{"bleu", bleu}, {"chrf", chrf}};
    r.hyp_files = {{"test2016", g.dir + "/" + hyp}};
    in.runs.push_back(r);
  };
  // Given out of order on purpose: the report sorts by the variant order and by seed.
  run("oracle", 2, 34, 64, 5.1e6, "good.de");
  run("base", 1, 20, 50, 7.58e6, "poor.de");
  run("same", 1, 20, 50, 7.58e6, "poor.de");
  run("oracle", 1, 30, 60, 5.1e6, "good.de");
  run("base", 2, 22, 54, 7.58e6, "poor.de");
  run("same", 2, 22, 54, 7.58e6, "poor.de");
  return g;
}

// A small RFC 4180 reader: quoted fields, doubled quotes, CRLF rows.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') rows.back().back() += '"', ++i;
      else if (c == '"') quoted = false;
      else rows.back().back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      rows.emplace_back(1);
    } else {
      rows.back().back() += c;
    }
  }
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
  return rows;
}

const nlohmann::json& entry(const nlohmann::json& report, const std::string& variant) {
  for (const auto& e : report) {
    if (e["variant"] == variant) return e;
  }
  throw std::runtime_error("no variant " + variant);
}

TEST(Report, MeanStdDeltaAndBootstrap) {
  const Grid g = make_grid("stats");
  const std::vector<VariantEntry> entries = build_report(g.input, 300);
  const nlohmann::json r = to_json(entries, g.input.metric);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0]["variant"], "base");
  EXPECT_EQ(r[2]["variant"], "oracle");

  const auto& base = entry(r, "base");
  EXPECT_EQ(base["seeds"], 2);
  EXPECT_EQ(base["seed_list"], nlohmann::json({1, 2}));
  EXPECT_TRUE(base["baseline"].get<bool>());
  const auto& bt = base["tests"]["test2016"];
  EXPECT_DOUBLE_EQ(bt["bleu"]["mean"].get<double>(), 21.0);
  EXPECT_NEAR(bt["bleu"]["std"].get<double>(), std::sqrt(2.0), 1e-12);  // N−1 denominator
  EXPECT_EQ(bt["bleu"]["values"], nlohmann::json({20, 22}));
  EXPECT_DOUBLE_EQ(bt["chrf"]["mean"].get<double>(), 52.0);
  EXPECT_DOUBLE_EQ(bt["delta_bleu"].get<double>(), 0.0);
  EXPECT_TRUE(bt["p_value"].is_null());
  EXPECT_DOUBLE_EQ(base["params"].get<double>(), 7.58e6);
  EXPECT_DOUBLE_EQ(base["tokens_per_s"].get<double>(), 12001.5);
  EXPECT_DOUBLE_EQ(base["wall_s"].get<double>(), 5400.0);

  const auto& same = entry(r, "same")["tests"]["test2016"];
  EXPECT_DOUBLE_EQ(same["delta_bleu"].get<double>(), 0.0);
  // The same outputs: Δ 0 on every seed and every resample, nothing to find (two-sided p = 1).
  // Exact: the same statistics summed in the same order give Δ = 0 on every resample, and p is
  // then min(1, …) on any machine.
  EXPECT_DOUBLE_EQ(same["p_value"].get<double>(), 1.0);
  EXPECT_EQ(same["test"]["method"], "seeds and sentences");
  EXPECT_EQ(same["verdict"]["verdict"], "inconclusive");

  const auto& oracle = entry(r, "oracle")["tests"]["test2016"];
  EXPECT_DOUBLE_EQ(oracle["bleu"]["mean"].get<double>(), 32.0);
  EXPECT_NEAR(oracle["bleu"]["std"].get<double>(), std::sqrt(8.0), 1e-12);
  EXPECT_DOUBLE_EQ(oracle["delta_bleu"].get<double>(), 11.0);
  EXPECT_LT(oracle["p_value"].get<double>(), 0.05);
  EXPECT_EQ(oracle["sentence_bootstrap"]["samples"], 300);
  EXPECT_LT(oracle["sentence_bootstrap"]["p_value"].get<double>(), 0.05);
  // Bonferroni over the two variants: p doubled, and the interval the verdict reads is the 97.5% one,
  // which holds the 95% one (tests/core/test_verdict.cpp checks the widths).
  EXPECT_NEAR(oracle["p_adjusted"].get<double>(), std::min(1.0, 2 * oracle["p_value"].get<double>()), 1e-12);
  EXPECT_NEAR(oracle["interval"]["level"].get<double>(), 0.975, 1e-12);
  EXPECT_LE(oracle["interval"]["low"].get<double>(), oracle["delta_ci95"][0].get<double>());
  EXPECT_GE(oracle["interval"]["high"].get<double>(), oracle["delta_ci95"][1].get<double>());
  // Every seed of both variants took part, and the interval holds the Δ of the two hypothesis
  // sets (here the oracle's BLEU is 100 on both seeds; the table's 32 comes from the metrics).
  EXPECT_EQ(oracle["p_seeds"]["baseline"], nlohmann::json({1, 2}));
  EXPECT_EQ(oracle["p_seeds"]["variant"], nlohmann::json({1, 2}));
  ASSERT_TRUE(oracle["delta_ci95"].is_array());
  const double bleu_poor = corpus_bleu(read_lines(g.dir + "/poor.de"), read_lines(g.dir + "/ref.de")).score;
  EXPECT_GT(oracle["delta_ci95"][0].get<double>(), 0.0);
  // 1e-9: BLEU 100 comes through exp(log(...)) and may miss by an ulp.
  EXPECT_LE(oracle["delta_ci95"][0].get<double>(), 100.0 - bleu_poor + 1e-9);
  EXPECT_GE(oracle["delta_ci95"][1].get<double>(), 100.0 - bleu_poor - 1e-9);
  EXPECT_EQ(oracle["delta_per_seed"],
            nlohmann::json::parse(R"([{"seed": 1, "delta": 10}, {"seed": 2, "delta": 12}])"));
  EXPECT_EQ(same["delta_ci95"], nlohmann::json({0.0, 0.0}));
  EXPECT_TRUE(bt["delta_per_seed"].empty());
}

TEST(Report, OneSeedHasZeroStdAndMissingFilesGiveNoP) {
  Grid g = make_grid("one_seed");
  g.input.runs.erase(std::remove_if(g.input.runs.begin(), g.input.runs.end(),
                                    [](const RunResult& r) { return r.seed == 2; }),
                     g.input.runs.end());
  for (auto& run : g.input.runs) {
    if (run.variant == "same") run.hyp_files.clear();
  }
  const std::vector<VariantEntry> entries = build_report(g.input, 100);
  const nlohmann::json r = to_json(entries, g.input.metric);
  const auto& t = entry(r, "oracle")["tests"]["test2016"];
  EXPECT_DOUBLE_EQ(t["bleu"]["std"].get<double>(), 0.0);
  EXPECT_TRUE(entry(r, "same")["tests"]["test2016"]["p_value"].is_null());
  const std::string md = report_markdown(entries, g.input);
  EXPECT_EQ(md.find("\xC2\xB1 0.00"), std::string::npos);  // no "± 0.00" for one seed
}

TEST(Report, MismatchedHypothesisIsAnInputError) {
  Grid g = make_grid("mismatch");
  write_lines(g.dir + "/short.de", {"only one line"});
  for (auto& run : g.input.runs) {
    if (run.variant == "oracle") run.hyp_files["test2016"] = g.dir + "/short.de";
  }
  EXPECT_THROW(build_report(g.input, 50), InputError);
  for (auto& run : g.input.runs) {
    if (run.variant == "oracle") run.hyp_files["test2016"] = g.dir + "/absent.de";
  }
  EXPECT_THROW(build_report(g.input, 50), InputError);
}

TEST(Report, PerplexityIsTestedOverSeedsOnly) {
  Grid g = make_grid("ppl");
  g.input.metric = "ppl";
  for (auto& run : g.input.runs) {
    const double ppl = run.variant == "oracle" ? 40.0 + run.seed : 50.0 + run.seed;
    run.tests["test2016"].scores = {{"ppl", ppl}, {"ppl_word", 2 * ppl}};
  }
  const std::vector<VariantEntry> entries = build_report(g.input, 100);
  const nlohmann::json r = to_json(entries, g.input.metric);
  const auto& t = entry(r, "oracle")["tests"]["test2016"];
  EXPECT_DOUBLE_EQ(t["delta_ppl"].get<double>(), -10.0);
  // No per-sentence scores: the seeds-only test, on Δ per seed −10 and −10 (no spread: SE 0).
  EXPECT_EQ(t["test"]["method"], "seeds");
  EXPECT_TRUE(t["sentence_bootstrap"].is_null());
  EXPECT_DOUBLE_EQ(t["test"]["se"].get<double>(), 0.0);  // exact: −10 − (−10) in whole numbers, no BLAS
  const std::string md = report_markdown(entries, g.input);
  EXPECT_NE(md.find("PPL test2016"), std::string::npos);
  EXPECT_NE(md.find("\xCE\x94 PPL"), std::string::npos);
  EXPECT_NE(md.find("| p |"), std::string::npos);
  EXPECT_EQ(md.find("| sentences only: 95% CI, p |"), std::string::npos);
  const std::string html = report_html(entries, g.input);
  EXPECT_NE(html.find("<strong>41.50"), std::string::npos);  // lower perplexity is the best
  EXPECT_NE(html.find("<strong>83.00"), std::string::npos);  // per word too
  EXPECT_EQ(html.find("<strong>103.00"), std::string::npos);
}

// Per-line NLL files give perplexity the same two-level test as BLEU: the test set's part enters.
TEST(Report, PerplexityCountsTheTestSentencesFromNllFiles) {
  Grid g = make_grid("ppl-nll");
  g.input.metric = "ppl";
  g.input.variant_order = {"base", "oracle"};
  std::vector<RunResult> runs;
  for (auto& run : g.input.runs) {
    if (run.variant == "same") continue;
    // 40 lines of 10 tokens; the oracle is better by 0.2 nats a token, each seed a little apart,
    // and the lines differ in difficulty (shared by both variants: the test set's own noise).
    SentenceNll lines;
    double total = 0;
    for (int i = 0; i < 40; ++i) {
      const double per_token = 3.0 + 0.5 * std::sin(i) - (run.variant == "oracle" ? 0.2 : 0.0) + 0.01 * run.seed * (i % 3);
      lines.nll.push_back(10 * per_token);
      lines.subwords.push_back(10);
      lines.words.push_back(8);
      total += 10 * per_token;
    }
    const std::string path = g.dir + "/nll." + run.variant + std::to_string(run.seed) + ".tsv.gz";
    write_sentence_nll(path, lines);
    run.nll_files = {{"test2016", path}};
    run.hyp_files.clear();
    run.tests["test2016"].scores = {{"ppl", std::exp(total / 400)}, {"ppl_word", std::exp(total / 320)}};
    runs.push_back(run);
  }
  g.input.runs = runs;
  const std::vector<VariantEntry> entries = build_report(g.input, 100);
  const nlohmann::json r = to_json(entries, g.input.metric);
  const auto& t = entry(r, "oracle")["tests"]["test2016"];
  EXPECT_EQ(t["test"]["method"], "seeds and sentences");
  EXPECT_GT(t["test"]["var_sentence"].get<double>(), 0.0);
  // The test's scores are the files' own: exp(N / 400) of each run, the same as the metrics here
  // up to the last bits of the file's 17 digits.
  EXPECT_NEAR(t["test"]["delta"].get<double>(), t["delta_ppl"].get<double>(), 1e-9);
  // A file whose lines count other tokens than the other runs' is refused.
  SentenceNll odd;
  odd.nll = {1.0};
  odd.subwords = {3};
  odd.words = {2};
  write_sentence_nll(g.dir + "/odd.tsv.gz", odd);
  g.input.runs[0].nll_files["test2016"] = g.dir + "/odd.tsv.gz";
  EXPECT_THROW(build_report(g.input, 100), InputError);
}

// The verdict's test draws nothing at random (eval/test_set_covariance.h): another number of
// resamples for the sentence-only column leaves every p, interval and verdict as it was, to the bit.
TEST(Report, VerdictsDoNotDependOnTheBootstrap) {
  Grid g = make_grid("no-draws");
  const nlohmann::json a = to_json(build_report(g.input, 100), g.input.metric),
                       b = to_json(build_report(g.input, 357), g.input.metric);
  for (const char* variant : {"same", "oracle"}) {
    const auto& ta = entry(a, variant)["tests"]["test2016"];
    const auto& tb = entry(b, variant)["tests"]["test2016"];
    for (const char* key : {"p_value", "p_adjusted", "interval", "delta_ci95", "test", "verdict"})
      EXPECT_EQ(ta[key], tb[key]) << variant << " " << key;
    EXPECT_NE(ta["sentence_bootstrap"]["samples"], tb["sentence_bootstrap"]["samples"]);
  }
}

// A variant that stopped at fewer seeds than the baseline (seeds = auto decided it earlier) is
// compared on the seeds both have: paired, as at the look that decided it.
TEST(Report, AVariantWithFewerSeedsIsComparedOnTheSeedsBothHave) {
  Grid g = make_grid("common-seeds");
  g.input.variant_order = {"base", "oracle"};
  std::vector<RunResult> runs;
  for (const auto& run : g.input.runs)
    if (run.variant != "same") runs.push_back(run);
  RunResult third = runs[1];  // base, seed 1
  ASSERT_EQ(third.variant, "base");
  third.seed = 3;
  third.tests["test2016"].scores["bleu"] = 40.0;
  runs.push_back(third);
  g.input.runs = runs;
  const std::vector<VariantEntry> entries = build_report(g.input, 100);
  const nlohmann::json r = to_json(entries, g.input.metric);
  const auto& t = entry(r, "oracle")["tests"]["test2016"];
  EXPECT_EQ(t["p_seeds"]["baseline"], nlohmann::json({1, 2}));
  EXPECT_TRUE(t["test"]["paired"].get<bool>());
  // Δ on seeds 1 and 2: (30 + 34) / 2 − (20 + 22) / 2 = 11, not 32 − 27.33 over all of base's.
  // Means of whole numbers: one rounding at most, far inside 1e-12.
  EXPECT_NEAR(t["delta_bleu"].get<double>(), 11.0, 1e-12);
  EXPECT_NEAR(entry(r, "base")["tests"]["test2016"]["bleu"]["mean"].get<double>(), 82.0 / 3, 1e-12);
}

// The rows of the Markdown table under `heading` ("" for the main table, which has none).
std::vector<std::string> markdown_rows(const std::string& md, const std::string& heading) {
  std::istringstream in(md);
  std::vector<std::string> rows;
  bool inside = heading.empty();
  for (std::string line; std::getline(in, line);) {
    if (!inside) {
      inside = line == "## " + heading;
      continue;
    }
    if (line.rfind("|", 0) == 0) rows.push_back(line);
    else if (!rows.empty()) break;  // the table has ended
  }
  return rows;
}

TEST(Report, MarkdownTables) {
  const Grid g = make_grid("md");
  const std::vector<VariantEntry> entries = build_report(g.input, 200);
  const nlohmann::json r = to_json(entries, g.input.metric);
  const std::string md = report_markdown(entries, g.input);
  const auto rows = markdown_rows(md, "");
  ASSERT_EQ(rows.size(), 2 + r.size()) << md;  // header, rule, one row per variant
  EXPECT_NE(rows[0].find("| Variant | Params | Emb. | Red. | BLEU test2016 | \xCE\x94 BLEU | tok/s |"),
            std::string::npos)
      << rows[0];
  EXPECT_NE(rows[2].find("base (baseline)"), std::string::npos);
  EXPECT_NE(rows[2].find("7.58M"), std::string::npos);
  EXPECT_NE(rows[2].find("21.00 \xC2\xB1 1.41"), std::string::npos);
  EXPECT_NE(rows[4].find("66.7%"), std::string::npos);
  EXPECT_NE(rows[4].find("| +11.00 [+"), std::string::npos) << rows[4];  // Δ with its interval
  EXPECT_NE(rows[4].find("], p adj. <0.001 |"), std::string::npos) << rows[4];
  EXPECT_NE(rows[3].find("+0.00 [+0.00, +0.00], p adj. 1.000"), std::string::npos) << rows[3];
  EXPECT_NE(md.find("# Tie schemes on Multi30k"), std::string::npos);
  EXPECT_NE(md.find("paired bootstrap"), std::string::npos);  // the legend line
  EXPECT_NE(md.find("seeds and of the test sentences"), std::string::npos);
  size_t marked = 0;
  for (const auto& row : rows) marked += row.find("(baseline)") != std::string::npos;
  EXPECT_EQ(marked, 1u);

  // The test set's own table: every metric, Δ, interval, p and each seed's Δ.
  const auto test_rows = markdown_rows(md, "Test set test2016");
  ASSERT_EQ(test_rows.size(), 2 + r.size()) << md;
  EXPECT_NE(test_rows[0].find("| Variant | BLEU | chrF | \xCE\x94 BLEU | interval | p | p adj. | detectable | "
                              "\xCE\x94 per seed (seed) | sentences only: 95% CI, p | verdict |"),
            std::string::npos)
      << test_rows[0];
  EXPECT_NE(test_rows[4].find("+10.00 (1), +12.00 (2)"), std::string::npos) << test_rows[4];
  // Training: wall time here; the gradient shares and fractions only where runs have them.
  const auto training = markdown_rows(md, "Training");
  ASSERT_EQ(training.size(), 2 + r.size()) << md;
  EXPECT_NE(training[0].find("| Variant | wall |"), std::string::npos) << training[0];
}

TEST(Report, TrainingTableShowsGradientSharesAndEmbeddingFractions) {
  Grid g = make_grid("training");
  for (auto& run : g.input.runs) {
    run.grad_share_output_early = 0.66;
    run.grad_share_output_late = run.seed == 1 ? 0.88 : 0.90;
    run.emb_fraction = 0.5;
    run.emb_fraction_closed_form = 0.4;
    run.updates = 800;
  }
  const std::vector<VariantEntry> entries = build_report(g.input, 50);
  const nlohmann::json r = to_json(entries, g.input.metric);
  EXPECT_NEAR(entry(r, "base")["grad_share_output_late"].get<double>(), 0.89, 1e-12);
  const auto rows = markdown_rows(report_markdown(entries, g.input), "Training");
  ASSERT_EQ(rows.size(), 2 + r.size());
  EXPECT_NE(rows[0].find("| updates | wall | output share of \xE2\x88\x82W, first 10% | last 10% | Emb. / Params | "
                         "closed form |"),
            std::string::npos)
      << rows[0];
  EXPECT_NE(rows[2].find("| 800 | 1h30m | 66.0% | 89.0% | 50.0% | 40.0% |"), std::string::npos) << rows[2];
}

TEST(Report, FourTestSetsKeepTheMainTableNarrow) {
  Grid g = make_grid("four_tests");
  g.input.test_names = {"test2016", "flickr2017", "mscoco2017", "val"};
  for (const auto& t : {"flickr2017", "mscoco2017", "val"}) g.input.ref_files[t] = g.dir + "/ref.de";
  for (auto& run : g.input.runs) {
    for (const auto& t : {"flickr2017", "mscoco2017", "val"}) {
      run.tests[t].scores = {{"bleu", 10.0 + run.seed}, {"chrf", 40.0}, {"chrf_pp", 38.0}};
      run.hyp_files[t] = run.hyp_files["test2016"];
    }
  }
  const std::vector<VariantEntry> entries = build_report(g.input, 50);
  const nlohmann::json r = to_json(entries, g.input.metric);
  const std::string md = report_markdown(entries, g.input);
  // Main table: variant, Params, Emb., Red., a score and a Δ per test set, tok/s; chrF and chrF++
  // go to the four tables of their own.
  const auto rows = markdown_rows(md, "");
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(std::count(rows[0].begin(), rows[0].end(), '|'), 1 + 4 + 2 * 4 + 1) << rows[0];
  EXPECT_EQ(rows[0].find("chrF"), std::string::npos);
  for (const auto& t : {"test2016", "flickr2017", "mscoco2017", "val"})
    EXPECT_NE(markdown_rows(md, std::string("Test set ") + t)[0].find("| chrF |"), std::string::npos) << t;
  EXPECT_NE(markdown_rows(md, "Test set val")[0].find("| chrF++ |"), std::string::npos);
  // HTML: the Δ stands under its score, one column per test set.
  const std::string html = report_html(entries, g.input);
  const std::string main = html.substr(html.find("<table class=\"main\">"));
  const std::string head = main.substr(0, main.find("</thead>"));
  size_t th = 0;
  for (size_t at = head.find("<th>"); at != std::string::npos; at = head.find("<th>", at + 1)) ++th;
  EXPECT_EQ(th, 4u + 4u + 1u) << head;
  EXPECT_NE(main.find("<span class=\"note\">\xCE\x94 +11.00 ["), std::string::npos);
}

TEST(Report, SeveralTestSetsFoundInTheRuns) {
  Grid g = make_grid("two_tests");
  g.input.test_names.clear();  // found in the runs instead, in name order
  for (auto& run : g.input.runs) run.tests["flickr2017"].scores["bleu"] = 10.0 + run.seed;
  const std::vector<VariantEntry> entries = build_report(g.input, 100);
  const nlohmann::json r = to_json(entries, g.input.metric);
  const auto& t = entry(r, "oracle")["tests"];
  ASSERT_TRUE(t.contains("flickr2017"));
  EXPECT_DOUBLE_EQ(t["flickr2017"]["bleu"]["mean"].get<double>(), 11.5);
  EXPECT_DOUBLE_EQ(t["flickr2017"]["delta_bleu"].get<double>(), 0.0);
  // No reference given for it: tested on the per-seed scores alone.
  EXPECT_EQ(t["flickr2017"]["test"]["method"], "seeds");
  EXPECT_TRUE(t["flickr2017"]["sentence_bootstrap"].is_null());
  const std::string md = report_markdown(entries, g.input);
  EXPECT_NE(md.find("| BLEU flickr2017 | BLEU test2016 | \xCE\x94 BLEU flickr2017 | \xCE\x94 BLEU test2016 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("## Test set flickr2017"), std::string::npos) << md;
}

TEST(Report, CsvParsesBackToTheNumbers) {
  Grid g = make_grid("csv");
  for (auto& run : g.input.runs) {
    if (run.variant == "same") run.variant = "tie, \"all\"";
  }
  g.input.variant_order = {"base", "tie, \"all\"", "oracle"};
  const std::vector<VariantEntry> entries = build_report(g.input, 200);
  const nlohmann::json r = to_json(entries, g.input.metric);
  const std::string csv = report_csv(entries, g.input);
  EXPECT_EQ(csv.find("\xC2\xB1"), std::string::npos);  // no ± formatting
  const auto rows = parse_csv(csv);
  ASSERT_EQ(rows.size(), 4u);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < rows[0].size(); ++i) col[rows[0][i]] = i;
  for (const auto& row : rows) ASSERT_EQ(row.size(), rows[0].size());
  EXPECT_EQ(rows[2][col["variant"]], "tie, \"all\"");
  EXPECT_EQ(rows[1][col["baseline"]], "true");
  EXPECT_DOUBLE_EQ(std::stod(rows[1][col["test2016.bleu.mean"]]), 21.0);
  EXPECT_NEAR(std::stod(rows[1][col["test2016.bleu.std"]]), std::sqrt(2.0), 1e-10);
  EXPECT_DOUBLE_EQ(std::stod(rows[3][col["test2016.bleu.mean"]]), 32.0);
  EXPECT_DOUBLE_EQ(std::stod(rows[3][col["test2016.chrf.mean"]]), 62.0);
  EXPECT_DOUBLE_EQ(std::stod(rows[3][col["test2016.delta_bleu"]]), 11.0);
  EXPECT_DOUBLE_EQ(std::stod(rows[1][col["params"]]), 7.58e6);
  EXPECT_NEAR(std::stod(rows[3][col["red"]]), 2.0 / 3, 1e-10);
  EXPECT_EQ(rows[1][col["test2016.p_value"]], "");
  EXPECT_LT(std::stod(rows[3][col["test2016.p_value"]]), 0.05);
}

TEST(Report, HtmlIsSelfContained) {
  const Grid g = make_grid("html");
  const std::vector<VariantEntry> entries = build_report(g.input, 200);
  const nlohmann::json r = to_json(entries, g.input.metric);
  const std::string html = report_html(entries, g.input);
  EXPECT_EQ(tag_balance(html.substr(html.find("<html"))), "");
  EXPECT_NE(html.find("<table"), std::string::npos);
  EXPECT_NE(html.find("<img src=\"pictures/loss.svg\""), std::string::npos);
  EXPECT_NE(html.find("<img src=\"pictures/norms.png\""), std::string::npos);
  EXPECT_NE(html.find("Norms &amp; ranks"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("<strong>32.00"), std::string::npos);  // best BLEU in bold
  EXPECT_NE(html.find("<strong>5.10M"), std::string::npos);  // fewest parameters in bold
  EXPECT_NE(html.find("Generated by yoke from the files of this folder"), std::string::npos);
  EXPECT_EQ(html.find("UTC"), std::string::npos);  // no time stamp: a rebuilt report is the same bytes
  EXPECT_EQ(html.find("<strong>1h30m"), std::string::npos);  // all equal: nothing is best
}

TEST(Report, OverriddenSettingsAreSaidUnderTheTitle) {
  Grid g = make_grid("overrides");
  const std::vector<VariantEntry> entries = build_report(g.input, 200);
  const nlohmann::json r = to_json(entries, g.input.metric);
  EXPECT_EQ(report_markdown(entries, g.input).find("in place of the grid's"), std::string::npos);  // none given
  g.input.overrides = {"max_minutes=0", "max_updates=300"};
  const std::string md = report_markdown(entries, g.input);
  const size_t line = md.find("Every run with these settings in place of the grid's: max_minutes=0 max_updates=300.");
  ASSERT_NE(line, std::string::npos) << md;
  EXPECT_LT(md.find("# Tie schemes"), line);
  EXPECT_LT(line, md.find("| Variant"));  // before the tables
  EXPECT_NE(report_html(entries, g.input).find("max_minutes=0 max_updates=300.</p>"), std::string::npos);
  write_report(g.dir + "/out-overrides", g.input);
  const auto j = nlohmann::json::parse(read_file(g.dir + "/out-overrides/report.json"));
  EXPECT_EQ(j["overrides"], nlohmann::json({"max_minutes=0", "max_updates=300"}));
}

TEST(Report, WriteReportWritesFourFiles) {
  const Grid g = make_grid("write");
  const std::string out = g.dir + "/out/nested";
  write_report(out, g.input);
  for (const char* f : {"report.json", "report.md", "report.csv", "report.html"}) {
    EXPECT_GT(fs::file_size(out + "/" + f), 100u) << f;
  }
  const auto j = nlohmann::json::parse(read_file(out + "/report.json"));
  EXPECT_EQ(j["title"], g.input.title);
  ASSERT_EQ(j["variants"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["variants"][2]["tests"]["test2016"]["delta_bleu"].get<double>(), 11.0);
}

}  // namespace
}  // namespace yoke
