#include "store/checkpoint.h"
#include "store/tensor_allocation.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "util/atomic_file.h"
#include "util/checksum.h"
#include "util/error.h"
#include "util/regular_file.h"

namespace yoke {
namespace {

// Version 2 (this build writes it): magic, uint64 header length, the CRC-32 of the header's
// bytes, the JSON header, the raw tensors. Version 1 had no header checksum; it still loads.
constexpr char kMagicV1[8] = {'Y', 'O', 'K', 'E', 'C', 'K', 'P', '1'};
constexpr char kMagicV2[8] = {'Y', 'O', 'K', 'E', 'C', 'K', 'P', '2'};

std::string dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "f32";
    case at::kDouble: return "f64";
    case at::kLong: return "i64";
    case at::kInt: return "i32";
    case at::kBFloat16: return "bf16";
    case at::kHalf: return "f16";
    case at::kChar: return "i8";
    default: throw std::runtime_error("checkpoint: unsupported tensor type");
  }
}

std::optional<at::ScalarType> dtype_from(const std::string& s) {
  if (s == "f32") return at::kFloat;
  if (s == "f64") return at::kDouble;
  if (s == "i64") return at::kLong;
  if (s == "i32") return at::kInt;
  if (s == "bf16") return at::kBFloat16;
  if (s == "f16") return at::kHalf;
  if (s == "i8") return at::kChar;
  return std::nullopt;
}

// One tensor of the index, checked against the file before anything is allocated for it.
struct IndexEntry {
  std::string name;
  at::ScalarType dtype;
  std::vector<int64_t> shape;
  uint64_t offset, bytes;
  std::optional<uint32_t> crc32;  // absent in checkpoints written before tensor checksums
};

// The parts of a checkpoint before its tensor bytes.
struct Header {
  nlohmann::json meta;
  std::vector<IndexEntry> index;
  std::streamoff data_start = 0;
};

Header read_header(std::ifstream& in, const std::string& path) {
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec || !in) throw input_error(path, 0, "cannot open checkpoint" + (ec ? ": " + ec.message() : std::string()));
  char magic[8];
  if (!in.read(magic, 8) || (std::memcmp(magic, kMagicV1, 8) != 0 && std::memcmp(magic, kMagicV2, 8) != 0))
    throw input_error(path, 0, "not a yoke checkpoint");
  const bool v1 = std::memcmp(magic, kMagicV1, 8) == 0;
  uint64_t len = 0;
  uint32_t stored_crc = 0;
  if (!in.read(reinterpret_cast<char*>(&len), 8) || (!v1 && !in.read(reinterpret_cast<char*>(&stored_crc), 4)))
    throw input_error(path, 0, "truncated checkpoint header");
  const uint64_t prefix = v1 ? 16 : 20;
  if (len > file_size - std::min(file_size, prefix))
    throw input_error(path, 0, "corrupt checkpoint header: its length (" + std::to_string(len) +
                                   " bytes) exceeds the file");
  std::string text(len, '\0');
  if (!in.read(text.data(), std::streamsize(len))) throw input_error(path, 0, "truncated checkpoint header");
  if (!v1 && crc32_update(0, text.data(), text.size()) != stored_crc)
    throw input_error(path, 0, "damaged checkpoint: the header's checksum does not match (disk or copy error, "
                               "or an edited file); use another checkpoint");
  Header h;
  h.data_start = std::streamoff(prefix + len);
  const uint64_t data_bytes = file_size - prefix - len;
  // Every field is read here, so that a malformed header is one error naming the file, never a
  // JSON library's "key not found" without it.
  try {
    const auto header = nlohmann::json::parse(text);
    h.meta = header.at("meta");
    if (!h.meta.is_object()) throw std::runtime_error("'meta' is not an object");
    for (const auto& entry : header.at("tensors")) {
      IndexEntry e;
      e.name = entry.at("name").get<std::string>();
      const std::string dtype = entry.at("dtype").get<std::string>();
      const auto t = dtype_from(dtype);
      if (!t) throw std::runtime_error("tensor " + e.name + " has unknown type '" + dtype + "'");
      e.dtype = *t;
      e.shape = entry.at("shape").get<std::vector<int64_t>>();
      e.offset = entry.at("offset").get<uint64_t>();
      e.bytes = entry.at("bytes").get<uint64_t>();
      if (entry.contains("crc32")) e.crc32 = entry.at("crc32").get<uint32_t>();
      // The shape's byte count, without overflow, must be the stored one and lie inside the file.
      uint64_t expected = uint64_t(c10::elementSize(e.dtype));
      for (const int64_t d : e.shape) {
        if (d < 0) throw std::runtime_error("tensor " + e.name + " has a negative dimension");
        if (d > 0 && expected > data_bytes / uint64_t(d)) expected = data_bytes + 1;
        else expected *= uint64_t(d);
      }
      if (expected != e.bytes || e.offset > data_bytes || e.bytes > data_bytes - e.offset)
        throw std::runtime_error("tensor " + e.name + ": shape, size and offset do not fit the file");
      h.index.push_back(std::move(e));
    }
  } catch (const std::exception& e) {  // nlohmann's parse, type and missing-key errors, and the checks above
    throw input_error(path, 0, std::string("corrupt checkpoint header: ") + e.what());
  }
  return h;
}

}  // namespace

