#include "eval/unicode_lower.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace yoke {

namespace {

constexpr char32_t kEscapeBase = 0xDC00;  // surrogateescape: invalid byte b ↦ U+DC00 + b

// Length of the valid UTF-8 sequence starting at s[i] and its code point; 0 when invalid.
size_t decode_one(const std::string& s, size_t i, char32_t& cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  size_t len;
  char32_t min;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, UTF-16 surrogates and values past U+10FFFF are not UTF-8.
  if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return len;
}

void append_utf8(char32_t cp, std::string& out) {
  if (cp >= kEscapeBase + 0x80 && cp <= kEscapeBase + 0xFF) {
    out += static_cast<char>(cp - kEscapeBase);  // an escaped invalid byte goes back as it was
  } else if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Runs of code points [first, last] stepping by `stride` whose lowercase is cp + delta.
// Generated from Python 3.11 (Unicode 14.0): every code point c with len(c.lower()) == 1 and
// c.lower() != c, merged into runs. Sorted by `first`; runs never overlap.
struct LowerRun {
  char32_t first, last;
  int32_t stride, delta;
};

// clang-format off
constexpr LowerRun kLowerRuns[] = {
    {0x41, 0x5A, 1, 32}, {0xC0, 0xD6, 1, 32}, {0xD8, 0xDE, 1, 32}, {0x100, 0x12E, 2, 1},
    {0x132, 0x136, 2, 1}, {0x139, 0x147, 2, 1}, {0x14A, 0x176, 2, 1}, {0x178, 0x178, 1, -121},
    {0x179, 0x17D, 2, 1}, {0x181, 0x181, 1, 210}, {0x182, 0x184, 2, 1}, {0x186, 0x186, 1, 206},
    {0x187, 0x187, 1, 1}, {0x189, 0x18A, 1, 205}, {0x18B, 0x18B, 1, 1}, {0x18E, 0x18E, 1, 79},
    {0x18F, 0x18F, 1, 202}, {0x190, 0x190, 1, 203}, {0x191, 0x191, 1, 1},
    {0x193, 0x193, 1, 205}, {0x194, 0x194, 1, 207}, {0x196, 0x196, 1, 211},
    {0x197, 0x197, 1, 209}, {0x198, 0x198, 1, 1}, {0x19C, 0x19C, 1, 211},
    {0x19D, 0x19D, 1, 213}, {0x19F, 0x19F, 1, 214}, {0x1A0, 0x1A4, 2, 1},
    {0x1A6, 0x1A6, 1, 218}, {0x1A7, 0x1A7, 1, 1}, {0x1A9, 0x1A9, 1, 218}, {0x1AC, 0x1AC, 1, 1},
    {0x1AE, 0x1AE, 1, 218}, {0x1AF, 0x1AF, 1, 1}, {0x1B1, 0x1B2, 1, 217}, {0x1B3, 0x1B5, 2, 1},
    {0x1B7, 0x1B7, 1, 219}, {0x1B8, 0x1B8, 1, 1}, {0x1BC, 0x1BC, 1, 1}, {0x1C4, 0x1C4, 1, 2},
    {0x1C5, 0x1C5, 1, 1}, {0x1C7, 0x1C7, 1, 2}, {0x1C8, 0x1C8, 1, 1}, {0x1CA, 0x1CA, 1, 2},
    {0x1CB, 0x1DB, 2, 1}, {0x1DE, 0x1EE, 2, 1}, {0x1F1, 0x1F1, 1, 2}, {0x1F2, 0x1F4, 2, 1},
    {0x1F6, 0x1F6, 1, -97}, {0x1F7, 0x1F7, 1, -56}, {0x1F8, 0x21E, 2, 1},
    {0x220, 0x220, 1, -130}, {0x222, 0x232, 2, 1}, {0x23A, 0x23A, 1, 10795},
    {0x23B, 0x23B, 1, 1}, {0x23D, 0x23D, 1, -163}, {0x23E, 0x23E, 1, 10792},
    {0x241, 0x241, 1, 1}, {0x243, 0x243, 1, -195}, {0x244, 0x244, 1, 69},
    {0x245, 0x245, 1, 71}, {0x246, 0x24E, 2, 1}, {0x370, 0x372, 2, 1}, {0x376, 0x376, 1, 1},
    {0x37F, 0x37F, 1, 116}, {0x386, 0x386, 1, 38}, {0x388, 0x38A, 1, 37},
    {0x38C, 0x38C, 1, 64}, {0x38E, 0x38F, 1, 63}, {0x391, 0x3A1, 1, 32}, {0x3A3, 0x3AB, 1, 32},
    {0x3CF, 0x3CF, 1, 8}, {0x3D8, 0x3EE, 2, 1}, {0x3F4, 0x3F4, 1, -60}, {0x3F7, 0x3F7, 1, 1},
    {0x3F9, 0x3F9, 1, -7}, {0x3FA, 0x3FA, 1, 1}, {0x3FD, 0x3FF, 1, -130},
    {0x400, 0x40F, 1, 80}, {0x410, 0x42F, 1, 32}, {0x460, 0x480, 2, 1}, {0x48A, 0x4BE, 2, 1},
    {0x4C0, 0x4C0, 1, 15}, {0x4C1, 0x4CD, 2, 1}, {0x4D0, 0x52E, 2, 1}, {0x531, 0x556, 1, 48},
    {0x10A0, 0x10C5, 1, 7264}, {0x10C7, 0x10C7, 1, 7264}, {0x10CD, 0x10CD, 1, 7264},
    {0x13A0, 0x13EF, 1, 38864}, {0x13F0, 0x13F5, 1, 8}, {0x1C90, 0x1CBA, 1, -3008},
    {0x1CBD, 0x1CBF, 1, -3008}, {0x1E00, 0x1E94, 2, 1}, {0x1E9E, 0x1E9E, 1, -7615},
    {0x1EA0, 0x1EFE, 2, 1}, {0x1F08, 0x1F0F, 1, -8}, {0x1F18, 0x1F1D, 1, -8},
    {0x1F28, 0x1F2F, 1, -8}, {0x1F38, 0x1F3F, 1, -8}, {0x1F48, 0x1F4D, 1, -8},
    {0x1F59, 0x1F5F, 2, -8}, {0x1F68, 0x1F6F, 1, -8}, {0x1F88, 0x1F8F, 1, -8},
    {0x1F98, 0x1F9F, 1, -8}, {0x1FA8, 0x1FAF, 1, -8}, {0x1FB8, 0x1FB9, 1, -8},
    {0x1FBA, 0x1FBB, 1, -74}, {0x1FBC, 0x1FBC, 1, -9}, {0x1FC8, 0x1FCB, 1, -86},
    {0x1FCC, 0x1FCC, 1, -9}, {0x1FD8, 0x1FD9, 1, -8}, {0x1FDA, 0x1FDB, 1, -100},
    {0x1FE8, 0x1FE9, 1, -8}, {0x1FEA, 0x1FEB, 1, -112}, {0x1FEC, 0x1FEC, 1, -7},
    {0x1FF8, 0x1FF9, 1, -128}, {0x1FFA, 0x1FFB, 1, -126}, {0x1FFC, 0x1FFC, 1, -9},
    {0x2126, 0x2126, 1, -7517}, {0x212A, 0x212A, 1, -8383}, {0x212B, 0x212B, 1, -8262},
    {0x2132, 0x2132, 1, 28}, {0x2160, 0x216F, 1, 16}, {0x2183, 0x2183, 1, 1},
    {0x24B6, 0x24CF, 1, 26}, {0x2C00, 0x2C2F, 1, 48}, {0x2C60, 0x2C60, 1, 1},
    {0x2C62, 0x2C62, 1, -10743}, {0x2C63, 0x2C63, 1, -3814}, {0x2C64, 0x2C64, 1, -10727},
    {0x2C67, 0x2C6B, 2, 1}, {0x2C6D, 0x2C6D, 1, -10780}, {0x2C6E, 0x2C6E, 1, -10749},
    {0x2C6F, 0x2C6F, 1, -10783}, {0x2C70, 0x2C70, 1, -10782}, {0x2C72, 0x2C72, 1, 1},
    {0x2C75, 0x2C75, 1, 1}, {0x2C7E, 0x2C7F, 1, -10815}, {0x2C80, 0x2CE2, 2, 1},
    {0x2CEB, 0x2CED, 2, 1}, {0x2CF2, 0x2CF2, 1, 1}, {0xA640, 0xA66C, 2, 1},
    {0xA680, 0xA69A, 2, 1}, {0xA722, 0xA72E, 2, 1}, {0xA732, 0xA76E, 2, 1},
    {0xA779, 0xA77B, 2, 1}, {0xA77D, 0xA77D, 1, -35332}, {0xA77E, 0xA786, 2, 1},
    {0xA78B, 0xA78B, 1, 1}, {0xA78D, 0xA78D, 1, -42280}, {0xA790, 0xA792, 2, 1},
    {0xA796, 0xA7A8, 2, 1}, {0xA7AA, 0xA7AA, 1, -42308}, {0xA7AB, 0xA7AB, 1, -42319},
    {0xA7AC, 0xA7AC, 1, -42315}, {0xA7AD, 0xA7AD, 1, -42305}, {0xA7AE, 0xA7AE, 1, -42308},
    {0xA7B0, 0xA7B0, 1, -42258}, {0xA7B1, 0xA7B1, 1, -42282}, {0xA7B2, 0xA7B2, 1, -42261},
    {0xA7B3, 0xA7B3, 1, 928}, {0xA7B4, 0xA7C2, 2, 1}, {0xA7C4, 0xA7C4, 1, -48},
    {0xA7C5, 0xA7C5, 1, -42307}, {0xA7C6, 0xA7C6, 1, -35384}, {0xA7C7, 0xA7C9, 2, 1},
    {0xA7D0, 0xA7D0, 1, 1}, {0xA7D6, 0xA7D8, 2, 1}, {0xA7F5, 0xA7F5, 1, 1},
    {0xFF21, 0xFF3A, 1, 32}, {0x10400, 0x10427, 1, 40}, {0x104B0, 0x104D3, 1, 40},
    {0x10570, 0x1057A, 1, 39}, {0x1057C, 0x1058A, 1, 39}, {0x1058C, 0x10592, 1, 39},
    {0x10594, 0x10595, 1, 39}, {0x10C80, 0x10CB2, 1, 64}, {0x118A0, 0x118BF, 1, 32},
    {0x16E40, 0x16E5F, 1, 32}, {0x1E900, 0x1E921, 1, 34},
};
// clang-format on

// Inclusive code point ranges, sorted and disjoint.
struct CodepointRange {
  char32_t first, last;
};

template <size_t N>
bool in_ranges(const CodepointRange (&ranges)[N], char32_t c) {
  const CodepointRange* after = std::upper_bound(ranges, ranges + N, c,
                                                [](char32_t x, const CodepointRange& r) { return x < r.first; });
  return after != ranges && c <= std::prev(after)->last;
}

// The final-sigma rule asks two Unicode properties, Cased and Case_Ignorable. Both tables are
// generated from Python 3.11 (probing str.islower/isupper/istitle and the sigma rule itself) for
// the Latin, Greek and Cyrillic blocks (U+0000-U+052F, U+1D00-U+20FF); outside them a
// character counts as neither, which only matters for a 'Σ' next to another script.
// clang-format off
constexpr CodepointRange kCased[] = {
    {0x41, 0x5A}, {0x61, 0x7A}, {0xAA, 0xAA}, {0xB5, 0xB5}, {0xBA, 0xBA}, {0xC0, 0xD6},
    {0xD8, 0xF6}, {0xF8, 0x1BA}, {0x1BC, 0x1BF}, {0x1C4, 0x293}, {0x295, 0x2B8},
    {0x2C0, 0x2C1}, {0x2E0, 0x2E4}, {0x345, 0x345}, {0x370, 0x373}, {0x376, 0x377},
    {0x37A, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C},
    {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481}, {0x48A, 0x52F}, {0x1D00, 0x1DBF},
    {0x1E00, 0x1F15}, {0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57},
    {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4},
    {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3},
    {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2071, 0x2071},
    {0x207F, 0x207F}, {0x2090, 0x209C},
};
// clang-format on

// clang-format off
constexpr CodepointRange kCaseIgnorable[] = {
    {0x27, 0x27}, {0x2E, 0x2E}, {0x3A, 0x3A}, {0x5E, 0x5E}, {0x60, 0x60}, {0xA8, 0xA8},
    {0xAD, 0xAD}, {0xAF, 0xAF}, {0xB4, 0xB4}, {0xB7, 0xB8}, {0x2B0, 0x36F}, {0x374, 0x375},
    {0x37A, 0x37A}, {0x384, 0x385}, {0x387, 0x387}, {0x483, 0x489}, {0x1D2C, 0x1D6A},
    {0x1D78, 0x1D78}, {0x1D9B, 0x1DFF}, {0x1FBD, 0x1FBD}, {0x1FBF, 0x1FC1}, {0x1FCD, 0x1FCF},
    {0x1FDD, 0x1FDF}, {0x1FED, 0x1FEF}, {0x1FFD, 0x1FFE}, {0x200B, 0x200F}, {0x2018, 0x2019},
    {0x2024, 0x2024}, {0x2027, 0x2027}, {0x202A, 0x202E}, {0x2060, 0x2064}, {0x2066, 0x206F},
    {0x2071, 0x2071}, {0x207F, 0x207F}, {0x2090, 0x209C}, {0x20D0, 0x20F0},
};
// clang-format on

bool is_cased_letter(char32_t c) { return in_ranges(kCased, c); }
bool is_case_ignorable(char32_t c) { return in_ranges(kCaseIgnorable, c); }

// 'Σ' at text[i] becomes 'ς' when a cased letter precedes it and none follows it, looking
// through case-ignorable characters on both sides (CPython's handle_capital_sigma).
bool is_final_sigma(const std::u32string& text, size_t i) {
  size_t j = i;
  while (j > 0 && is_case_ignorable(text[j - 1])) --j;
  if (j == 0 || !is_cased_letter(text[j - 1])) return false;
  size_t k = i + 1;
  while (k < text.size() && is_case_ignorable(text[k])) ++k;
  return k == text.size() || !is_cased_letter(text[k]);
}

}  // namespace

std::u32string decode_utf8_lossless(const std::string& utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  for (size_t i = 0; i < utf8.size();) {
    char32_t cp;
    const size_t len = decode_one(utf8, i, cp);
    if (len == 0) {
      out += kEscapeBase + static_cast<unsigned char>(utf8[i]);
      ++i;
    } else {
      out += cp;
      i += len;
    }
  }
  return out;
}

std::string encode_utf8_lossless(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : text) append_utf8(cp, out);
  return out;
}

