// The config table: enum names round-trip, values are checked where they are read and errors
// name their origin, JSON keeps the names (so old checkpoints load), and every key is described.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "config/config.h"
#include "config/config_diff.h"
#include "config/key_ranges.h"
#include "util/error.h"

using namespace yoke;
namespace fs = std::filesystem;

namespace {

template <class E>
void expect_round_trip(std::initializer_list<E> all) {
  EXPECT_EQ(names_of<E>().size(), all.size());
  for (E e : all) {
    EXPECT_EQ(enum_from_name<E>(name_of(e)), e) << name_of(e);
    EXPECT_EQ(parse_enum<E>("key", name_of(e)), e);
  }
  EXPECT_FALSE(enum_from_name<E>("no-such-name").has_value());
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(ConfigEnums, NamesRoundTrip) {
  expect_round_trip({Task::translate, Task::lm});
  expect_round_trip({Tie::none, Tie::decoder, Tie::all, Tie::src_tgt, Tie::shared_private});
  expect_round_trip({Estimator::dot, Estimator::l2, Estimator::square, Estimator::distance, Estimator::cosine});
  EXPECT_STREQ(name_of(Tie::src_tgt), "src-tgt");
  EXPECT_STREQ(name_of(Tie::shared_private), "shared-private");
  EXPECT_EQ(error_of([] { parse_enum<Estimator>("output", "cos"); }),
            "output = cos: expected dot, l2, square, distance, cosine");
}

TEST(ConfigEnums, SetFromTextParsesOnce) {
  Config c;
  c.set("tie", "shared-private");
  c.set("output", "cosine");
  c.set("task", "lm");
  EXPECT_EQ(c.tie, Tie::shared_private);
  EXPECT_EQ(c.output, Estimator::cosine);
  EXPECT_EQ(c.task, Task::lm);
}

TEST(ConfigJson, WritesNamesAndReadsThemBack) {
  Config c;
  c.tie = Tie::src_tgt;
  c.output = Estimator::l2;
  c.task = Task::lm;
  c.d_model = 64;
  c.norm = Norm::post;
  const auto j = c.to_json();
  EXPECT_EQ(j.at("tie"), "src-tgt");
  EXPECT_EQ(j.at("output"), "l2");
  EXPECT_EQ(j.at("task"), "lm");
  const Config back = Config::from_json(j);
  EXPECT_EQ(back.to_json(), j);
  EXPECT_EQ(back.tie, Tie::src_tgt);
}

// A checkpoint's config as older versions wrote it (strings, a subset of today's keys).
TEST(ConfigJson, ReadsAnOldCheckpointConfig) {
  const auto j = nlohmann::json::parse(
      R"({"task": "translate", "tie": "shared-private", "output": "cosine", "d_model": 128, "pairs": "p.tsv"})");
  const Config c = Config::from_json(j);
  EXPECT_EQ(c.tie, Tie::shared_private);
  EXPECT_EQ(c.output, Estimator::cosine);
  EXPECT_EQ(c.d_model, 128);
  EXPECT_EQ(c.heads, Config{}.heads);  // missing keys keep their defaults
  EXPECT_THROW(Config::from_json(nlohmann::json{{"tie", "three-way"}}), InputError);
}

TEST(ConfigErrors, BadValueFromAFileNamesFileAndLine) {
  const auto path = (fs::temp_directory_path() / "yoke_config_test.conf").string();
  std::ofstream(path) << "d_model = 32\n# a comment\n\ntie = al\n";
  EXPECT_EQ(error_of([&] { load_config_file(path); }),
            "tie = al: expected none, decoder, all, src-tgt, shared-private — " + path + " line 4");
  std::ofstream(path) << "heads = two\n";
  EXPECT_EQ(error_of([&] { load_config_file(path); }), "heads = two: expected a whole number — " + path + " line 1");
  std::ofstream(path) << "norm = middle\n";
  EXPECT_EQ(error_of([&] { load_config_file(path); }), "norm = middle: expected pre, post — " + path + " line 1");
  std::ofstream(path) << "d_modle = 32\n";
  EXPECT_NE(error_of([&] { load_config_file(path); }).find("did you mean 'd_model'"), std::string::npos);
  // A key set twice (also once as d-model) is a mistake, not an override: both lines named.
  std::ofstream(path) << "d_model = 64\nheads = 2\nd-model = 32\n";
  EXPECT_EQ(error_of([&] { load_config_file(path); }), path + ":3: d-model is set twice, on line 1 and here: keep one");
  fs::remove(path);
}

// "the default" names a value only where it is the default: values read from a checkpoint or an
// export have no origin and may not be the defaults.
TEST(ConfigErrors, TheDefaultIsSaidOnlyOfADefault) {
  Config c = Config::from_json(nlohmann::json{{"d_model", 32}, {"heads", 3}});
  const std::string e = error_of([&] { c.validate(); });
  EXPECT_NE(e.find("d_model (32) must be divisible by heads (3)"), std::string::npos) << e;
  c = Config{};
  c.heads = 7;
  EXPECT_NE(error_of([&] { c.validate(); }).find("(" + std::to_string(Config{}.d_model) + ", the default)"),
            std::string::npos);
}

TEST(ConfigErrors, BadValueFromTheCommandLineSaysSo) {
  Config c;
  EXPECT_EQ(error_of([&] { apply_overrides(c, {"output=cos"}, "command line"); }),
            "output = cos: expected dot, l2, square, distance, cosine — command line");
  EXPECT_EQ(error_of([&] { c.set("valid_bleu", "maybe", "command line"); }),
            "valid_bleu = maybe: expected true or false — command line");
  EXPECT_EQ(error_of([&] { c.set("lr", "fast", "command line"); }), "lr = fast: expected a number — command line");
  c.set("max-tokens", "300", "command line");  // '-' reads as '_'
  EXPECT_EQ(c.max_tokens, 300);
}

TEST(ConfigErrors, RangeErrorsAndUnclosedQuotesNameFileAndLine) {
  const auto path = (fs::temp_directory_path() / "yoke_config_range.conf").string();
  std::ofstream(path) << "d_model = 32\nlr = 0\n";
  Config c = load_config_file(path);
  EXPECT_EQ(error_of([&] { c.validate(); }), "lr must be positive, got 0 — " + path + " line 2");
  std::ofstream(path) << "heads = 4\nd_model = 30\n";
  c = load_config_file(path);
  // Both keys, each with where it was set.
  EXPECT_EQ(error_of([&] { c.validate(); }),
            "d_model (30, " + path + " line 2) must be divisible by heads (4, " + path + " line 1)");
  std::ofstream(path) << "# data\ndata = \"runs/x\n";
  EXPECT_EQ(error_of([&] { load_config_file(path); }), path + ":2: unclosed quote in 'data = \"runs/x'");
  std::ofstream(path) << "data = \"runs/x\"\n";
  EXPECT_EQ(load_config_file(path).data, "runs/x");
  apply_overrides(c, {"dropout=1.5"}, "--set dropout=1.5");
  c.heads = 2;
  EXPECT_EQ(error_of([&] { c.validate(); }), "dropout must be in [0, 1), got 1.5 — --set dropout=1.5");
  fs::remove(path);
}

// Enumerated keys are enums from the moment they are read: a name outside the set is refused there.
TEST(ConfigErrors, EnumeratedKeysAreReadAsEnums) {
  Config c;
  EXPECT_EQ(error_of([&] { c.set("device", "tpu"); }), "device = tpu: expected cpu, cuda, auto");
  EXPECT_EQ(error_of([&] { c.set("arch", "rnn"); }), "arch = rnn: expected transformer, lightconv, dynamicconv");
  c.set("embed_scale", "1");
  EXPECT_EQ(c.embed_scale, EmbedScale::one);
  EXPECT_EQ(c.to_json().at("embed_scale"), "1");  // checkpoints keep the names they always held
  c.set("arch", "dynamicconv");
  EXPECT_EQ(c.arch, Arch::dynamicconv);
  c.device = Device::cuda;
  c.heads = 3;
  EXPECT_NE(error_of([&] { c.validate(); }).find("divisible by heads"), std::string::npos);
}

TEST(ConfigKeys, EveryKeyIsDescribed) {
  const auto json = Config{}.to_json();
  ASSERT_EQ(config_keys().size(), json.size());
  for (const auto& k : config_keys()) {
    EXPECT_TRUE(json.contains(k.name)) << k.name;
    EXPECT_FALSE(k.help.empty()) << k.name;
    EXPECT_FALSE(k.section.empty()) << k.name;
    EXPECT_EQ(k.type == "choice", !k.choices.empty()) << k.name;
    // The default as described reads back as the default.
    Config c;
    c.set(k.name, k.default_value);
    EXPECT_EQ(c.to_json().at(k.name), json.at(k.name)) << k.name;
  }
  const auto tie = std::find_if(config_keys().begin(), config_keys().end(), [](auto& k) { return k.name == "tie"; });
  EXPECT_EQ(tie->choices, names_of<Tie>());
  EXPECT_EQ(tie->default_value, "decoder");
}

// Every int and double key has a range (config/key_ranges.h) and validate() refuses a value just
// outside it, and NaN, naming the key and where it was set; the defaults lie inside.
TEST(ConfigKeys, EveryNumericKeyRejectsValuesOutsideItsRange) {
  Config{}.validate();
  size_t numeric = 0;
  for (const auto& k : config_keys()) {
    if (k.type != "integer" && k.type != "number") {
      EXPECT_EQ(key_range(k.name), nullptr) << k.name;
      continue;
    }
    ++numeric;
    const KeyRange* r = key_range(k.name);
    ASSERT_NE(r, nullptr) << k.name << " has no range";
    std::vector<std::string> outside;
    // Just below the lower bound (the bound itself when it is open), just above the upper one.
    if (std::isfinite(r->lo)) outside.push_back(r->lo_open ? std::to_string(r->lo) : std::to_string(r->lo - 1));
    if (std::isfinite(r->hi)) outside.push_back(r->hi_open ? std::to_string(r->hi) : std::to_string(r->hi + 1));
    if (k.type == "number") outside.push_back("nan");
    ASSERT_FALSE(outside.empty()) << k.name << ": a range with no bound";
    for (const auto& v : outside) {
      Config c;
      const std::string value = k.type == "integer" ? std::to_string(int(std::stod(v))) : v;
      // Refused when read (not a number) or when checked: either way the message names key and place.
      const std::string e = error_of([&] {
        c.set(k.name, value, "--set " + k.name + "=" + value);
        c.validate();
      });
      EXPECT_NE(e.find(k.name), std::string::npos) << k.name << "=" << value << ": " << e;
      EXPECT_NE(e.find("--set " + k.name), std::string::npos) << k.name << "=" << value << ": " << e;
    }
  }
  EXPECT_GE(numeric, 40u);
  // Examples from the second probe: each was accepted silently before.
  for (const char* bad : {"adam_beta1=1.5", "activation_dropout=1", "weight_decay=-1", "clip_norm=-1", "keep_last=-3",
                          "valid_interval=-1", "patience=-1", "max_len_a=-1", "lenpen=-5", "attention_dropout=2",
                          "beam=10000"}) {
    Config c;
    const std::string kv = bad;
    EXPECT_FALSE(error_of([&] {
                   c.set(kv.substr(0, kv.find('=')), kv.substr(kv.find('=') + 1), std::string("--set ") + bad);
                   c.validate();
                 }).empty())
        << bad;
  }
}

TEST(ConfigErrors, FactoredRankErrorsNameWhereItWasSet) {
  Config c;
  c.set("factored_rank", "300", "--set factored_rank=300");
  EXPECT_EQ(error_of([&] { c.validate(); }),
            "factored_rank (300) must be smaller than d_model (256) to save parameters — --set factored_rank=300");
  c.set("factored_rank", "16", "--set factored_rank=16");
  c.set("tie", "shared-private");
  EXPECT_NE(error_of([&] { c.validate(); }).find("— --set factored_rank=16"), std::string::npos);
}

TEST(ConfigKeys, MarkdownHasARowPerKey) {
  const std::string md = config_keys_markdown();
  EXPECT_EQ(md.rfind("| key | type | default | meaning |\n", 0), 0u);
  for (const auto& k : config_keys()) EXPECT_NE(md.find("| `" + k.name + "` |"), std::string::npos) << k.name;
  EXPECT_NE(md.find("| `tie` | `none`, `decoder`, `all`, `src-tgt`, `shared-private` | `decoder` |"), std::string::npos);
}

// arch = lightconv | dynamicconv: per-layer kernel sizes from a comma list (one value = every
// layer; the paper's longer default list is cut to the depth), with errors that name the key.
TEST(ConfigKernels, ListsAreReadPerLayer) {
  Config c;
  c.arch = Arch::dynamicconv;
  c.encoder_layers = 3;
  c.decoder_layers = 6;
  EXPECT_EQ(c.encoder_kernel_sizes(), (std::vector<int>{3, 7, 15}));
  EXPECT_EQ(c.decoder_kernel_sizes(), (std::vector<int>{3, 7, 15, 31, 31, 31}));
  apply_overrides(c, {"encoder_kernels= 5"}, "command line");
  EXPECT_EQ(c.encoder_kernel_sizes(), (std::vector<int>{5, 5, 5}));
  c.task = Task::lm;
  EXPECT_TRUE(c.encoder_kernel_sizes().empty());
  c.task = Task::translate;
  apply_overrides(c, {"encoder_kernels=3,x"}, "command line");
  EXPECT_EQ(error_of([&] { c.validate(); }),
            "encoder_kernels = 3,x: expected positive whole numbers separated by commas — command line");
  c.encoder_kernels = "3,5";
  EXPECT_NE(error_of([&] { c.validate(); }).find("2 kernel sizes for 3 layers"), std::string::npos);
  c.encoder_kernels = "3,5,7";
  c.validate();
  c.cross_layer = true;
  EXPECT_NE(error_of([&] { c.validate(); }).find("gives the layers different kernel sizes"), std::string::npos);
  c.arch = Arch::transformer;  // the lists are not read without convolutions
  c.validate();
  c.arch = Arch::lightconv;
  c.cross_layer = false;
  c.conv_weight_dropout = 1.0;
  EXPECT_EQ(error_of([&] { c.validate(); }), "conv_weight_dropout must be in [0, 1), got 1");
}

// `yoke experiment --nproc N` hands each run's config to its workers as a file: every value,
// text with spaces and quotes, and numbers to the last digit must come back as they were.
TEST(ConfigFile, WrittenConfigReadsBackToTheSameValues) {
  Config cfg;
  cfg.set("save_dir", " runs/with spaces ");
  cfg.set("data", "\"quoted\" dir");
  cfg.set("pairs", "");
  cfg.set("lr", "0.00070000000000000001");
  cfg.set("dropout", "0.3");
  cfg.set("tie", "shared-private");
  cfg.set("conv_glu", "false");
  cfg.set("encoder_kernels", "3,7,15");
  const auto path = std::filesystem::temp_directory_path() / ("yoke_config_file_" + std::to_string(::getpid()) + ".conf");
  std::ofstream(path) << config_file_text(cfg);
  const Config back = load_config_file(path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(back.to_json(), cfg.to_json());
  EXPECT_EQ(back.save_dir, " runs/with spaces ");
  EXPECT_EQ(back.lr, cfg.lr);  // exact: the text holds enough digits to read back the same double

  Config comment;
  comment.set("data", "dir#1");
  EXPECT_THROW(config_file_text(comment), InputError);
}

// A resume compares the configs: keys that define the model (or what the recorded best means)
// are refused; limits, schedule, validation, logging, threads and paths may change.
TEST(ConfigResume, ModelKeysAreFixedAndTheRestMayChange) {
  Config before;
  Config after = before;
  EXPECT_TRUE(config_changes(before, after).empty());
  after.heads = 8;
  after.output = Estimator::cosine;
  after.max_updates = 500;
  after.lr = 5e-4;
  after.data = "other/data";
  const auto changes = config_changes(before, after);
  ASSERT_EQ(changes.size(), 5u);
  std::vector<std::string> fixed, allowed;
  for (const auto& c : changes) (c.allowed ? allowed : fixed).push_back(c.key);
  EXPECT_EQ(fixed, (std::vector<std::string>{"heads", "output"}));  // in the order of config_keys.h
  EXPECT_EQ(allowed, (std::vector<std::string>{"data", "lr", "max_updates"}));
  EXPECT_EQ(describe_changes(changes), "data \"\" → other/data, heads 4 → 8, output dot → cosine, lr 0.001 → 0.0005, "
                                       "max_updates 0 → 500");
  for (const char* key : {"task", "joint_vocab", "d_model", "norm", "positions", "max_positions", "tie", "embed_scale",
                          "factored_rank", "cross_layer", "arch", "encoder_kernels", "lambda_lm", "early_stop_metric"})
    EXPECT_FALSE(may_change_on_resume(key)) << key;
  for (const char* key : {"max_epochs", "warmup", "valid_interval", "patience", "keep_last", "threads", "log_interval",
                          "dropout", "save_dir", "device", "beam"})
    EXPECT_TRUE(may_change_on_resume(key)) << key;
  EXPECT_FALSE(may_change_on_resume("no_such_key"));
}
