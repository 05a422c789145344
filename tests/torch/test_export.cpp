// Models that travel: safetensors files (format checks with the file named), export → import
// giving the same parameters bit for bit under every tie scheme, estimator, factored and
// shared-private matrices and every arch, python/yoke_torch.py giving yoke's log-probabilities
// and greedy translations, and the command line's export / import / translate round trip.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "align/pair_data.h"
#include "cli_helpers.h"
#include "export_models.h"
#include "decode/search.h"
#include "store/checkpoint.h"
#include "store/model_export.h"
#include "store/model_store.h"
#include "store/safetensors.h"
#include "text/data_meta.h"
#include "text/vocab.h"
#include "text/vocab_files.h"
#include "util/error.h"
#include "margin.h"

namespace fs = std::filesystem;
using namespace yoke;
using namespace yoke::test;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// ---- the file format --------------------------------------------------------------------------

fs::path tensors_file(const std::string& name) {
  const auto p = work_dir() / (name + ".safetensors");
  SafeTensors f;
  f.tensors["a"] = at::arange(6, at::kFloat).view({2, 3});
  f.tensors["b"] = at::tensor({1, -2, 3}, at::kLong);
  f.tensors["c"] = at::zeros({0, 4}, at::kBFloat16);
  f.metadata["note"] = "kept";
  save_safetensors(p.string(), f);
  return p;
}

// A file with a hand-written header over `data_bytes` bytes of data.
fs::path raw_file(const std::string& name, const std::string& header, size_t data_bytes, uint64_t claimed_length = 0) {
  const auto p = work_dir() / (name + ".safetensors");
  std::ofstream out(p, std::ios::binary);
  const uint64_t len = claimed_length ? claimed_length : header.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out << header << std::string(data_bytes, '\0');
  return p;
}

TEST(Safetensors, RoundTripKeepsValuesTypesShapesAndMetadataInTheStandardLayout) {
  const auto p = tensors_file("roundtrip");
  const auto back = load_safetensors(p.string());
  ASSERT_EQ(back.tensors.size(), 3u);
  EXPECT_TRUE(at::equal(back.tensors.at("a"), at::arange(6, at::kFloat).view({2, 3})));
  EXPECT_TRUE(at::equal(back.tensors.at("b"), at::tensor({1, -2, 3}, at::kLong)));
  EXPECT_EQ(back.tensors.at("c").scalar_type(), at::kBFloat16);
  EXPECT_EQ(back.tensors.at("c").sizes(), at::IntArrayRef({0, 4}));
  EXPECT_EQ(back.metadata.at("note"), "kept");
  // The layout other readers expect: uint64 length, a JSON header padded to 8 bytes, packed data.
  std::ifstream in(p, std::ios::binary);
  uint64_t len = 0;
  in.read(reinterpret_cast<char*>(&len), 8);
  std::string header(len, '\0');
  in.read(header.data(), std::streamsize(len));
  EXPECT_EQ(len % 8, 0u);
  const auto j = nlohmann::json::parse(header);
  EXPECT_EQ(j.at("a").at("dtype"), "F32");
  EXPECT_EQ(j.at("a").at("data_offsets"), nlohmann::json({0, 24}));
  EXPECT_EQ(j.at("b").at("data_offsets"), nlohmann::json({24, 48}));
  EXPECT_EQ(j.at("__metadata__").at("note"), "kept");
  EXPECT_EQ(fs::file_size(p), 8 + len + 48);
}

