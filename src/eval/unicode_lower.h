// Python-compatible text primitives for scoring: sacreBLEU works on Python `str`, so its
// lowercasing (`str.lower()`), whitespace (`str.split()`) and "characters" (code points) are
// Unicode notions, while yoke keeps text as UTF-8 bytes. These helpers bridge the two.
#pragma once
#include <string>
#include <vector>

namespace yoke {

// UTF-8 → code points. Bytes that are not valid UTF-8 become U+DC80+byte (Python's
// "surrogateescape"), so nothing is dropped and encode_utf8_lossless() restores them.
std::u32string decode_utf8_lossless(const std::string& utf8);
std::string encode_utf8_lossless(const std::u32string& text);

// The whitespace of Python's str.isspace() (what str.split() / str.strip() cut on):
// ASCII \t\n\v\f\r and space, \x1c-\x1f, U+0085, U+00A0, U+1680, U+2000-U+200A,
// U+2028, U+2029, U+202F, U+205F, U+3000.
bool is_python_space(char32_t cp);

// Python's str.split() with no argument: runs of whitespace separate, no empty pieces.
std::vector<std::u32string> split_python_whitespace(const std::u32string& text);

// Python's str.rstrip() with no argument, on UTF-8.
std::string rstrip_python_whitespace(const std::string& utf8);

// Lowercase mapping of a single code point (Unicode simple mapping, as in Python 3.11's
// unicodedata 14.0), e.g. 'Ä' → 'ä', 'Σ' → 'σ'. Context-dependent and one-to-many cases are
// handled only by unicode_lower() below.
char32_t unicode_lower_char(char32_t cp);

// Python's str.lower(): the simple mappings for every script plus the two cases that are not
// one code point to one: U+0130 'İ' → "i̇" (i + U+0307) and the final sigma 'Σ' → 'ς' at the
// end of a word (word boundaries judged for Latin, Greek and Cyrillic letters).
std::u32string unicode_lower(const std::u32string& text);
std::string unicode_lower(const std::string& utf8);

}  // namespace yoke