void save_checkpoint(const std::string& path, const Checkpoint& ckpt) {
  nlohmann::json header = {{"meta", ckpt.meta}, {"tensors", nlohmann::json::array()}};
  std::vector<at::Tensor> data;
  uint64_t offset = 0;
  for (const auto& [name, t] : ckpt.tensors) {
    auto c = t.detach().to(at::kCPU).contiguous();
    const uint64_t bytes = c.numel() * c.element_size();
    header["tensors"].push_back({{"name", name}, {"dtype", dtype_name(c.scalar_type())},
                                 {"shape", c.sizes().vec()}, {"offset", offset}, {"bytes", bytes},
                                 {"crc32", crc32_update(0, c.data_ptr(), bytes)}});
    offset += bytes;
    data.push_back(c);
  }
  const std::string text = header.dump();
  AtomicFile f(path);
  const uint64_t len = text.size();
  const uint32_t crc = crc32_update(0, text.data(), text.size());
  f.write(kMagicV2, 8);
  f.write(&len, 8);
  f.write(&crc, 4);
  f.write(text.data(), len);
  for (const auto& c : data) f.write(c.data_ptr(), c.numel() * c.element_size());
  f.commit();
}

std::string numbered_checkpoint_name(int64_t update) { return "checkpoint_u" + std::to_string(update) + ".ykp"; }

std::optional<int64_t> numbered_checkpoint_update(const std::string& f) {
  const std::string prefix = "checkpoint_u", suffix = ".ykp";
  if (f.size() <= prefix.size() + suffix.size() || f.rfind(prefix, 0) != 0 ||
      f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  const std::string digits = f.substr(prefix.size(), f.size() - prefix.size() - suffix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 18) return std::nullopt;
  return std::stoll(digits);
}

std::vector<std::pair<int64_t, std::string>> numbered_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (const auto update = numbered_checkpoint_update(e.path().filename().string()))
      found.emplace_back(*update, e.path().string());
  std::sort(found.begin(), found.end());
  return found;
}

void prune_numbered_checkpoints(const std::string& dir, int keep) {
  const auto numbered = numbered_checkpoints(dir);
  for (size_t i = 0; i + size_t(std::max(1, keep)) < numbered.size(); ++i) std::filesystem::remove(numbered[i].second);
}

CheckpointHeader read_checkpoint_header(const std::string& path) {
  require_regular_file(path, "checkpoint");
  std::ifstream in(path, std::ios::binary);
  Header h = read_header(in, path);
  CheckpointHeader out{std::move(h.meta), {}};
  for (const auto& e : h.index) out.tensors.push_back(e.name);
  return out;
}

