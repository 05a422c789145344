#include "eval/tokenize_13a.h"

#include <algorithm>

#include "eval/unicode_lower.h"

namespace yoke {

namespace {

// Python's str.replace: every non-overlapping occurrence, scanning left to right.
std::string replace_all(const std::string& text, const std::string& from, const std::string& to) {
  if (text.find(from) == std::string::npos) return text;
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  for (size_t hit; (hit = text.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(text, pos, hit - pos);
    out += to;
  }
  out.append(text, pos, std::string::npos);
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// The class [\{-\~\[-\` -\&\(-\+\:-\@\/]: { | } ~ [ \ ] ^ _ ` space ! " # $ % & ( ) * + : ; < = >
// ? @ /. Not in it: ' , - . and alphanumerics.
bool is_split_punct(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

// Rule 1: a space on both sides of every listed punctuation mark.
std::string pad_punctuation(const std::string& s) {
  std::string out;
  out.reserve(s.size() * 2);
  for (char c : s) {
    if (is_split_punct(c)) {
      out += ' ';
      out += c;
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// One re.sub pass of a two-character pattern: where match(a, b) holds for s[i], s[i+1], write
// emit(a, b) and resume after both; otherwise copy s[i]. Byte scanning is exact here: each
// pattern has one ASCII side, and a multi-byte character on the other side matches or copies
// the same as the code point would (its other bytes are copied unchanged around the match).
template <typename Match, typename Emit>
std::string substitute_pairs(const std::string& s, Match match, Emit emit) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && match(s[i], s[i + 1])) {
      emit(s[i], s[i + 1], out);
      i += 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// "\1 \2 ": a space after each of the two characters.
void emit_split_after(char a, char b, std::string& out) {
  out += a;
  out += ' ';
  out += b;
  out += ' ';
}

// " \1 \2": a space before each of the two characters.
void emit_split_before(char a, char b, std::string& out) {
  out += ' ';
  out += a;
  out += ' ';
  out += b;
}

// Rule 2: ([^0-9])([\.,]) → "\1 \2 ".
std::string split_period_comma_after_nondigit(const std::string& s) {
  return substitute_pairs(
      s, [](char a, char b) { return !is_digit(a) && is_period_or_comma(b); }, emit_split_after);
}

// Rule 3: ([\.,])([^0-9]) → " \1 \2".
std::string split_period_comma_before_nondigit(const std::string& s) {
  return substitute_pairs(
      s, [](char a, char b) { return is_period_or_comma(a) && !is_digit(b); }, emit_split_before);
}

// Rule 4: ([0-9])(-) → "\1 \2 ".
std::string split_dash_after_digit(const std::string& s) {
  return substitute_pairs(
      s, [](char a, char b) { return is_digit(a) && b == '-'; }, emit_split_after);
}

// ' '.join(s.split()): Python's whitespace is Unicode (e.g. U+00A0), so decode when needed.
std::string collapse_whitespace(const std::string& s) {
  const bool ascii = std::all_of(s.begin(), s.end(),
                                 [](char ch) { return static_cast<unsigned char>(ch) < 0x80; });
  const std::u32string text = ascii ? std::u32string(s.begin(), s.end()) : decode_utf8_lossless(s);
  std::u32string joined;
  joined.reserve(text.size());
  for (const std::u32string& word : split_python_whitespace(text)) {
    if (!joined.empty()) joined += U' ';
    joined += word;
  }
  return encode_utf8_lossless(joined);
}

}  // namespace

std::string tokenize_13a(const std::string& line) {
  std::string s = replace_all(line, "<skipped>", "");
  s = replace_all(s, "-\n", "");
  s = replace_all(s, "\n", " ");
  s = replace_all(s, "&quot;", "\"");
  s = replace_all(s, "&amp;", "&");
  s = replace_all(s, "&lt;", "<");
  s = replace_all(s, "&gt;", ">");
  s = pad_punctuation(" " + s + " ");
  s = split_period_comma_after_nondigit(s);
  s = split_period_comma_before_nondigit(s);
  s = split_dash_after_digit(s);
  return collapse_whitespace(s);
}

}  // namespace yoke
