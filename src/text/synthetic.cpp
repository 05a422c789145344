#include "text/synthetic.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/portable_random.h"

namespace yoke {
namespace {

bool chance(std::mt19937_64& rng, int percent) {
  return static_cast<int>(uniform_below(rng, 100)) < percent;
}

template <typename T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[uniform_below(rng, v.size())];
}

// Sound inventories: distinct enough that the two languages look different.
struct Phonology {
  std::vector<std::string> onsets, vowels, codas;
};
const Phonology kSourceSounds{
    {"p", "t", "k", "m", "n", "s", "l", "r", "v"}, {"a", "e", "i", "o", "u"}, {"n", "l", "r", "s"}};
const Phonology kTargetSounds{{"b", "d", "g", "f", "h", "j", "w", "z", "sh", "ch", "dr", "gr"},
                              {"a", "o", "u", "y", "ai", "ou"},
                              {"m", "k", "x", "th"}};

// Names are copied verbatim into the translation.
const std::vector<std::string> kNames = {
    "Anna",  "Boris",  "Clara",  "David", "Elena",  "Felix",   "Greta",  "Hugo",
    "Ines",  "Jonas",  "Karin",  "Lukas", "Maria",  "Nils",    "Olga",   "Pedro",
    "Quinn", "Rosa",   "Stefan", "Tanja", "Ulrich", "Vera",    "Walter", "Yusuf",
    "Zoe",   "Berlin", "Lisbon", "Oslo",  "Quito",  "Nairobi", "Kyoto",  "Dublin"};

// A vocabulary of made-up words, unique across both languages and the names.
class WordMaker {
 public:
  WordMaker() : rng_(0x796f6b65u) {  // fixed: the languages never change
    for (const auto& n : kNames) used_.insert(lowercase(n));
  }
  std::string make(const Phonology& ph, int min_syll, int max_syll) {
    for (;;) {
      std::string w;
      const int n = min_syll + static_cast<int>(uniform_below(rng_, max_syll - min_syll + 1));
      for (int s = 0; s < n; ++s) {
        w += pick(rng_, ph.onsets) + pick(rng_, ph.vowels);
        if (chance(rng_, 25)) w += pick(rng_, ph.codas);
      }
      if (used_.insert(w).second) return w;
    }
  }

