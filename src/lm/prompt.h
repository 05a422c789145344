// The text front door of generation: a prompt → the ids a language model continues from (its
// start token, then the prompt's subwords, within its positions) → the text of prompt and
// continuation. `yoke generate` and the server both come in here.
#pragma once
#include <string>
#include <vector>

#include "text/vocab.h"
#include "util/error.h"

namespace yoke {

// A prompt over the model's positions (one goes to the start token, one at least to a new token).
struct PromptTooLong : InputError {
  PromptTooLong(size_t subwords, size_t limit);
  size_t subwords, limit;
};

struct Prompt {
  std::vector<int> subwords;  // the prompt's own ids
  std::vector<int> context;   // what the model reads: the start token, then `subwords`
};

// `blocks`: the model was trained on a stream of blocks (config lm_block > 0), which starts
// from eos rather than bos. Throws PromptTooLong.
Prompt make_prompt(const Vocab& vocab, bool blocks, int max_positions, const std::string& text);

// The prompt and the generated tokens as one text. Decoded together, so that a subword that joins
// words ("▁") comes out as SentencePiece writes it.
std::string prompt_and_continuation(const Vocab& vocab, const Prompt& prompt, const std::vector<int>& generated);

}  // namespace yoke
