#include "config/decoding_options.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "config/key_ranges.h"
#include "util/error.h"

namespace yoke {

namespace {

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// nbest is not a config key (a model has no n-best): its range is [1, beam], checked by
// check_decoding_values once beam is known, and here only from below.
const KeyRange kNbestFloor{1, INFINITY, false, true};

const KeyRange& range_of(const std::string& name) {
  if (name == "nbest") return kNbestFloor;
  return *key_range(name);  // the table's other options are config keys with ranges (tested)
}

}  // namespace

const std::vector<DecodingOption>& decoding_options() {
  static const std::vector<DecodingOption> table = [] {
    std::vector<DecodingOption> t;
#define YOKE_DECODING_ROW(name, kind, dflt, help) t.push_back({#name, OptionKind::kind, dflt, help, ""});
    YOKE_DECODING_OPTIONS(YOKE_DECODING_ROW)
#undef YOKE_DECODING_ROW
    for (auto& o : t) o.range = o.name == "nbest" ? "in [1, beam]" : range_text(range_of(o.name));
    return t;
  }();
  return table;
}

const DecodingOption* find_decoding_option(const std::string& name) {
  for (const auto& o : decoding_options())
    if (o.name == name) return &o;
  return nullptr;
}

std::string decoding_option_names() {
  std::string out;
  for (const auto& o : decoding_options()) out += (out.empty() ? "" : ", ") + o.name;
  return out;
}

double& decoding_value(DecodingValues& values, const std::string& name) {
#define YOKE_DECODING_FIELD_OF(field, kind, dflt, help) \
  if (name == #field) return values.field;
  YOKE_DECODING_OPTIONS(YOKE_DECODING_FIELD_OF)
#undef YOKE_DECODING_FIELD_OF
  throw std::logic_error("decoding_value: '" + name + "' is not a decoding option");
}

void set_decoding_option(DecodingValues& values, const std::string& name, double value) {
  const DecodingOption* o = find_decoding_option(name);
  if (!o) throw InputError("unknown decoding option '" + name + "'; the options are " + decoding_option_names());
  // NaN fails the range check below with the range in the message, as `yoke translate` words it.
  if (o->kind == OptionKind::whole && std::isfinite(value) && std::floor(value) != value)
    throw InputError(name + " must be a whole number, got " + number_text(value));
  if (!in_range(range_of(name), value)) throw InputError(name + " must be " + o->range + ", got " + number_text(value));
  decoding_value(values, name) = value;
}

void check_decoding_values(const DecodingValues& values, double max_beam) {
  if (values.beam > max_beam)
    throw InputError("beam must be at most " + number_text(max_beam) + ", got " + number_text(values.beam));
  if (values.nbest > values.beam)
    throw InputError("nbest must be in [1, beam]: " + number_text(values.nbest) + " hypotheses from a beam of " +
                     number_text(values.beam));
}

}  // namespace yoke
