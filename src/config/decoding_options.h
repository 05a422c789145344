// The decoding options a translation request may set, in one table (name, whole or real, default,
// help; the range is the config key's, config/key_ranges.h, so a model's config and a request
// accept the same values). `yoke translate --help`, the server's JSON (serve/server.cpp) and
// Python's Model.translate all read it: an option is named, checked and explained the same way at
// every front door, and a key a door does not know is refused by name instead of ignored.
#pragma once
#include <string>
#include <vector>

namespace yoke {

//         name       kind   default  help
#define YOKE_DECODING_OPTIONS(X)                                                                   \
  X(beam, whole, 5, "beam width; 1 = greedy search")                                               \
  X(nbest, whole, 1, "hypotheses per sentence, best first (at most beam)")                         \
  X(lenpen, real, 1.0, "length penalty: score = log p / (subwords + 1)^lenpen")                    \
  X(max_len_a, real, 1.2, "at most max_len_a * source subwords + max_len_b target subwords")        \
  X(max_len_b, whole, 10, "see max_len_a")

// One value per option of the table.
struct DecodingValues {
#define YOKE_DECODING_FIELD(name, kind, dflt, help) double name = dflt;
  YOKE_DECODING_OPTIONS(YOKE_DECODING_FIELD)
#undef YOKE_DECODING_FIELD
};

enum class OptionKind { whole, real };

struct DecodingOption {
  std::string name;
  OptionKind kind;
  double default_value;
  std::string help;
  std::string range;  // what a message says the value must be: "in [1, 1024]", ">= 0", "in [1, beam]"
};

const std::vector<DecodingOption>& decoding_options();
const DecodingOption* find_decoding_option(const std::string& name);  // nullptr when not in the table
std::string decoding_option_names();                                 // "beam, nbest, lenpen, ..."

// Sets `name` to `value`, checked: throws InputError naming the option for a name not in the table
// (listing those that are), a real value for a whole option, NaN or a value out of its range.
void set_decoding_option(DecodingValues& values, const std::string& name, double value);

// The field of `values` that option `name` sets (std::logic_error for a name not in the table):
// front doors bind their own parsers to it (CLI11 for `yoke translate`).
double& decoding_value(DecodingValues& values, const std::string& name);

// What no single option can check: nbest <= beam, and beam <= max_beam (a server's --max-beam;
// the key range's 1024 otherwise). Throws InputError naming the option.
void check_decoding_values(const DecodingValues& values, double max_beam = 1024);

}  // namespace yoke
