// Every config key, declared once: KEY(name, C++ type, default, allowed values, one-line help).
// The allowed values of a text key are written "a|b" ("" = any text); an enumeration's come from
// its names (config/enums.h). struct Config, reading from text and JSON, `yoke train --help` and
// the README's key table are all made from this list.
#pragma once

#define YOKE_CONFIG_KEYS(SECTION, KEY)                                                                              \
  SECTION("task and data")                                                                                          \
  KEY(task, Task, Task::translate, "", "translate: encoder-decoder on parallel text; lm: decoder-only language model") \
  KEY(data, std::string, "", "", "data directory written by `yoke prepare`")                                        \
  KEY(save_dir, std::string, "runs/model", "", "where checkpoints, metrics.jsonl and the vocabularies go")           \
  KEY(init_from, std::string, "", "",                                                                               \
      "a trained model directory (or one of its .ykp files) whose weights start this run (fine-tuning): new "      \
      "optimizer state and schedule; same model keys and vocabularies; ignored once save_dir can resume")          \
  KEY(src_vocab_size, int, 0, "", "source vocabulary size; 0 = taken from the data (`yoke params` needs it set)")   \
  KEY(tgt_vocab_size, int, 0, "", "target vocabulary size; 0 = taken from the data")                                \
  KEY(joint_vocab, bool, false, "", "one vocabulary for both languages (taken from the data when data is set)")     \
  KEY(lm_block, int, 0, "", "task = lm: 0 = one sentence per row (padded); N = the text as a stream in blocks of N tokens") \
  SECTION("model sizes")                                                                                            \
  KEY(arch, Arch, Arch::transformer, "",                                        \
      "self-attention sublayers (transformer), or Wu et al. 2019's lightweight (lightconv) or dynamic "            \
      "(dynamicconv) convolutions in their place; decoders keep encoder-decoder attention")                        \
  KEY(encoder_layers, int, 3, "", "encoder layers (ignored for task = lm)")                                         \
  KEY(decoder_layers, int, 3, "", "decoder layers")                                                                 \
  KEY(d_model, int, 256, "", "model width: the embedding and hidden size")                                          \
  KEY(heads, int, 4, "", "attention heads; must divide d_model")                                                    \
  KEY(ffn_dim, int, 1024, "", "inner size of the feed-forward blocks")                                              \
  KEY(dropout, double, 0.1, "", "dropout rate, in [0, 1)")                            \
  KEY(attention_dropout, double, 0.0, "", "dropout on attention weights")                                           \
  KEY(activation_dropout, double, 0.0, "", "dropout after the feed-forward activation")                             \
  KEY(norm, Norm, Norm::pre, "", "layer norm before (pre) or after (post) each sublayer")                \
  KEY(positions, Positions, Positions::sinusoidal, "", "position embeddings: fixed sinusoids or learned") \
  KEY(max_positions, int, 1024, "", "longest sequence the position embeddings cover")                               \
  SECTION("convolutions (arch = lightconv or dynamicconv; Wu et al. 2019)")                                          \
  KEY(encoder_kernels, std::string, "3,7,15,31,31,31,31", "",                                                       \
      "kernel size per encoder layer, comma-separated; one value = every layer; a longer list uses its first "     \
      "encoder_layers values")                                                                                      \
  KEY(decoder_kernels, std::string, "3,7,15,31,31,31", "",                                                          \
      "kernel size per decoder layer (causal), as encoder_kernels")                                                 \
  KEY(conv_glu, bool, true, "", "input projection d→2d with a GLU before the convolution; false = a linear d→d")   \
  KEY(conv_weight_softmax, bool, true, "", "kernels are softmax-normalised over their taps")                        \
  KEY(conv_weight_dropout, double, 0.0, "", "DropConnect rate on the normalised kernels, in [0, 1)")                \
  SECTION("embeddings")                                                                                             \
  KEY(tie, Tie, Tie::decoder, "",                                                                                   \
      "none; decoder (target embedding = output projection; Press & Wolf 2017); all (source = target = output, "   \
      "joint vocabulary); src-tgt (source = target, separate output); shared-private (part of each source "        \
      "word's row shared with one paired target word, Liu et al. 2019)")                                                   \
  KEY(output, Estimator, Estimator::dot, "",                                                                        \
      "the logit estimator on the output matrix: dot (w·h), l2 (row-normalized input and output), "               \
      "square (w·h/‖w‖²), distance (w·h − ½‖w‖²), cosine (w·h/‖w‖)")                                               \
  KEY(embed_scale, EmbedScale, EmbedScale::sqrt, "", "input embeddings are multiplied by √d_model (sqrt) or not (1)") \
  KEY(factored_rank, int, 0, "", "k > 0: each word matrix is factored as W = A·B with inner size k; 0 = full")     \
  KEY(cross_layer, bool, false, "", "one set of layer weights reused by every layer of a stack (ALBERT; Lan et al. 2020)")                                    \
  KEY(input_grad_scale, double, 1.0, "", "α: scales the gradient that reaches a tied matrix through its input lookups") \
  KEY(lambda_lm, double, 0.9, "", "tie = shared-private: shared share of d_model for pairs by alignment (lm)")      \
  KEY(lambda_wf, double, 0.7, "", "tie = shared-private: shared share for pairs of the same form (wf)")             \
  KEY(lambda_ur, double, 0.5, "", "tie = shared-private: shared share for pairs by frequency rank (ur)")            \
  KEY(pairs, std::string, "", "", "tie = shared-private: the pair file from `yoke pair`")                           \
  KEY(bridging, Bridging, Bridging::none, "",                                                                    \
      "direct: Kuang et al. 2018's direct bridging, an auxiliary loss ‖W·x − y‖² between each target word's "      \
      "embedding y and the embedding x of the source word its cross-attention weighs most (tie none or decoder)") \
  KEY(bridging_weight, double, 1.0, "", "bridging = direct: the weight of the auxiliary term in the loss (Kuang et al.: 1)") \
  SECTION("optimisation")                                                                                           \
  KEY(max_tokens, int, 4096, "", "padded tokens per batch (the longer side)")                                       \
  KEY(update_freq, int, 1, "", "batches whose gradients make one update")                                           \
  KEY(lr, double, 1e-3, "", "peak learning rate (inverse square root schedule after warmup)")                       \
  KEY(warmup, int, 4000, "", "updates of linear learning-rate warmup")                                              \
  KEY(adam_beta1, double, 0.9, "", "Adam β1")                                                                       \
  KEY(adam_beta2, double, 0.98, "", "Adam β2")                                                                      \
  KEY(adam_eps, double, 1e-8, "", "Adam ε")                                                                         \
  KEY(weight_decay, double, 0.0, "", "decoupled (AdamW) weight decay")                                                      \
  KEY(label_smoothing, double, 0.1, "", "label smoothing of the loss, in [0, 1)")                                   \
  KEY(clip_norm, double, 0.0, "", "gradient norm clipping; 0 = none")                                               \
  KEY(max_epochs, int, 0, "", "stop after this many epochs; 0 = no limit")                                          \
  KEY(max_updates, int, 0, "", "stop after this many updates; 0 = no limit")                                        \
  KEY(max_minutes, double, 0.0, "", "stop after this much training time; 0 = no limit")                             \
  KEY(seed, int, 1, "", "random seed")                                   \
  KEY(threads, int, 0, "", "CPU threads; 0 = all cores")                                                            \
  KEY(device, Device, Device::cpu, "", "where to train; auto = a GPU when there is one")               \
  KEY(amp, bool, true, "", "on a GPU: bf16 autocast with fp32 master weights (ignored on a CPU)")                   \
  KEY(dist_timeout, double, 600.0, "",                                                                             \
      "distributed training: seconds any collective (or joining the ranks) may take before the run stops with an " \
      "error naming the rank")                                                                                      \
  KEY(dist_bucket_mb, double, 25.0, "",                                                                            \
      "distributed training: megabytes of gradients per all-reduce, started while the backward pass goes on")     \
  SECTION("validation, checkpoints, early stopping")                                                                \
  KEY(valid_interval, int, 1000, "", "updates between validations; 0 = once per epoch only")                        \
  KEY(valid_bleu, bool, true, "", "validation also translates greedily and computes BLEU")                          \
  KEY(valid_bleu_sentences, int, 0, "", "validation sentences translated for BLEU; 0 = all")                        \
  KEY(patience, int, 0, "", "validations without improvement before stopping; 0 = off")                            \
  KEY(early_stop_metric, EarlyStopMetric, EarlyStopMetric::bleu, "", "what early stopping and checkpoint_best follow")        \
  KEY(save_interval, int, 0, "", "updates between checkpoints; 0 = at each validation")                             \
  KEY(keep_last, int, 5, "", "numbered checkpoints kept")                                                           \
  KEY(log_interval, int, 50, "", "updates between training log lines")                                              \
  KEY(log_grad_paths, bool, false, "", "log the path-A / path-B gradient shares of every update")                   \
  SECTION("decoding defaults (also used by validation BLEU)")                                                       \
  KEY(beam, int, 5, "", "beam size; 1 = greedy")                                                                    \
  KEY(lenpen, double, 1.0, "", "length penalty: score = log p / length^lenpen")                                     \
  KEY(max_len_a, double, 1.2, "", "at most max_len_a · source length + max_len_b target tokens")                    \
  KEY(max_len_b, int, 10, "", "see max_len_a")
