// The files of a model directory (a `save_dir`), named once: what the trainer writes, what the
// loaders pick, what travels with a model when it is copied, exported or quantized.
#pragma once
#include <array>

namespace yoke {

constexpr const char* kCheckpointLast = "checkpoint_last.ykp";      // weights and trainer state: a run resumes from it
constexpr const char* kCheckpointBest = "checkpoint_best.ykp";      // the weights of the best validation
constexpr const char* kCheckpointAveraged = "checkpoint_avg.ykp";   // `yoke average`'s default output
// The SentencePiece models and their vocabulary lists, joint (spm.*) or one per side.
constexpr std::array<const char*, 6> kVocabularyFiles = {"spm.model",     "spm.vocab",     "spm.src.model",
                                                         "spm.src.vocab", "spm.tgt.model", "spm.tgt.vocab"};
constexpr const char* kMetricsLog = "metrics.jsonl";  // training's log, one JSON record a line (train/train_log.h)
constexpr const char* kPairsFile = "pairs.tsv";  // shared-private's word pairs, copied into the model directory

}  // namespace yoke
