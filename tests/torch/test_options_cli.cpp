// The command line from the config table and CLI11: the README's key table is the program's,
// `--help` lists every key, settings apply in command-line order, and usage errors name the
// option or the origin of a bad value and exit with code 2.
#include <gtest/gtest.h>

#include <regex>
#include <sys/wait.h>

#include <cstdlib>
#include <tuple>

#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "config/config.h"

using namespace yoke;
using namespace yoke::test;

namespace {

// Runs a command that must fail with a usage error; returns its standard error.
std::string usage_error(const std::vector<std::string>& args) {
  const auto log = work_dir() / "usage.log";
  EXPECT_EQ(run(args, log), 2) << slurp(log);
  return slurp(log);
}

}  // namespace

TEST(OptionsCli, KeyTableDocIsTheProgramsOutput) {
  const std::string readme = slurp(fs::path(YOKE_SOURCE_DIR) / "docs" / "config-keys.md");
  const std::string begin = "<!-- config-keys:begin -->\n", end = "<!-- config-keys:end -->";
  const auto a = readme.find(begin), b = readme.find(end);
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  const std::string block = readme.substr(a + begin.size(), b - a - begin.size());
  EXPECT_EQ(block, output_of({YOKE_BINARY, "train", "--keys-markdown"}))
      << "docs/config-keys.md's block is stale: replace it with `build/yoke train --keys-markdown`";
}

TEST(OptionsCli, TrainHelpListsEveryKey) {
  for (const char* command : {"train", "params"}) {
    const std::string help = output_of({YOKE_BINARY, command, "--help"});
    EXPECT_EQ(help.rfind(std::string("usage: yoke ") + command + " [options]\n", 0), 0u) << help;
    // Help texts are wrapped: compare with runs of blanks made one space.
    std::string flat;
    for (char c : help) {
      if (c == '\n' || c == ' ') { if (!flat.empty() && flat.back() != ' ') flat += ' '; }
      else flat += c;
    }
    for (const auto& k : config_keys()) {
      std::string placeholder = k.type == "integer" ? "INT" : k.type == "number" ? "NUMBER" : k.type == "boolean" ? "BOOL" : "TEXT";
      if (!k.choices.empty()) {
        placeholder = "{";
        for (const auto& c : k.choices) placeholder += (placeholder.size() > 1 ? "," : "") + c;
        placeholder += "}";
      }
      EXPECT_NE(flat.find("--" + k.name + " " + placeholder + " "), std::string::npos) << k.name;
      EXPECT_NE(flat.find(k.help), std::string::npos) << k.name;
      if (!k.default_value.empty())
        EXPECT_NE(flat.find(k.help + " (default: " + k.default_value + ")"), std::string::npos) << k.name;
      EXPECT_NE(flat.find(k.section + ":"), std::string::npos) << k.section;
    }
  }
}

TEST(OptionsCli, LaterSettingsWinInCommandLineOrder) {
  const auto conf = work_dir() / "order.conf";
  std::ofstream(conf) << "tie = none\noutput = cosine\nd_model = 64\nheads = 4\nsrc_vocab_size = 100\n"
                         "tgt_vocab_size = 100\njoint_vocab = true\n";
  auto tie_of = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {YOKE_BINARY, "params", "--json"});
    return nlohmann::json::parse(output_of(args)).at("tie").get<std::string>();
  };
  EXPECT_EQ(tie_of({"--config", conf.string()}), "none");
  EXPECT_EQ(tie_of({"--config", conf.string(), "--set", "tie=all", "--tie", "decoder"}), "decoder");
  EXPECT_EQ(tie_of({"--tie", "decoder", "--config", conf.string(), "--set=tie=all"}), "all");  // the file comes first
  EXPECT_EQ(tie_of({"--config", conf.string(), "--tie=all", "--set", "tie=src-tgt"}), "src-tgt");
  const auto j = nlohmann::json::parse(output_of({YOKE_BINARY, "params", "--config", conf.string(), "--json"}));
  EXPECT_EQ(j.at("output"), "cosine");
}

