#include "store/safetensors.h"
#include "store/tensor_allocation.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/regular_file.h"

namespace yoke {

namespace {
constexpr uint64_t kMaxSafeTensorsHeader = 100000000;  // 100 MB, as the reference implementation
}  // namespace
namespace {

// The format's names of the element types yoke and PyTorch use.
const std::pair<const char*, at::ScalarType> kDtypes[] = {
    {"F64", at::kDouble}, {"F32", at::kFloat}, {"F16", at::kHalf}, {"BF16", at::kBFloat16}, {"I64", at::kLong},
    {"I32", at::kInt},    {"I16", at::kShort}, {"I8", at::kChar},  {"U8", at::kByte},        {"BOOL", at::kBool}};

std::string dtype_name(at::ScalarType t) {
  for (const auto& [name, type] : kDtypes)
    if (type == t) return name;
  throw std::runtime_error(std::string("safetensors: no dtype for ") + c10::toString(t));
}

std::optional<at::ScalarType> dtype_from(const std::string& s) {
  for (const auto& [name, type] : kDtypes)
    if (s == name) return type;
  return std::nullopt;
}

// The raw bytes are the machine's: both formats (this and yoke's checkpoints) are little-endian,
// as are the machines LibTorch runs on.
bool little_endian() {
  const uint16_t one = 1;
  uint8_t first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

struct Entry : SafeTensorsEntry {
  std::string name;
};

}  // namespace

void save_safetensors(const std::string& path, const SafeTensors& file) {
  if (!little_endian()) throw InputError(path + ": safetensors are little-endian; this machine is not");
  nlohmann::json header = nlohmann::json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  std::vector<at::Tensor> data;
  uint64_t offset = 0;
  for (const auto& [name, t] : file.tensors) {
    auto c = t.detach().to(at::kCPU).contiguous();
    const uint64_t bytes = uint64_t(c.numel()) * c.element_size();
    header[name] = {{"dtype", dtype_name(c.scalar_type())}, {"shape", c.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    data.push_back(c);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned, as the reference writes it
  const uint64_t len = text.size();
  AtomicFile f(path);
  f.write(&len, 8);
  f.write(text.data(), text.size());
  for (const auto& c : data) f.write(c.data_ptr(), uint64_t(c.numel()) * c.element_size());
  f.commit();
}

SafeTensorsIndex read_safetensors_index(const std::string& path) {
  auto fail = [&](const std::string& what) { return input_error(path, 0, "corrupt safetensors file: " + what); };
  std::error_code ec;
  // Opening a pipe for reading waits for a writer, and its size is unknown: only files are read.
  require_regular_file(path, "safetensors file");
  const uint64_t size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) throw input_error(path, 0, "cannot open safetensors file" + (ec ? ": " + ec.message() : std::string()));
  if (!little_endian()) throw input_error(path, 0, "safetensors are little-endian; this machine is not");
  uint64_t len = 0;
  if (size < 8 || !in.read(reinterpret_cast<char*>(&len), 8)) throw fail("shorter than its 8-byte header length");
  if (len > size - 8)
    throw fail("the header length (" + std::to_string(len) + " bytes) runs past the end of the file (" +
               std::to_string(size) + " bytes)");
  // The reference implementation's cap: a header is a list of names, types, shapes and offsets.
  if (len > kMaxSafeTensorsHeader)
    throw fail("its header claims " + size_text(len) + ", more than the " + size_text(kMaxSafeTensorsHeader) +
               " safetensors allows (the reference implementation's limit)");
  std::string text(len, '\0');
  if (!in.read(text.data(), std::streamsize(len))) throw fail("truncated header");
  const uint64_t data_bytes = size - 8 - len;
  SafeTensorsIndex out;
  std::vector<Entry> entries;
  try {  // every field is read here, so that a malformed header is one error naming the file
    const auto header = nlohmann::json::parse(text);
    if (!header.is_object()) throw std::runtime_error("the header is not a JSON object");
    for (const auto& [name, v] : header.items()) {
      if (name == "__metadata__") {
        for (const auto& [key, value] : v.items()) {
          if (!value.is_string()) throw std::runtime_error("metadata '" + key + "' is not a string");
          out.metadata[key] = value.get<std::string>();
        }
        continue;
      }
      Entry e;
      e.name = name;
      const std::string dtype = v.at("dtype").get<std::string>();
      const auto t = dtype_from(dtype);
      if (!t) throw std::runtime_error("tensor " + name + " has an unknown dtype '" + dtype + "'");
      e.dtype = *t;
      e.shape = v.at("shape").get<std::vector<int64_t>>();
      const auto offsets = v.at("data_offsets").get<std::vector<uint64_t>>();
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_bytes)
        throw std::runtime_error("tensor " + name + ": data_offsets outside the file's " + std::to_string(data_bytes) +
                                 " bytes of data");
      e.begin = offsets[0];
      e.end = offsets[1];
      // The shape's byte count must be the range's (a count past 2^64 is no count).
      uint64_t expected = uint64_t(c10::elementSize(e.dtype));
      for (const int64_t d : e.shape) {
        if (d < 0) throw std::runtime_error("tensor " + name + " has a negative dimension");
        if (__builtin_mul_overflow(expected, uint64_t(d), &expected))
          throw std::runtime_error("tensor " + name + " has a shape too large for any file");
      }
      if (expected != e.end - e.begin)
        throw std::runtime_error("tensor " + name + ": its shape needs " + std::to_string(expected) + " bytes, its data_offsets give " +
                                 std::to_string(e.end - e.begin));
      entries.push_back(std::move(e));
    }
  } catch (const std::exception& e) {  // nlohmann's parse, type and missing-key errors, and the checks above
    throw fail(e.what());
  }
  // Two tensors may not share bytes (the format has no aliasing; a tied matrix is stored once).
  std::vector<const Entry*> by_offset;
  for (const auto& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) { return a->begin < b->begin; });
  const Entry* reach = nullptr;  // of the tensors so far, the one that ends last
  for (const Entry* e : by_offset) {
    if (e->end == e->begin) continue;  // empty: no bytes to share
    if (reach && e->begin < reach->end)
      throw fail("tensors " + reach->name + " and " + e->name + " overlap in the data (offsets " +
                 std::to_string(reach->begin) + "-" + std::to_string(reach->end) + " and " + std::to_string(e->begin) +
                 "-" + std::to_string(e->end) + ")");
    if (!reach || e->end > reach->end) reach = e;
  }
  // Nor may bytes lie outside every tensor (the format's rule: the data is indexed whole, without
  // holes). A header length one byte short shifts every tensor by a byte and leaves one at the
  // end; a hole or trailing bytes mean the file is not what its header says.
  uint64_t covered = 0;
  for (const Entry* e : by_offset) {
    if (e->end == e->begin) continue;
    if (e->begin != covered)
      throw fail("bytes " + std::to_string(covered) + "-" + std::to_string(e->begin) +
                 " of the data belong to no tensor (a hole before " + e->name + ")");
    covered = e->end;
  }
  if (covered != data_bytes)
    throw fail(std::to_string(data_bytes - covered) + (data_bytes - covered == 1 ? " byte" : " bytes") +
               " after the last tensor's data belong to no tensor (the data is " +
               std::to_string(data_bytes) + " bytes, the tensors end at " + std::to_string(covered) +
               "; a wrong header length?)");
  out.data_start = 8 + len;
  for (auto& e : entries) out.tensors[e.name] = static_cast<const SafeTensorsEntry&>(e);
  return out;
}

SafeTensors load_safetensors(const std::string& path) {
  const SafeTensorsIndex index = read_safetensors_index(path);  // every check of the header and offsets
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path, 0, "cannot open safetensors file");
  SafeTensors out;
  out.metadata = index.metadata;
  for (const auto& [name, e] : index.tensors) {
    auto t = allocate_tensor(e.shape, e.dtype, e.end - e.begin, path, name);
    in.seekg(std::streamoff(index.data_start + e.begin));
    if (e.end > e.begin && !in.read(static_cast<char*>(t.data_ptr()), std::streamsize(e.end - e.begin)))
      throw input_error(path, 0, "corrupt safetensors file: truncated data (tensor " + name + ")");
    out.tensors[name] = t;
  }
  return out;
}

}  // namespace yoke
