// The checkpoint file itself: its header is covered by a checksum, files of the previous
// version (no header checksum) still load, and a malformed header is an error naming the file,
// never a crash or a library's message without it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../core/file_helpers.h"
#include "tiny_model.h"
#include "store/checkpoint.h"
#include "store/model_store.h"
#include "util/checksum.h"
#include "util/error.h"

namespace fs = std::filesystem;
using namespace yoke;

namespace {

fs::path test_dir(const std::string& name) {
  const auto d = fs::temp_directory_path() / ("yoke_ckpt_format_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

template <class T>
std::string raw(const T& v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}

// A checkpoint's bytes laid out by hand: version 1 ("YOKECKP1", length, header) or version 2
// ("YOKECKP2", length, the header's CRC-32, header), then the tensor bytes.
std::string checkpoint_bytes(int version, const std::string& header, const std::string& data) {
  const uint64_t len = header.size();
  if (version == 1) return "YOKECKP1" + raw(len) + header + data;
  return "YOKECKP2" + raw(len) + raw(crc32_update(0, header.data(), header.size())) + header + data;
}

// A tiny model's weights as a header's tensor index and the bytes after it; every second entry
// without its CRC-32, as checkpoints from before tensor checksums were written.
std::pair<nlohmann::json, std::string> tensor_index(const std::map<std::string, at::Tensor>& tensors) {
  nlohmann::json index = nlohmann::json::array();
  std::string data;
  bool with_crc = true;
  for (const auto& [name, t] : tensors) {
    const auto c = t.contiguous().to(at::kFloat);
    const size_t bytes = size_t(c.numel()) * sizeof(float);
    nlohmann::json e = {{"name", name}, {"dtype", "f32"}, {"shape", c.sizes().vec()}, {"offset", data.size()},
                        {"bytes", bytes}};
    if (with_crc) e["crc32"] = crc32_update(0, c.data_ptr(), bytes);
    with_crc = !with_crc;
    data.append(static_cast<const char*>(c.data_ptr()), bytes);
    index.push_back(e);
  }
  return {index, data};
}

Config tiny() { return test::tiny_config(Tie::decoder, Estimator::dot); }

// A model directory's checkpoint_best.ykp with the tiny model's weights and config.
fs::path save_tiny_model(const fs::path& dir) {
  at::manual_seed(7);
  auto model = build_model(tiny());
  Checkpoint c;
  c.meta = {{"config", tiny().to_json()}};
  put_model_weights(c, module_state(*model));
  save_checkpoint((dir / "checkpoint_best.ykp").string(), c);
  return dir / "checkpoint_best.ykp";
}

std::string error_of(const std::function<void()>& f) { return yoke::test::input_error_message(f); }

}  // namespace

// The case: "heads":2 → "heads":0, one byte and the same length, died with SIGFPE in
// translate; edits that keep the header valid (norm, output) changed translations silently.
TEST(CheckpointFormat, OneChangedByteInTheHeaderFailsItsChecksum) {
  const auto dir = test_dir("flip");
  const auto path = save_tiny_model(dir);
  EXPECT_NO_THROW(load_checkpoint(path.string()));
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"\"heads\":2", "\"heads\":0"},
                                 {"\"norm\":\"pre\"", "\"norm\":\"pst\""}}) {
    std::string bytes = file_bytes(path);
    const size_t at = bytes.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    bytes.replace(at, from.size(), to);
    const auto damaged = dir / "damaged.ykp";
    write_bytes(damaged, bytes);
    const std::string msg = error_of([&] { load_checkpoint(damaged.string()); });
    EXPECT_NE(msg.find(damaged.string() + ": damaged checkpoint: the header's checksum does not match"),
              std::string::npos) << msg;
    EXPECT_NE(error_of([&] { read_checkpoint_header(damaged.string()); }).find("checksum does not match"),
              std::string::npos);
  }
}

// A decoder reads a model file's weights, not the optimizer state checkpoint_last carries (twice
// the weights' bytes): those tensors are neither read nor checked, so a damaged one does not stop it.
TEST(CheckpointFormat, AModelFileIsReadWithoutItsOptimizerState) {
  const auto dir = test_dir("optimizer");
  at::manual_seed(7);
  auto model = build_model(tiny());
  Checkpoint c;
  c.meta = {{"config", tiny().to_json()}};
  put_model_weights(c, module_state(*model));
  c.tensors["optimizer.exp_avg"] = at::randn({64});
  c.tensors["optimizer.exp_avg_sq"] = at::randn({64});  // the last name: its bytes end the file
  const auto path = dir / "checkpoint_last.ykp";
  save_checkpoint(path.string(), c);
  std::string bytes = file_bytes(path);
  bytes.back() = char(bytes.back() ^ 0x40);
  write_bytes(path, bytes);

  EXPECT_NE(error_of([&] { load_checkpoint(path.string()); }).find("tensor optimizer.exp_avg_sq fails its checksum"),
            std::string::npos);
  const Checkpoint read = read_model_file(path.string());
  EXPECT_EQ(read.meta, c.meta);
  EXPECT_EQ(read.tensors.count("optimizer.exp_avg"), 0u);
  EXPECT_EQ(read.tensors.count("optimizer.exp_avg_sq"), 0u);
  // Bytes written and read back, no arithmetic between: equal exactly.
  const auto weights = model_weights(read), expected = model_weights(c);
  ASSERT_EQ(weights.size(), expected.size());
  for (const auto& [name, t] : expected) EXPECT_TRUE(at::equal(weights.at(name), t)) << name;
  const auto only_first = load_checkpoint(path.string(), [](const std::string& n) { return n == "optimizer.exp_avg"; });
  ASSERT_EQ(only_first.tensors.size(), 1u);
  EXPECT_TRUE(at::equal(only_first.tensors.at("optimizer.exp_avg"), c.tensors.at("optimizer.exp_avg")));
}