TEST(OptionsCli, BadValuesNameTheirOrigin) {
  const auto conf = work_dir() / "bad-tie.conf";
  std::ofstream(conf) << "d_model = 32\n# the sharing scheme\ntie = al\n";
  EXPECT_NE(usage_error({YOKE_BINARY, "train", "--config", conf.string()})
                .find("yoke train: error: tie = al: expected none, decoder, all, src-tgt, shared-private — " +
                      conf.string() + " line 3"),
            std::string::npos);
  EXPECT_NE(usage_error({YOKE_BINARY, "train", "--tie", "al"})
                .find("yoke train: error: tie = al: expected none, decoder, all, src-tgt, shared-private — command line"),
            std::string::npos);
  EXPECT_NE(usage_error({YOKE_BINARY, "params", "--set", "output=cos"})
                .find("output = cos: expected dot, l2, square, distance, cosine — command line"),
            std::string::npos);
  // Two keys from two places: each named with its own (d_model from the command line, heads from
  // the file), not the file for both.
  const auto heads = work_dir() / "heads.conf";
  std::ofstream(heads) << "d_model = 32\nheads = 2\n";
  const std::string both = usage_error({YOKE_BINARY, "params", "--config", heads.string(), "--d-model", "31"});
  EXPECT_NE(both.find("d_model (31, command line: --d_model 31) must be divisible by heads (2, " + heads.string() +
                      " line 2)"),
            std::string::npos) << both;
}

// Decoding options take the ranges of the config keys they stand for: each value below was taken
// before (a backtrace for --threads -3, nan scores for --lenpen nan, two minutes a sentence for
// --beam 10000).
TEST(OptionsCli, DecodingOptionsAreRangeChecked) {
  for (const auto& [option, value, range] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"--threads", "-3", "in [0, 4096]"},
                                                                      {"--lenpen", "nan", "in [0, 10]"},
                                                                      {"--beam", "10000", "in [1, 1024]"},
                                                                      {"--beam", "0", "in [1, 1024]"},
                                                                      {"--max-len-a", "-1", ">= 0"}}) {
    const std::string e = usage_error({YOKE_BINARY, "translate", "--model", "m", option, value});
    EXPECT_NE(e.find("yoke translate: error: " + option + " must be " + range + ", got " + value), std::string::npos)
        << e;
  }
  EXPECT_NE(usage_error({YOKE_BINARY, "score-pairs", "--model", "m", "--src", "s", "--tgt", "t", "--lenpen", "-5"})
                .find("--lenpen must be in [0, 10], got -5"),
            std::string::npos);
}

// prepare's sizes and ratio: 0 pairs a shard wrote a file a pair; NaN, negative or sub-1 ratios
// silently meant "off". Refused before any file is read.
TEST(OptionsCli, PrepareRefusesEmptyShardsAndRatiosThatMeanNothing) {
  const std::vector<std::string> base = {YOKE_BINARY, "prepare", "--train-src", "a", "--train-tgt", "b",
                                         "--valid-src", "c", "--valid-tgt", "d", "--out", "o"};
  const auto with = [&](std::vector<std::string> more) {
    auto args = base;
    args.insert(args.end(), more.begin(), more.end());
    return usage_error(args);
  };
  EXPECT_NE(with({"--shard-size", "0"}).find("yoke prepare: error: --shard-size must be at least 1 pair, got 0"),
            std::string::npos);
  EXPECT_NE(with({"--chunk-size", "0"}).find("--chunk-size must be at least 1 pair"), std::string::npos);
  for (const char* r : {"nan", "-1", "0.5"})
    EXPECT_NE(with({"--max-ratio", r}).find("--max-ratio must be 0 (off) or at least 1"), std::string::npos) << r;
}