Checkpoint load_checkpoint(const std::string& path, const TensorFilter& wanted) {
  require_regular_file(path, "checkpoint");
  std::ifstream in(path, std::ios::binary);
  Header h = read_header(in, path);
  Checkpoint ckpt;
  ckpt.meta = std::move(h.meta);
  for (const auto& e : h.index) {
    if (wanted && !wanted(e.name)) continue;
    auto t = allocate_tensor(e.shape, e.dtype, e.bytes, path, e.name);
    in.seekg(h.data_start + std::streamoff(e.offset));
    if (!in.read(static_cast<char*>(t.data_ptr()), std::streamsize(e.bytes)))
      throw input_error(path, 0, "truncated checkpoint (tensor " + e.name + ")");
    if (e.crc32 && *e.crc32 != crc32_update(0, t.data_ptr(), e.bytes))
      throw input_error(path, 0, "damaged checkpoint: tensor " + e.name +
                                     " fails its checksum (disk or copy error); use another checkpoint");
    ckpt.tensors[e.name] = t;
  }
  return ckpt;
}

std::map<std::string, at::Tensor> module_state(const torch::nn::Module& m) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : m.named_parameters(true)) out[p.key()] = p.value().detach();
  for (const auto& b : m.named_buffers(true)) out[b.key()] = b.value().detach();
  return out;
}

void load_module_state(torch::nn::Module& m, const std::map<std::string, at::Tensor>& state,
                       const std::string& origin) {
  at::NoGradGuard no_grad;
  auto copy = [&](const std::string& name, at::Tensor& dst) {
    auto it = state.find(name);
    if (it == state.end()) throw input_error(origin, 0, "checkpoint lacks tensor '" + name + "' (different model config?)");
    if (it->second.sizes() != dst.sizes())
      throw input_error(origin, 0, "tensor '" + name + "' has shape " + c10::str(it->second.sizes()) +
                                       " in the checkpoint but " + c10::str(dst.sizes()) + " in the model");
    if (it->second.scalar_type() != dst.scalar_type())
      throw input_error(origin, 0, "tensor '" + name + "' is " + std::string(c10::toString(it->second.scalar_type())) +
                                       " in the file but " + c10::toString(dst.scalar_type()) +
                                       " in the model: not a file yoke wrote for this model");
    if (it->second.is_floating_point() && !at::isfinite(it->second).all().item<bool>())
      throw input_error(origin, 0, "tensor '" + name + "' holds NaN or infinite values (a diverged run?): no model "
                                   "computes anything with them");
    dst.copy_(it->second);
  };
  for (auto& p : m.named_parameters(true)) copy(p.key(), p.value());
  for (auto& b : m.named_buffers(true)) copy(b.key(), b.value());
}

namespace {
constexpr const char* kModelPrefix = "model.";
}  // namespace

std::string model_tensor_name(const std::string& parameter) { return kModelPrefix + parameter; }

bool is_optimizer_tensor(const std::string& name) { return name.rfind("optimizer.", 0) == 0; }

namespace {
constexpr const char* kLegacyKvBias = ".kv_bias";
}  // namespace

bool is_legacy_kv_bias(const std::string& parameter) {
  const std::string end = kLegacyKvBias;
  return parameter.size() > end.size() && parameter.compare(parameter.size() - end.size(), end.size(), end) == 0;
}

std::map<std::string, at::Tensor> model_weights(const Checkpoint& ckpt) {
  const std::string prefix = kModelPrefix;
  std::map<std::string, at::Tensor> out;
  for (const auto& [name, t] : ckpt.tensors) {
    if (name.rfind(prefix, 0) != 0) continue;
    const auto parameter = name.substr(prefix.size());
    if (is_legacy_kv_bias(parameter) && t.dim() == 1 && t.size(0) % 2 == 0) {
      const auto base = parameter.substr(0, parameter.size() - std::string(kLegacyKvBias).size());
      out[base + ".v_bias"] = t.narrow(0, t.size(0) / 2, t.size(0) / 2);
    } else {
      out[parameter] = t;
    }
  }
  return out;
}

void put_model_weights(Checkpoint& ckpt, const std::map<std::string, at::Tensor>& weights) {
  for (const auto& [name, t] : weights) ckpt.tensors[model_tensor_name(name)] = t;
}

}  // namespace yoke
