#include "store/ctranslate2_model_file.h"

#include <cstring>
#include <functional>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "util/atomic_file.h"
#include "util/error.h"

namespace yoke {
namespace {

constexpr uint32_t kBinaryVersion = 6;

// CTranslate2's DataType enum (include/ctranslate2/types.h), in the order model_spec.py lists it.
uint8_t dtype_id(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return 0;
    case at::kChar: return 1;
    case at::kShort: return 2;
    case at::kInt: return 3;
    default: return 255;
  }
}

std::string_view bytes_of(const at::Tensor& t) {
  return {static_cast<const char*>(t.data_ptr()), size_t(t.numel()) * t.element_size()};
}

class Writer {
 public:
  explicit Writer(AtomicFile& f) : f_(f) {}
  template <typename T>
  void number(T v) { f_.write(&v, sizeof v); }  // x86-64 and the format are little-endian
  void string(const std::string& s) {
    number(uint16_t(s.size() + 1));
    f_.write(s.data(), s.size());
    number(uint8_t(0));
  }
  void bytes(std::string_view b) { f_.write(b.data(), b.size()); }

 private:
  AtomicFile& f_;
};

}  // namespace

CTranslate2Written write_ctranslate2_model(const std::string& path, const CTranslate2Model& model) {
  // Contiguous copies, and which variable each one repeats (the first equal one in name order).
  std::map<std::string, at::Tensor> values;
  std::map<std::string, std::string> alias_of;
  std::unordered_multimap<size_t, std::string> seen;  // hash of the bytes -> stored names
  for (const auto& [name, t] : model.variables) {
    if (name.size() >= std::numeric_limits<uint16_t>::max())
      throw input_error(path, 0, "variable name '" + name.substr(0, 40) + "…' is too long for a 16-bit length");
    const auto v = t.detach().to(at::kCPU).contiguous();
    if (dtype_id(v.scalar_type()) == 255)
      throw input_error(path, 0, "variable " + name + " has dtype " + std::string(c10::toString(v.scalar_type())) +
                                     ", which CTranslate2's model.bin has no id for");
    if (uint64_t(v.numel()) * v.element_size() > std::numeric_limits<uint32_t>::max())
      throw input_error(path, 0, "variable " + name + " holds more bytes than model.bin's 32-bit size field (4 GiB)");
    for (const int64_t d : v.sizes())
      if (uint64_t(d) > std::numeric_limits<uint32_t>::max())
        throw input_error(path, 0, "variable " + name + " has a dimension over model.bin's 32-bit field");
    if (v.dim() > 0) {
      const auto b = bytes_of(v);
      const size_t h = std::hash<std::string_view>{}(b);
      const auto [first, last] = seen.equal_range(h);
      for (auto it = first; it != last; ++it) {
        const auto& other = values.at(it->second);
        if (other.scalar_type() == v.scalar_type() && other.sizes() == v.sizes() && bytes_of(other) == b) {
          alias_of[name] = it->second;
          break;
        }
      }
      if (!alias_of.count(name)) seen.emplace(h, name);
    }
    values.emplace(name, v);
  }

  CTranslate2Written r;
  AtomicFile file(path);
  Writer w(file);
  w.number(kBinaryVersion);
  w.string(model.spec);
  w.number(model.revision);
  w.number(uint32_t(values.size() - alias_of.size()));
  for (const auto& [name, v] : values) {
    if (alias_of.count(name)) continue;
    w.string(name);
    w.number(uint8_t(v.dim()));
    for (const int64_t d : v.sizes()) w.number(uint32_t(d));
    w.number(dtype_id(v.scalar_type()));
    const auto b = bytes_of(v);
    w.number(uint32_t(b.size()));
    w.bytes(b);
    ++r.stored;
    r.values += v.numel();
  }
  w.number(uint32_t(alias_of.size()));
  for (const auto& [alias, name] : alias_of) {  // a std::map: in name order, as model_spec.py sorts them
    w.string(alias);
    w.string(name);
  }
  file.commit();
  r.aliases = alias_of.size();
  return r;
}

}  // namespace yoke