// Two tensors whose byte ranges overlap: 4 bytes of x are y's too.
fs::path overlapping_tensors_file(const std::string& name) {
  return raw_file(name,
                  R"({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                  R"( "y": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                  12);
}

// The header alone: the same names, dtypes, shapes and byte ranges as the loaded file, and the
// same refusals of a damaged one, without reading the data.
TEST(Safetensors, TheIndexDescribesWhatLoadingReads) {
  const auto p = tensors_file("index");
  const auto index = read_safetensors_index(p.string());
  const auto back = load_safetensors(p.string());
  ASSERT_EQ(index.tensors.size(), back.tensors.size());
  for (const auto& [name, t] : back.tensors) {
    const auto& e = index.tensors.at(name);
    EXPECT_EQ(e.dtype, t.scalar_type()) << name;
    EXPECT_EQ(at::IntArrayRef(e.shape), t.sizes()) << name;
    EXPECT_EQ(e.end - e.begin, uint64_t(t.numel()) * t.element_size()) << name;
  }
  EXPECT_EQ(index.metadata, back.metadata);
  EXPECT_EQ(index.data_start + 48, fs::file_size(p));  // a: 24 bytes, b: 24, c: none
  const auto overlap = overlapping_tensors_file("index-overlap");
  EXPECT_NE(error_of([&] { read_safetensors_index(overlap.string()); }).find("tensors x and y overlap in the data"),
            std::string::npos);
}

TEST(Safetensors, DamagedFilesAreErrorsNamingTheFileAndTheFault) {
  const auto past = raw_file("past-end", "{}", 0, 4096);
  EXPECT_NE(error_of([&] { load_safetensors(past.string()); })
                .find(past.string() + ": corrupt safetensors file: the header length (4096 bytes) runs past the end"),
            std::string::npos);
  const auto overlap = overlapping_tensors_file("overlap");
  EXPECT_NE(error_of([&] { load_safetensors(overlap.string()); })
                .find(overlap.string() + ": corrupt safetensors file: tensors x and y overlap in the data"),
            std::string::npos);
  const auto dtype = raw_file("dtype", R"({"x": {"dtype": "F8", "shape": [2], "data_offsets": [0, 2]}})", 2);
  EXPECT_NE(error_of([&] { load_safetensors(dtype.string()); }).find(dtype.string() + ": corrupt safetensors file: tensor x has an unknown dtype 'F8'"),
            std::string::npos);
  const auto shape = raw_file("shape", R"({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8);
  EXPECT_NE(error_of([&] { load_safetensors(shape.string()); }).find("tensor x: its shape needs 12 bytes, its data_offsets give 8"),
            std::string::npos);
  const auto outside = raw_file("outside", R"({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 4);
  EXPECT_NE(error_of([&] { load_safetensors(outside.string()); }).find("tensor x: data_offsets outside the file's 4 bytes"),
            std::string::npos);
  // Bytes that belong to no tensor: a hole, trailing data, a header length one byte short (the
  // header is space-padded, so it still parses, and every tensor would be read a byte late).
  const auto hole = raw_file("hole",
                             R"({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
                             R"( "y": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})",
                             12);
  EXPECT_NE(error_of([&] { load_safetensors(hole.string()); }).find("bytes 4-8 of the data belong to no tensor (a hole before y)"),
            std::string::npos);
  const auto trailing = raw_file("trailing", R"({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 9);
  EXPECT_NE(error_of([&] { load_safetensors(trailing.string()); }).find("1 byte after the last tensor's data belong to no tensor"),
            std::string::npos);
  {
    const std::string header = R"({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}   )";
    const auto short_length = raw_file("short-length", header, 8, header.size() - 1);
    EXPECT_NE(error_of([&] { load_safetensors(short_length.string()); }).find("belong to no tensor"), std::string::npos);
  }
  // A pipe: opening it would wait for a writer forever.
  const auto fifo = work_dir() / "pipe.safetensors";
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { load_safetensors(fifo.string()); }).find(fifo.string() + ": is a pipe (FIFO) where a safetensors file should be"),
            std::string::npos);
  // A header length past the reference implementation's 100 MB cap, in a sparse file as large as
  // it claims: refused before the header is read (this took 3.2 GB and 57 s before the cap).
  {
    const auto huge = work_dir() / "huge-header.safetensors";
    const uint64_t claimed = uint64_t(3) << 30;
    {
      std::ofstream f(huge, std::ios::binary);
      f.write(reinterpret_cast<const char*>(&claimed), 8);
    }
    fs::resize_file(huge, claimed + 8);
    EXPECT_NE(error_of([&] { load_safetensors(huge.string()); }).find("its header claims 3.2 GB, more than the 100 MB"),
              std::string::npos)
        << error_of([&] { load_safetensors(huge.string()); });
    fs::remove(huge);
  }
  // A safetensors file that is not a yoke export: said so, not a missing-key crash.
  const auto plain = tensors_file("plain");
  EXPECT_NE(error_of([&] { read_exported_model(plain.string()); }).find(plain.string() + ": holds no yoke model"),
            std::string::npos);
}

// A file whose metadata config does not describe its tensors (d_model 8192 over a model of 32, a
// million layers, another feed-forward size) is refused before the model is built: building first
// took gigabytes for a 0.5 MB file.
TEST(Safetensors, AConfigThatDoesNotFitTheTensorsIsRefusedBeforeAnythingIsBuilt) {
  const auto dir = model_dir(settings().front());
  const auto out = work_dir() / "export-misconfigured";
  fs::remove_all(out);
  export_model(dir.string(), out.string());
  const auto file = out / kExportedWeights;
  const auto original = load_safetensors(file.string());
  for (const auto& [key, value, message] : std::vector<std::tuple<std::string, int, std::string>>{
           {"d_model", 8192, "its config says d_model = 8192 but tensor 'positions' gives 16"},
           {"decoder_layers", 1000000, "its config says decoder_layers = 1000000 but the file holds 2 decoder layers"},
           {"max_positions", 1000000000, "its config says max_positions = 1000000000 but tensor 'positions' gives 64"},
           {"ffn_dim", 100000000, "its config says ffn_dim = 100000000 but tensor 'encoder0.ffn.w1' gives 24"}}) {
    auto changed = original;
    auto config = nlohmann::json::parse(changed.metadata.at("config"));
    config[key] = value;
    if (key == "d_model") config["heads"] = 2;
    changed.metadata["config"] = config.dump();
    save_safetensors(file.string(), changed);
    const std::string error = error_of([&] { load_model(out.string()); });
    EXPECT_NE(error.find(file.string() + ": " + message), std::string::npos) << key << ": " << error;
  }
  // Values a config file refuses are refused here too, not truncated: 32.9, 2^32 + 1000, "abc".
  for (const auto& [key, value, message] : std::vector<std::tuple<std::string, nlohmann::json, std::string>>{
           {"d_model", 32.9, "d_model = 32.9: expected a whole number"},
           {"tgt_vocab_size", 4294968296ull, "tgt_vocab_size = 4294968296: expected a whole number"},
           {"cross_layer", 1, "cross_layer = 1: expected true or false"}}) {
    auto changed = original;
    auto config = nlohmann::json::parse(changed.metadata.at("config"));
    config[key] = value;
    changed.metadata["config"] = config.dump();
    save_safetensors(file.string(), changed);
    const std::string error = error_of([&] { load_model(out.string()); });
    EXPECT_NE(error.find(message), std::string::npos) << key << ": " << error;
  }
  // The vocabulary record: missing or malformed is a damaged file, not a check switched off.
  for (const auto& [vocab, message] : std::vector<std::pair<std::string, std::string>>{
           {"", "no \"vocab\" record"},
           {"[1, 2]", "the \"vocab\" record is not an object of checksums"},
           {R"({"spm.model": "x"})", "the \"vocab\" record has 'spm.model': \"x\""},
           {R"({"other.model": 1})", "the \"vocab\" record has 'other.model'"}}) {
    auto changed = original;
    if (vocab.empty()) changed.metadata.erase("vocab");
    else changed.metadata["vocab"] = vocab;
    save_safetensors(file.string(), changed);
    const std::string error = error_of([&] { load_model(out.string()); });
    EXPECT_NE(error.find(file.string() + ": corrupt yoke metadata: " + message), std::string::npos) << error;
  }
  // A tensor of a type no yoke model holds (BOOL): named, not "internal error: unsupported tensor type".
  {
    auto changed = original;
    auto& first = changed.tensors.begin()->second;
    first = first.to(at::kBool);
    save_safetensors(file.string(), changed);
    const std::string error = error_of([&] { read_exported_model(file.string()); });
    EXPECT_NE(error.find("has dtype Bool, which no yoke model holds"), std::string::npos) << error;
  }
  auto versioned = original;
  versioned.metadata["format_version"] = "abc";
  save_safetensors(file.string(), versioned);
  EXPECT_NE(error_of([&] { load_model(out.string()); }).find("format_version 'abc' is not a whole number"),
            std::string::npos);
}

// ---- every model setting ----------------------------------------------------------------------

class ExportSettings : public ::testing::TestWithParam<Setting> {};

// Export, import: the same parameters, bit for bit; each word matrix stored once, the tying said.
TEST_P(ExportSettings, ExportThenImportGivesBitIdenticalParameters) {
  const auto dir = model_dir(GetParam());
  const auto out = work_dir() / ("export-" + GetParam().name), back = work_dir() / ("import-" + GetParam().name);
  fs::remove_all(out);
  fs::remove_all(back);
  const auto r = export_model(dir.string(), out.string());
  EXPECT_EQ(r.to, (out / kExportedWeights).string());
  for (const char* f : {"config.json", "spm.model", "spm.vocab"}) EXPECT_TRUE(fs::exists(out / f)) << f;
  import_model(out.string(), back.string());

  const auto original = load_model(dir.string());
  const auto state = module_state(*original.model);
  for (const auto& where : {back, out}) {  // the imported directory, and the export read as it is
    const auto again = module_state(*load_model(where.string()).model);
    ASSERT_EQ(again.size(), state.size()) << where;
    for (const auto& [name, t] : state) {
      ASSERT_TRUE(again.count(name)) << name;
      EXPECT_EQ(again.at(name).scalar_type(), t.scalar_type()) << name;
      EXPECT_TRUE(at::equal(again.at(name), t)) << where << ": " << name;
    }
  }

  const auto file = load_safetensors((out / kExportedWeights).string());
  EXPECT_EQ(file.tensors.size(), state.size());
  const auto tying = nlohmann::json::parse(file.metadata.at("tying"));
  const auto config = nlohmann::json::parse(file.metadata.at("config"));
  EXPECT_EQ(config, nlohmann::json::parse(slurp(out / "config.json")));
  EXPECT_EQ(file.metadata.at("update"), "7");
  // Tied roles name one stored matrix; untied ones their own.
  const std::string tie = config.at("tie");
  const bool lm = config.at("task") == "lm";
  std::set<std::string> matrices;
  for (const char* role : {"source", "target", "output"})
    if (!tying.at(role).is_null()) matrices.insert(tying.at(role).get<std::string>());
  const size_t expected = tie == "none" ? (lm ? 2 : 3) : tie == "decoder" || tie == "src-tgt" ? 2 : 1;
  EXPECT_EQ(matrices.size(), expected) << tying.dump();
  EXPECT_EQ(tying.at("source").is_null(), lm);
  if (tie == "all") EXPECT_EQ(tying.at("output"), lm ? tying.at("target") : tying.at("source"));
  if (tie == "shared-private") EXPECT_EQ(tying.at("output"), "embeddings.shared_private");
  for (const auto& m : matrices) {
    if (m == "embeddings.shared_private") continue;
    EXPECT_TRUE(file.tensors.count(m + ".weight") || file.tensors.count(m + ".factor_a")) << m;
  }
}

// ---- PyTorch parity ---------------------------------------------------------------------------

// Debian's interpreter with python3-torch (a pyenv or venv python first on PATH may lack it).
bool python_has(const std::string& modules) {
  const std::string cmd = std::string(YOKE_PYTHON) + " -c 'import " + modules + "' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

// python/yoke_torch.py on every setting: log-probabilities within 1e-4 of yoke's, the same
// greedy translations.
TEST(TorchParity, LogProbsWithin1e4AndIdenticalGreedyTranslationsForEverySetting) {
  if (!python_has("torch"))
    GTEST_SKIP() << YOKE_PYTHON << " cannot import torch (Debian: apt-get install python3-torch): PyTorch parity not checked";
  SearchOptions greedy;
  greedy.beam = 1;
  greedy.max_len_a = 1.5;
  greedy.max_len_b = 4;
  std::vector<std::string> dirs;
  std::map<std::string, std::pair<at::Tensor, std::vector<std::vector<int>>>> expected;
  for (const auto& s : settings()) {
    const auto out = work_dir() / ("parity-" + s.name);
    fs::remove_all(out);
    export_model(model_dir(s).string(), out.string());
    auto m = load_model(out.string());
    auto [src, tgt] = parity_batch(m.config.tgt_vocab_size, 3);
    at::NoGradGuard no_grad;
    const bool lm = m.config.task == Task::lm;
    EncoderOutput enc;
    if (!lm) enc = m.model->encode(src);
    auto lp = at::log_softmax(m.model->logits(m.model->decode(tgt, lm ? nullptr : &enc)), -1);
    SafeTensors in;
    in.tensors["tgt_in"] = tgt;
    if (!lm) in.tensors["src"] = src;
    in.metadata = {{"max_len_a", "1.5"}, {"max_len_b", "4"}};
    save_safetensors((out / "parity_inputs.safetensors").string(), in);
    expected[out.string()] = {lp, lm ? std::vector<std::vector<int>>{} : greedy_search(*m.model, src, greedy)};
    dirs.push_back(out.string());
  }
  std::string cmd = std::string(YOKE_PYTHON) + " " + YOKE_SOURCE_DIR + "/python/yoke_torch.py parity";
  for (const auto& d : dirs) cmd += " '" + d + "'";
  cmd += " 2>'" + (work_dir() / "parity.log").string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(work_dir() / "parity.log");
  for (const auto& d : dirs) {
    const auto got = load_safetensors((fs::path(d) / "parity_torch.safetensors").string());
    const auto& [lp, hyps] = expected.at(d);
    // Both sides compute in fp32 with different operation orders (fused vs separate q/k/v, an
    // incremental decoder vs a whole prefix): their difference is rounding, ~1e-6 here; 1e-4
    // is the issue's bound.
    const double diff = (got.tensors.at("log_probs") - lp).abs().max().item<double>();
    YOKE_EXPECT_AT_MOST(diff, 1e-4) << d;
    if (hyps.empty()) continue;
    const auto g = got.tensors.at("greedy");
    ASSERT_EQ(g.size(0), int64_t(hyps.size())) << d;
    for (size_t i = 0; i < hyps.size(); ++i) {
      std::vector<int> row;
      for (int64_t j = 0; j < g.size(1) && g[i][j].item<int64_t>() >= 0; ++j) row.push_back(int(g[i][j].item<int64_t>()));
      EXPECT_EQ(row, hyps[i]) << d << " sentence " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Every, ExportSettings, ::testing::ValuesIn(settings()),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (auto& ch : n) if (ch == '-') ch = '_';
                           return n;
                         });

// ---- the command line -------------------------------------------------------------------------

// As a user would: export, import, translate from all three with scores and n-best lists: the
// same hypotheses and scores; the PyTorch module translates the text as yoke's greedy search does.
TEST(ExportCli, ExportImportTranslateGiveTheSameHypothesesAndScores) {
  const auto model = tiny_translation_model();
  const auto out = work_dir() / "cli-export", back = work_dir() / "cli-import";
  const auto log = work_dir() / "cli-export.log";
  ASSERT_EQ(run({YOKE_BINARY, "export", "--model", model.string(), "--out", out.string(), "--format", "safetensors"}, log), 0)
      << slurp(log);
  EXPECT_NE(slurp(log).find("exported "), std::string::npos) << slurp(log);
  ASSERT_EQ(run({YOKE_BINARY, "import", "--model", out.string(), "--out", back.string()}, log), 0) << slurp(log);
  const std::string input = (data_dir() / "test.toy.src.txt").string();
  auto translate = [&](const fs::path& dir, const std::vector<std::string>& more) {
    std::vector<std::string> args = {YOKE_BINARY, "translate", "--model", dir.string(), "--input", input, "--threads", "1"};
    args.insert(args.end(), more.begin(), more.end());
    return output_of(args);
  };
  for (const auto& more : {std::vector<std::string>{"--beam", "3", "--nbest", "2"}, {"--beam", "1", "--scores"}}) {
    const auto expected = translate(model, more);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(translate(back, more), expected);
    EXPECT_EQ(translate(out, more), expected);
  }
  // Exporting again into a directory that holds anything, or an int8 model, is refused with the
  // reason, and the directory is left as it was: a data folder's spm.model was overwritten once.
  EXPECT_EQ(run({YOKE_BINARY, "export", "--model", model.string(), "--out", out.string()}, log), 2);
  EXPECT_NE(slurp(log).find(out.string() + ": is not empty"), std::string::npos) << slurp(log);
  const auto data_copy = work_dir() / "cli-export-data";
  fs::remove_all(data_copy);
  fs::copy(data_dir(), data_copy, fs::copy_options::recursive);
  const std::string spm_before = slurp(data_copy / "spm.model");
  for (const char* command : {"export", "import"}) {
    const auto from = std::string(command) == "export" ? model : out;
    EXPECT_EQ(run({YOKE_BINARY, command, "--model", from.string(), "--out", data_copy.string()}, log), 2) << command;
    EXPECT_NE(slurp(log).find("--force to replace this one"), std::string::npos) << slurp(log);
    EXPECT_EQ(slurp(data_copy / "spm.model"), spm_before) << command;
  }
  EXPECT_FALSE(fs::exists(data_copy / "model.safetensors"));
  EXPECT_FALSE(fs::exists(data_copy / "checkpoint_best.ykp"));
  // --force replaces it whole, and says so; no partial sibling is left.
  ASSERT_EQ(run({YOKE_BINARY, "export", "--model", model.string(), "--out", data_copy.string(), "--force"}, log), 0)
      << slurp(log);
  EXPECT_NE(slurp(log).find("replaced what " + data_copy.string() + " held before (--force)"), std::string::npos)
      << slurp(log);
  EXPECT_TRUE(fs::exists(data_copy / "model.safetensors"));
  EXPECT_FALSE(fs::exists(data_copy / "train.bin"));
  for (const auto& e : fs::directory_iterator(work_dir()))
    EXPECT_EQ(e.path().filename().string().find(".cli-export-data."), std::string::npos) << e.path();
  const auto int8 = work_dir() / "cli-export-int8";
  ASSERT_EQ(run({YOKE_BINARY, "quantize", "--model", model.string(), "--out", int8.string()}, log), 0) << slurp(log);
  EXPECT_EQ(run({YOKE_BINARY, "export", "--model", int8.string(), "--out", (work_dir() / "cli-export-x").string()}, log), 2);
  EXPECT_NE(slurp(log).find("is an int8 model"), std::string::npos) << slurp(log);

  if (!python_has("torch, sentencepiece")) {
    std::cerr << "note: " << YOKE_PYTHON << " lacks torch or sentencepiece (python3-torch, python3-sentencepiece): "
              << "the text translation by python/yoke_torch.py is not compared" << std::endl;
    return;
  }
  const auto greedy = translate(model, {"--beam", "1"});
  const auto torch_out = output_of({YOKE_PYTHON, std::string(YOKE_SOURCE_DIR) + "/python/yoke_torch.py", "translate",
                                    out.string(), "--input", input});
  EXPECT_EQ(torch_out, greedy);
}

}  // namespace

// A vocabulary that cannot be copied (a full disk, or here a folder in the file's place) is an
// error naming both paths and the reason, not "internal error: filesystem error".
TEST(ExportCli, AFileThatCannotBeCopiedIsNamed) {
  const auto from = model_dir(settings().front());
  const auto to = work_dir() / "copy-blocked";
  fs::remove_all(to);
  fs::create_directories(to / "spm.model");  // a directory where the file would go
  try {
    copy_model_files(from.string(), to.string());
    FAIL() << "no error";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot copy " + (from / "spm.model").string() + " to " +
                                         (to / "spm.model").string() + ": "),
              std::string::npos) << e.what();
  }
}