 private:
  static std::string lowercase(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }
  std::mt19937_64 rng_;
  std::unordered_set<std::string> used_;
};

struct Entry {
  std::string src;
  std::vector<std::string> tgt;  // one word, or two for the few 1:2 entries
};
using WordClass = std::vector<Entry>;

struct Lexicon {
  WordClass determiners, nouns, verbs, adjectives, prepositions, adverbs;
};

// `two_word` entries translate to a target word followed by one of a few shared particles.
WordClass make_class(WordMaker& m, size_t n, int min_syll, int max_syll, size_t two_word,
                     const std::vector<std::string>& particles) {
  WordClass cls(n);
  for (size_t i = 0; i < n; ++i) {
    cls[i].src = m.make(kSourceSounds, min_syll, max_syll);
    cls[i].tgt = {m.make(kTargetSounds, min_syll, max_syll)};
    if (i < two_word) cls[i].tgt.push_back(particles[i % particles.size()]);
  }
  return cls;
}

const Lexicon& lexicon() {
  static const Lexicon lex = [] {
    WordMaker m;
    const std::vector<std::string> particles = {
        m.make(kTargetSounds, 1, 1), m.make(kTargetSounds, 1, 1), m.make(kTargetSounds, 1, 1)};
    Lexicon l;
    l.determiners = make_class(m, 4, 1, 1, 0, particles);
    l.nouns = make_class(m, 60, 1, 3, 5, particles);
    l.verbs = make_class(m, 30, 2, 3, 6, particles);
    l.adjectives = make_class(m, 30, 2, 3, 0, particles);
    l.prepositions = make_class(m, 10, 1, 1, 0, particles);
    l.adverbs = make_class(m, 12, 2, 3, 2, particles);
    return l;
  }();
  return lex;
}

// One sentence built on both sides at once.
struct Pair {
  std::vector<std::string> src, tgt;
};

void append(std::vector<std::string>& out, const std::vector<std::string>& words) {
  out.insert(out.end(), words.begin(), words.end());
}

// Source: det [num] adj* noun.  Target: det [num] noun adj* (adjectives mirrored).
Pair noun_phrase(std::mt19937_64& rng, const Lexicon& lex) {
  Pair p;
  if (chance(rng, 15)) {
    const std::string& name = pick(rng, kNames);
    return {{name}, {name}};
  }
  const Entry& det = pick(rng, lex.determiners);
  p.src.push_back(det.src);
  append(p.tgt, det.tgt);
  if (chance(rng, 20)) {
    const std::string num = std::to_string(1 + uniform_below(rng, 99));
    p.src.push_back(num);
    p.tgt.push_back(num);
  }
  const int n_adj = chance(rng, 50) ? 0 : chance(rng, 70) ? 1 : 2;
  std::vector<const Entry*> adjs;
  for (int i = 0; i < n_adj; ++i) adjs.push_back(&pick(rng, lex.adjectives));
  const Entry& noun = pick(rng, lex.nouns);
  for (const Entry* a : adjs) p.src.push_back(a->src);
  p.src.push_back(noun.src);
  append(p.tgt, noun.tgt);
  for (auto it = adjs.rbegin(); it != adjs.rend(); ++it) append(p.tgt, (*it)->tgt);
  return p;
}

// Source: subj verb [adv] obj [prep np].  Target: subj obj [np post] [adv] verb.
Pair sentence(std::mt19937_64& rng, const Lexicon& lex) {
  const Pair subj = noun_phrase(rng, lex);
  const Entry& verb = pick(rng, lex.verbs);
  const Entry* adv = chance(rng, 25) ? &pick(rng, lex.adverbs) : nullptr;
  const Pair obj = noun_phrase(rng, lex);
  const bool has_pp = chance(rng, 45);
  const Entry* prep = has_pp ? &pick(rng, lex.prepositions) : nullptr;
  const Pair pp = has_pp ? noun_phrase(rng, lex) : Pair{};

  Pair s;
  append(s.src, subj.src);
  s.src.push_back(verb.src);
  if (adv) s.src.push_back(adv->src);
  append(s.src, obj.src);
  if (prep) {
    s.src.push_back(prep->src);
    append(s.src, pp.src);
  }
  append(s.tgt, subj.tgt);
  append(s.tgt, obj.tgt);
  if (prep) {
    append(s.tgt, pp.tgt);
    append(s.tgt, prep->tgt);
  }
  if (adv) append(s.tgt, adv->tgt);
  append(s.tgt, verb.tgt);
  return s;
}

// "Word word word."
std::string render(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out + ".";
}

void write_split(const std::string& dir, const std::string& name, size_t count,
                 std::mt19937_64& rng, std::unordered_set<std::string>& seen) {
  const std::string src_path = dir + "/" + name + ".src", tgt_path = dir + "/" + name + ".tgt";
  std::string src, tgt;
  const Lexicon& lex = lexicon();
  for (size_t i = 0; i < count;) {
    const Pair p = sentence(rng, lex);
    if (p.src.size() < 4 || p.src.size() > 20) continue;
    std::string s = render(p.src);
    if (!seen.insert(s).second) continue;  // keeps valid/test unseen in training
    src += s + '\n';
    tgt += render(p.tgt) + '\n';
    ++i;
  }
  // Whole files only: the demo takes test.tgt, written last, as the sign of a complete corpus.
  write_file_atomically(src_path, src);
  write_file_atomically(tgt_path, tgt);
}

}  // namespace

void write_synthetic_corpus(const std::string& dir, const SyntheticOptions& opts) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw input_error(dir, 0, "cannot create directory: " + ec.message());
  std::mt19937_64 rng(opts.seed);
  std::unordered_set<std::string> seen;
  write_split(dir, "train", opts.train, rng, seen);
  write_split(dir, "valid", opts.valid, rng, seen);
  write_split(dir, "test", opts.test, rng, seen);
}

PrepareOptions synthetic_prepare_options(const std::string& corpus_dir, const std::string& out_dir) {
  const std::filesystem::path c(corpus_dir);
  PrepareOptions p;
  p.train_src = (c / "train.src").string();
  p.train_tgt = (c / "train.tgt").string();
  p.valid_src = (c / "valid.src").string();
  p.valid_tgt = (c / "valid.tgt").string();
  p.tests = {{(c / "test.src").string(), (c / "test.tgt").string()}};
  p.test_names = {"toy"};
  p.out_dir = out_dir;
  return p;
}

}  // namespace yoke