TEST(CheckpointFormat, VersionOneFilesStillLoad) {
  const auto dir = test_dir("v1");
  at::manual_seed(3);
  auto model = build_model(tiny());
  std::map<std::string, at::Tensor> state;
  for (auto& [k, t] : module_state(*model)) state[model_tensor_name(k)] = t;
  auto [index, data] = tensor_index(state);
  const nlohmann::json meta = {{"config", tiny().to_json()}, {"note", "written by the version 1 layout"}};
  write_bytes(dir / "checkpoint_best.ykp", checkpoint_bytes(1, nlohmann::json{{"meta", meta}, {"tensors", index}}.dump(), data));

  const Checkpoint c = load_checkpoint((dir / "checkpoint_best.ykp").string());
  EXPECT_EQ(c.meta, meta);
  ASSERT_EQ(c.tensors.size(), state.size());
  for (const auto& [k, t] : state) EXPECT_TRUE(at::equal(c.tensors.at(k), t)) << k;  // the same bytes

  // A version 1 file has no header checksum; its config is still checked before a model is built.
  nlohmann::json bad = meta;
  bad["config"]["heads"] = 0;
  write_bytes(dir / "checkpoint_best.ykp", checkpoint_bytes(1, nlohmann::json{{"meta", bad}, {"tensors", index}}.dump(), data));
  const std::string msg = error_of([&] { load_model(dir.string()); });
  EXPECT_NE(msg.find((dir / "checkpoint_best.ykp").string() + ": the model config in its header is invalid: heads must be"),
            std::string::npos) << msg;
}

// Headers whose checksum matches (written so on purpose) but whose content is not a checkpoint's.
TEST(CheckpointFormat, MalformedHeadersAreErrorsNamingTheFile) {
  const auto dir = test_dir("malformed");
  const std::string data(16, '\0');
  const nlohmann::json good = {{"name", "w"}, {"dtype", "f32"}, {"shape", {2, 2}}, {"offset", 0}, {"bytes", 16}};
  auto with = [&](const char* key, const nlohmann::json& value) {
    nlohmann::json e = good;
    if (value.is_null()) e.erase(key); else e[key] = value;
    return nlohmann::json{{"meta", nlohmann::json::object()}, {"tensors", {e}}}.dump();
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {with("bytes", nullptr), "corrupt checkpoint header: "},                  // "key 'bytes' not found" before
      {with("dtype", "f33"), "tensor w has unknown type 'f33'"},                // "unknown tensor type f33" before
      {with("shape", {2, -2}), "tensor w has a negative dimension"},
      {with("shape", {4096, 4096}), "tensor w: shape, size and offset do not fit the file"},
      {with("offset", 8), "tensor w: shape, size and offset do not fit the file"},
      {with("name", 5), "corrupt checkpoint header: "},
      {"{\"meta\": {}, \"tensors\": [", "corrupt checkpoint header: "},
      {"{\"tensors\": []}", "corrupt checkpoint header: "},
      {"[1, 2]", "corrupt checkpoint header: "},
  };
  for (const auto& [header, expected] : cases) {
    const auto path = dir / "bad.ykp";
    write_bytes(path, checkpoint_bytes(2, header, data));
    const std::string msg = error_of([&] { load_checkpoint(path.string()); });
    EXPECT_EQ(msg.rfind(path.string() + ": ", 0), 0u) << header << "\n" << msg;
    EXPECT_NE(msg.find(expected), std::string::npos) << header << "\n" << msg;
  }
  // A header length beyond the file, and a file shorter than the fixed fields.
  std::string bytes = checkpoint_bytes(2, with("bytes", 16), data);
  const uint64_t huge = uint64_t(1) << 40;
  bytes.replace(8, 8, raw(huge));
  write_bytes(dir / "bad.ykp", bytes);
  EXPECT_NE(error_of([&] { load_checkpoint((dir / "bad.ykp").string()); }).find("exceeds the file"), std::string::npos);
  write_bytes(dir / "bad.ykp", "YOKECKP2\x01");
  EXPECT_NE(error_of([&] { load_checkpoint((dir / "bad.ykp").string()); }).find("truncated checkpoint header"),
            std::string::npos);

  // A well-formed checkpoint without a model config, read as a model: the file is named.
  write_bytes(dir / "checkpoint_best.ykp", checkpoint_bytes(2, with("bytes", 16), data));
  const std::string msg = error_of([&] { load_model(dir.string()); });
  EXPECT_NE(msg.find((dir / "checkpoint_best.ykp").string() + ": corrupt checkpoint header: it holds no model config"),
            std::string::npos) << msg;
}
