// The enumerations of the config (task, tie, output, arch, ...) and their names. Names are what files,
// the command line and checkpoints hold; the code compares enums. This is the one place that
// maps between them.
#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "util/error.h"

namespace yoke {

enum class Task { translate, lm };

// How the word matrices are shared (embed/sharing.h has the table).
enum class Tie { none, decoder, all, src_tgt, shared_private };

// The logit estimator on the output matrix (embed/estimator.h).
enum class Estimator { dot, l2, square, distance, cosine };

// The layer stack: self-attention, or Wu et al. 2019's lightweight or dynamic convolutions in its
// place (model/architecture.h builds each).
enum class Arch { transformer, lightconv, dynamicconv };

// Layer norm before (pre) or after (post) each sublayer.
enum class Norm { pre, post };

// Position embeddings: fixed sinusoids or a learned table.
enum class Positions { sinusoidal, learned };

// Input embeddings multiplied by √d_model (sqrt) or not ("1").
enum class EmbedScale { sqrt, one };

// An auxiliary objective that bridges source and target embeddings: none, or Kuang et al.
// 2018's direct bridging (model/direct_bridge.h).
enum class Bridging { none, direct };

// What early stopping and checkpoint_best follow.
enum class EarlyStopMetric { bleu, loss };

// Where to train: auto = a GPU when there is one.
enum class Device { cpu, cuda, any };

// names[i] is the name of the enumerator with value i.
template <class E> struct EnumNames;
template <> struct EnumNames<Task> {
  static constexpr std::array<const char*, 2> names = {"translate", "lm"};
};
template <> struct EnumNames<Tie> {
  static constexpr std::array<const char*, 5> names = {"none", "decoder", "all", "src-tgt", "shared-private"};
};
template <> struct EnumNames<Estimator> {
  static constexpr std::array<const char*, 5> names = {"dot", "l2", "square", "distance", "cosine"};
};

template <> struct EnumNames<Arch> {
  static constexpr std::array<const char*, 3> names = {"transformer", "lightconv", "dynamicconv"};
};
template <> struct EnumNames<Norm> {
  static constexpr std::array<const char*, 2> names = {"pre", "post"};
};
template <> struct EnumNames<Positions> {
  static constexpr std::array<const char*, 2> names = {"sinusoidal", "learned"};
};
template <> struct EnumNames<EmbedScale> {
  static constexpr std::array<const char*, 2> names = {"sqrt", "1"};
};
template <> struct EnumNames<Bridging> {
  static constexpr std::array<const char*, 2> names = {"none", "direct"};
};
template <> struct EnumNames<EarlyStopMetric> {
  static constexpr std::array<const char*, 2> names = {"bleu", "loss"};
};
template <> struct EnumNames<Device> {
  static constexpr std::array<const char*, 3> names = {"cpu", "cuda", "auto"};
};

template <class E, class = void> struct is_config_enum : std::false_type {};
template <class E> struct is_config_enum<E, std::void_t<decltype(EnumNames<E>::names)>> : std::true_type {};

template <class E> const char* name_of(E e) { return EnumNames<E>::names.at(size_t(e)); }

template <class E> std::vector<std::string> names_of() {
  return {EnumNames<E>::names.begin(), EnumNames<E>::names.end()};
}

template <class E> std::optional<E> enum_from_name(const std::string& name) {
  for (size_t i = 0; i < EnumNames<E>::names.size(); ++i)
    if (name == EnumNames<E>::names[i]) return E(i);
  return std::nullopt;
}

// "a, b, c": the allowed values as error messages list them.
inline std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Throws InputError "key = value: expected a, b, c" for a name that is not one of E's.
template <class E> E parse_enum(const std::string& key, const std::string& name) {
  if (auto e = enum_from_name<E>(name)) return *e;
  throw InputError(key + " = " + name + ": expected " + join_names(names_of<E>()));
}

}  // namespace yoke
