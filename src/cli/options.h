// The command line of a subcommand, parsed with CLI11 (only src/cli/ includes it: it is heavy to
// compile). A Command prints `usage: yoke NAME [options]`, its summary and its options with their
// defaults; every usage error throws InputError naming the option (main exits with code 2).
#pragma once
#include <limits>
#include <string>
#include <type_traits>

#include <CLI/CLI.hpp>

namespace yoke::cli {

class Command : public CLI::App {
 public:
  Command(const std::string& name, const std::string& summary);
  // Parses argv[2..]; false when --help was asked for (and printed).
  bool read(int argc, char** argv);
  // For options that are required only in some uses (e.g. --train-src without --lm).
  std::string require(const CLI::Option* option) const;

 private:
  std::string name_;
};

// Errors for a value that is not a (whole) number say so, naming the option.
const CLI::Validator& whole_number();
// A whole number that fits the option's type: from `low` to `high`, said with the value as given
// ("--shard-size -1" is refused, not read as 18446744073709551615).
CLI::Validator whole_number_within(long double low, long double high);
const CLI::Validator& real_number();

// A --name VALUE option bound to `value`; numbers are checked before conversion.
template <class T>
CLI::Option* add_value(CLI::App& app, const std::string& name, T& value, const std::string& value_name,
                       const std::string& help) {
  CLI::Option* o = app.add_option(name, value, help)->type_name(value_name);
  if constexpr (std::is_integral_v<T>)
    o->check(whole_number_within(static_cast<long double>(std::numeric_limits<T>::min()),
                                 static_cast<long double>(std::numeric_limits<T>::max())));
  if constexpr (std::is_floating_point_v<T>) o->check(real_number());
  return o;
}

// --name VALUE that may be given several times; each use takes one value, kept in order.
CLI::Option* add_repeated(CLI::App& app, const std::string& name, std::vector<std::string>& values,
                          const std::string& value_name, const std::string& help);

// --model DIR (required), --checkpoint NAME and, for commands that can use a GPU, --device D:
// the trained model a command reads.
struct ModelOptions {
  std::string dir, checkpoint, device = "cpu";
};
void add_model_options(CLI::App& app, ModelOptions& model, bool with_device);
// --checkpoint NAME (or another name) with its default as --help shows it: the model directory's
// rule (store/model_store.h: checkpoint_best, else checkpoint_last).
CLI::Option* add_checkpoint_option(CLI::App& app, std::string& checkpoint, const std::string& help,
                                   const std::string& name = "--checkpoint");

// A check that an option's value lies in the range of the config key it stands for
// (config/key_ranges.h: --beam as beam, --lenpen as lenpen, ...); NaN never. The error names the
// option and the range.
CLI::Validator in_key_range(const std::string& key);

// The default of every --batch-tokens, as --help shows it: decode/batched_decoding.h's rule, with
// beam search's own where the command's batches follow its search (translate).
std::string default_batch_tokens_text(bool by_search = false);

// --threads N (CPU threads for LibTorch); the option is unset when not given ("all cores").
CLI::Option* add_threads_option(CLI::App& app, int& threads, const std::string& default_text = "all cores");

// --set KEY=VALUE, repeatable: config overrides passed on to training.
CLI::Option* add_overrides_option(CLI::App& app, std::vector<std::string>& overrides, const std::string& help);

}  // namespace yoke::cli