bool is_python_space(char32_t c) {
  if (c <= 0x20) return c == 0x20 || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  if (c < 0x85) return false;
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::vector<std::u32string> split_python_whitespace(const std::u32string& text) {
  std::vector<std::u32string> pieces;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_python_space(text[i])) ++i;
    const size_t start = i;
    while (i < text.size() && !is_python_space(text[i])) ++i;
    if (i > start) pieces.emplace_back(text, start, i - start);
  }
  return pieces;
}

std::string rstrip_python_whitespace(const std::string& utf8) {
  // Only the tail can change, so decode just enough of it: step back over whole characters.
  size_t end = utf8.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && end - start < 4 && (static_cast<unsigned char>(utf8[start]) & 0xC0) == 0x80)
      --start;
    char32_t cp;
    if (decode_one(utf8, start, cp) != end - start || !is_python_space(cp)) break;
    end = start;
  }
  return utf8.substr(0, end);
}

char32_t unicode_lower_char(char32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  if (cp == 0x130) return 'i';  // simple mapping; unicode_lower() adds the dot above
  // The last run starting at or before cp is the only one that can hold it.
  const auto after = std::upper_bound(std::begin(kLowerRuns), std::end(kLowerRuns), cp,
                                      [](char32_t c, const LowerRun& r) { return c < r.first; });
  if (after == std::begin(kLowerRuns)) return cp;
  const LowerRun& run = *std::prev(after);
  if (cp > run.last || (cp - run.first) % run.stride != 0) return cp;
  return static_cast<char32_t>(static_cast<int32_t>(cp) + run.delta);
}

std::u32string unicode_lower(const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    if (c == 0x130) {
      out += U"i\u0307";
    } else if (c == 0x3A3) {
      out += is_final_sigma(text, i) ? char32_t{0x3C2} : char32_t{0x3C3};
    } else {
      out += unicode_lower_char(c);
    }
  }
  return out;
}

std::string unicode_lower(const std::string& utf8) {
  // ASCII-only text (the common case) needs no decoding.
  const bool ascii = std::all_of(utf8.begin(), utf8.end(),
                                 [](char ch) { return static_cast<unsigned char>(ch) < 0x80; });
  if (!ascii) return encode_utf8_lossless(unicode_lower(decode_utf8_lossless(utf8)));
  std::string out = utf8;
  for (char& ch : out)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch + 32);
  return out;
}

}  // namespace yoke
