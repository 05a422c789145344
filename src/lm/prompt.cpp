#include "lm/prompt.h"

#include "batch/lm_batch.h"

namespace yoke {

PromptTooLong::PromptTooLong(size_t n, size_t l)
    : InputError("the prompt has " + std::to_string(n) + " subwords; the model has positions for " + std::to_string(l)),
      subwords(n), limit(l) {}

Prompt make_prompt(const Vocab& vocab, bool blocks, int max_positions, const std::string& text) {
  Prompt p;
  p.subwords = vocab.encode(text);
  const size_t limit = size_t(std::max(0, max_positions - 2));
  if (p.subwords.size() > limit) throw PromptTooLong(p.subwords.size(), limit);
  p.context.push_back(lm_start_token(blocks));
  p.context.insert(p.context.end(), p.subwords.begin(), p.subwords.end());
  return p;
}

std::string prompt_and_continuation(const Vocab& vocab, const Prompt& prompt, const std::vector<int>& generated) {
  std::vector<int> all(prompt.subwords);
  all.insert(all.end(), generated.begin(), generated.end());
  return vocab.decode(all);
}

}  // namespace yoke
