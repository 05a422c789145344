// The decoding options' table (config/decoding_options.h): every option that is a config key has
// that key's default and range, and each refusal names the option.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "config/config.h"
#include "config/decoding_options.h"
#include "config/key_ranges.h"
#include "util/error.h"

namespace yoke {
namespace {

std::string refusal(DecodingValues& v, const std::string& name, double value) {
  try {
    set_decoding_option(v, name, value);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(DecodingOptions, ShareTheConfigKeysDefaultsAndRanges) {
  // Exact equality throughout: the values are literals stored and read back (table defaults, config
  // defaults, what set_decoding_option was given); no arithmetic, so no kernel or order of sums.
  const Config defaults;
  const DecodingValues values;
  ASSERT_EQ(decoding_option_names(), "beam, nbest, lenpen, max_len_a, max_len_b");
  EXPECT_EQ(values.beam, defaults.beam);
  EXPECT_EQ(values.lenpen, defaults.lenpen);
  EXPECT_EQ(values.max_len_a, defaults.max_len_a);
  EXPECT_EQ(values.max_len_b, defaults.max_len_b);
  EXPECT_EQ(values.nbest, 1);
  for (const auto& o : decoding_options()) {
    EXPECT_FALSE(o.help.empty()) << o.name;
    if (o.name == "nbest") continue;
    const KeyRange* r = key_range(o.name);
    ASSERT_NE(r, nullptr) << o.name << " is not a config key with a range";
    EXPECT_EQ(o.range, range_text(*r)) << o.name;
  }
}

TEST(DecodingOptions, RefusalsNameTheOptionAndTheRange) {
  DecodingValues v;
  EXPECT_EQ(refusal(v, "beam", 2.5), "beam must be a whole number, got 2.5");
  EXPECT_EQ(refusal(v, "beam", 0), "beam must be in [1, 1024], got 0");
  EXPECT_EQ(refusal(v, "nbest", -1), "nbest must be in [1, beam], got -1");
  EXPECT_EQ(refusal(v, "lenpen", NAN), "lenpen must be in [0, 10], got nan");
  EXPECT_EQ(refusal(v, "max_len_a", -0.5), "max_len_a must be >= 0, got -0.5");
  EXPECT_EQ(refusal(v, "beams", 5), "unknown decoding option 'beams'; the options are beam, nbest, lenpen, max_len_a, max_len_b");
  EXPECT_EQ(v.beam, 5) << "a refused value is not kept";
  EXPECT_EQ(refusal(v, "lenpen", 0.6), "");
  EXPECT_EQ(refusal(v, "max_len_b", 0), "");
  EXPECT_EQ(v.lenpen, 0.6);
  EXPECT_EQ(v.max_len_b, 0);
}

TEST(DecodingOptions, NbestAtMostTheBeamAndTheBeamAtMostTheDoorsLimit) {
  DecodingValues v;
  set_decoding_option(v, "beam", 4);
  set_decoding_option(v, "nbest", 4);
  EXPECT_NO_THROW(check_decoding_values(v));
  set_decoding_option(v, "nbest", 5);
  EXPECT_THROW(check_decoding_values(v), InputError);
  set_decoding_option(v, "nbest", 1);
  EXPECT_NO_THROW(check_decoding_values(v, 4));
  try {
    check_decoding_values(v, 3);
    ADD_FAILURE() << "a beam over the limit passed";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "beam must be at most 3, got 4");
  }
}

}  // namespace
}  // namespace yoke
