// sacreBLEU's default BLEU tokenizer "13a" (the rules of mteval-v13a.pl), byte for byte.
#pragma once
#include <string>

namespace yoke {

// Exactly sacreBLEU 2.6's Tokenizer13a()(line) on UTF-8 text:
//  1. remove "<skipped>" and "-\n", turn "\n" into a space, unescape &quot; &amp; &lt; &gt;
//     (in that order, each over the whole line);
//  2. pad with a space on each side, then apply four regex substitutions in turn, each one a
//     single left-to-right pass of non-overlapping matches:
//       ([\{-\~\[-\` -\&\(-\+\:-\@\/])  →  " \1 "     (ASCII punctuation, but not . , - ')
//       ([^0-9])([\.,])                →  "\1 \2 "   (. and , unless after a digit)
//       ([\.,])([^0-9])                →  " \1 \2"   (. and , unless before a digit)
//       ([0-9])(-)                     →  "\1 \2 "   (- after a digit)
//  3. split on (Unicode) whitespace and join with single spaces.
// So "Hello, world." → "Hello , world .", "3.5" stays, "1-2" → "1 - 2" but "a-b" stays.
// The rules touch ASCII only, so the work is a byte scan; no std::regex.
// Note sacreBLEU's BLEU strips trailing whitespace *before* calling this (see bleu.cpp).
std::string tokenize_13a(const std::string& line);

}  // namespace yoke