TEST(OptionsCli, UsageErrorsNameTheCommandAndOption) {
  EXPECT_NE(usage_error({YOKE_BINARY, "translate", "--model", "m", "--bem", "3"})
                .find("yoke translate: error: unknown option --bem (did you mean --beam?)"),
            std::string::npos);
  EXPECT_NE(usage_error({YOKE_BINARY, "train", "--d_modle", "32"}).find("did you mean --d_model?"), std::string::npos);
  EXPECT_NE(usage_error({YOKE_BINARY, "score", "--hyp", "h.txt"}).find("yoke score: error: --ref is required"),
            std::string::npos);
  EXPECT_NE(usage_error({YOKE_BINARY, "translate", "--model", "m", "--beam", "abc"})
                .find("yoke translate: error: --beam expects a whole number, got 'abc'"),
            std::string::npos);
  EXPECT_NE(usage_error({YOKE_BINARY, "generate", "--model", "m", "--top-p", "most"})
                .find("--top-p expects a number, got 'most'"),
            std::string::npos);
  EXPECT_NE(usage_error({YOKE_BINARY, "average", "--model"}).find("--model needs a value (DIR)"), std::string::npos);
  EXPECT_NE(usage_error({YOKE_BINARY, "prepare", "--lm", "--out", "x"}).find("--train is required"), std::string::npos);
  // Values out of the option's range are said as given, not as the integer they wrap to.
  EXPECT_NE(usage_error({YOKE_BINARY, "translate", "--model", "m", "--threads", "99999999999"})
                .find("--threads expects a whole number from -2147483648 to 2147483647, got 99999999999"),
            std::string::npos);
  EXPECT_NE(usage_error({YOKE_BINARY, "prepare", "--train-src", "a", "--train-tgt", "b", "--valid-src", "c", "--valid-tgt",
                         "d", "--out", "o", "--shard-size", "-1"})
                .find("--shard-size expects a whole number from 0 to 18446744073709551615, got -1"),
            std::string::npos);
  EXPECT_NE(usage_error({YOKE_BINARY, "prepare", "--train-src", "a", "--train-tgt", "b", "--valid-src", "c", "--valid-tgt",
                         "d", "--out", "o", "--vocab-from", ""})
                .find("--vocab-from is empty"),
            std::string::npos);
  // A second reference would replace the first: refused.
  EXPECT_NE(usage_error({YOKE_BINARY, "score", "--hyp", "h.txt", "--ref", "a.txt", "--ref", "b.txt"})
                .find("--ref given 2 times"),
            std::string::npos);
}

TEST(OptionsCli, EveryCommandHasHelp) {
  for (const char* command : {"demo", "prepare", "train", "translate", "score", "average", "align", "pair", "experiment",
                              "compare", "analyze", "inspect", "eval-lm", "generate", "params", "score-pairs", "quantize"}) {
    const std::string help = output_of({YOKE_BINARY, command, "--help"});
    EXPECT_EQ(help.rfind(std::string("usage: yoke ") + command + " [options]\n\n", 0), 0u) << help;
    EXPECT_NE(help.find("  -h, --help"), std::string::npos) << command;
    // Ranges and choices read in the text, not glued to the value's name ("--beam N:in [1, 1024]").
    EXPECT_EQ(help.find(":in ["), std::string::npos) << help;
    EXPECT_EQ(help.find(":{"), std::string::npos) << help;
  }
  EXPECT_NE(output_of({YOKE_BINARY, "translate", "--help"}).find("--beam N                  beam width; 1 = greedy search (in [1, 1024])"),
            std::string::npos);
}

// `yoke --version`: the version, the commit built from (12 hex digits, "+dirty" with uncommitted
// changes, "unknown" outside git) and LibTorch's version, on one line; exit 0.
TEST(OptionsCli, VersionSaysTheVersionTheCommitAndLibTorch) {
  const std::string line = output_of({YOKE_BINARY, "--version"});
  const std::regex form(R"(yoke \d+\.\d+\.\d+ \(commit ([0-9a-f]{12}(\+dirty)?|unknown), LibTorch \d+\.\d+\.\d+[^)]*\)\n)");
  EXPECT_TRUE(std::regex_match(line, form)) << line;
  EXPECT_EQ(output_of({YOKE_BINARY, "version"}), line);
}

TEST(OptionsCli, HelpToAFullDeviceIsAnError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  for (const std::string args : {"--help", "translate --help"}) {
    const int status = std::system((std::string(YOKE_BINARY) + " " + args + " > /dev/full 2> /dev/null").c_str());
    ASSERT_TRUE(WIFEXITED(status)) << args;
    EXPECT_EQ(WEXITSTATUS(status), 1) << "yoke " << args << " > /dev/full";
  }
}
