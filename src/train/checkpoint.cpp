#include "train/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "util/atomic_file.h"
#include "util/checksum.h"
#include "util/error.h"

namespace yoke {
namespace {

constexpr char kMagic[8] = {'Y', 'O', 'K', 'E', 'C', 'K', 'P', '1'};

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

at::ScalarType dtype_from(const std::string& s) {
  if (s == "f32") return at::kFloat;
  if (s == "f64") return at::kDouble;
  if (s == "i64") return at::kLong;
  if (s == "i32") return at::kInt;
  if (s == "bf16") return at::kBFloat16;
  if (s == "f16") return at::kHalf;
  if (s == "i8") return at::kChar;
  throw std::runtime_error("unknown tensor type " + s);
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
  f.write(kMagic, 8);
  f.write(&len, 8);
  f.write(text.data(), len);
  for (const auto& c : data) f.write(c.data_ptr(), c.numel() * c.element_size());
  f.commit();
}

std::string numbered_checkpoint_name(int64_t update) { return "checkpoint_u" + std::to_string(update) + ".ykp"; }

std::vector<std::pair<int64_t, std::string>> numbered_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  const std::string prefix = "checkpoint_u", suffix = ".ykp";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (f.size() <= prefix.size() + suffix.size() || f.rfind(prefix, 0) != 0 ||
        f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits = f.substr(prefix.size(), f.size() - prefix.size() - suffix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 18) continue;
    found.emplace_back(std::stoll(digits), e.path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

Checkpoint load_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path, 0, "cannot open checkpoint");
  char magic[8];
  uint64_t len = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0)
    throw input_error(path, 0, "not a yoke checkpoint");
  if (!in.read(reinterpret_cast<char*>(&len), 8) || len > (1ull << 32))
    throw input_error(path, 0, "corrupt checkpoint header");
  std::string text(len, '\0');
  if (!in.read(text.data(), std::streamsize(len))) throw input_error(path, 0, "truncated checkpoint header");
  Checkpoint ckpt;
  nlohmann::json header;
  try { header = nlohmann::json::parse(text); } catch (const std::exception& e) {
    throw input_error(path, 0, std::string("corrupt checkpoint header: ") + e.what());
  }
  ckpt.meta = header.at("meta");
  const std::streamoff base = 16 + std::streamoff(len);
  for (const auto& entry : header.at("tensors")) {
    auto shape = entry.at("shape").get<std::vector<int64_t>>();
    auto t = at::empty(shape, at::TensorOptions(dtype_from(entry.at("dtype").get<std::string>())));
    const uint64_t bytes = entry.at("bytes").get<uint64_t>();
    if (bytes != uint64_t(t.numel() * t.element_size())) throw input_error(path, 0, "corrupt tensor index");
    in.seekg(base + std::streamoff(entry.at("offset").get<uint64_t>()));
    if (!in.read(static_cast<char*>(t.data_ptr()), std::streamsize(bytes)))
      throw input_error(path, 0, "truncated checkpoint (tensor " + entry.at("name").get<std::string>() + ")");
    // Checkpoints written before checksums have none; every newer one is verified.
    if (entry.contains("crc32") && entry.at("crc32").get<uint32_t>() != crc32_update(0, t.data_ptr(), bytes))
      throw input_error(path, 0, "damaged checkpoint: tensor " + entry.at("name").get<std::string>() +
                                     " fails its checksum (disk or copy error); use another checkpoint");
    ckpt.tensors[entry.at("name").get<std::string>()] = t;
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
    dst.copy_(it->second);
  };
  for (auto& p : m.named_parameters(true)) copy(p.key(), p.value());
  for (auto& b : m.named_buffers(true)) copy(b.key(), b.value());
}

}  // namespace yoke
