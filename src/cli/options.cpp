#include "cli/options.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "config/key_ranges.h"
#include "store/model_files.h"
#include "decode/batched_decoding.h"
#include "util/error.h"
#include "util/spelling.h"

namespace yoke::cli {
namespace {

// yoke's help layout: usage, summary, then the option groups; an option's default and whether it
// is required or repeatable follow its help text.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(28); }

  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    std::string groups = make_groups(app, mode);
    for (size_t at; (at = groups.find("\n\n\n")) != std::string::npos;) groups.erase(at, 1);  // one blank line between groups
    if (groups.empty() || groups.back() != '\n') groups += '\n';
    return "usage: " + name + " [options]\n\n" + app->get_description() + "\n" + groups;
  }

  // One long name: the config keys' '-' spellings (--d-model) are accepted but not listed.
  std::string make_option_name(const CLI::Option* opt, bool) const override {
    std::string out;
    for (const auto& s : opt->get_snames()) out += "-" + s + ", ";
    return out + "--" + opt->get_lnames().front();
  }

  // CLI11 appends a validator's description to the type name ("N:in [1, 1024]"): the type stays
  // beside the name, the range or the choices go with the help text.
  std::string make_option_opts(const CLI::Option* opt) const override {
    return opt->get_type_size() == 0 || opt->get_type_name().empty() ? "" : " " + split_type(opt).first;
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string out = opt->get_description();
    const auto [type, valid] = split_type(opt);
    if (!valid.empty() && type.find('|') == std::string::npos)  // "hard|soft" lists its choices already
      out += valid.front() == '{' ? " (one of " + std::regex_replace(valid.substr(1, valid.size() - 2), std::regex(","), ", ") + ")"
                                  : " (" + valid + ")";
    if (opt->get_required()) out += " (required)";
    if (!opt->get_default_str().empty()) out += " (default: " + opt->get_default_str() + ")";
    if (opt->get_expected_max() >= CLI::detail::expected_max_vector_size) out += " [repeatable]";
    return wrap(out);
  }

 private:
  // "N:in [1, 1024]" → {"N", "in [1, 1024]"}; a type without a validator → {type, ""}.
  static std::pair<std::string, std::string> split_type(const CLI::Option* opt) {
    const std::string full = opt->get_type_name();
    const auto colon = full.find(':');
    if (colon == std::string::npos) return {full, ""};
    return {full.substr(0, colon), full.substr(colon + 1)};
  }

  // Breaks a long help text into lines of at most 72 characters (CLI11 indents the lines after the first).
  static std::string wrap(const std::string& text) {
    std::string out, line, word;
    std::istringstream words(text);
    while (words >> word) {
      if (!line.empty() && utf8_length(line) + 1 + utf8_length(word) > 72) {
        out += line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    return out + line;
  }
  static size_t utf8_length(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  }
};

CLI::Validator number_check(bool whole) {
  return CLI::Validator(
      [whole](std::string& v) -> std::string {
        size_t used = 0;
        try {
          if (whole) (void)std::stoll(v, &used);
          else (void)std::stod(v, &used);
        } catch (...) { used = 0; }
        if (!v.empty() && used == v.size()) return "";
        return std::string("expects ") + (whole ? "a whole number" : "a number") + ", got '" + v + "'";
      },
      "");
}

}  // namespace

CLI::Validator whole_number_within(long double low, long double high) {
  return CLI::Validator(
      [low, high](std::string& v) -> std::string {
        const size_t digits = v.find_first_not_of("+-") == 1 ? 1 : 0;  // one sign at most
        const bool whole = v.size() > digits && v.find_first_not_of("0123456789", digits) == std::string::npos;
        if (!whole) return "expects a whole number, got '" + v + "'";
        const long double x = std::stold(v);
        if (x < low || x > high) {
          char range[96];
          std::snprintf(range, sizeof range, "%.0Lf to %.0Lf", low, high);
          return "expects a whole number from " + std::string(range) + ", got " + v;
        }
        return "";
      },
      "");
}

const CLI::Validator& whole_number() {
  static const CLI::Validator v = number_check(true);
  return v;
}

const CLI::Validator& real_number() {
  static const CLI::Validator v = number_check(false);
  return v;
}

Command::Command(const std::string& name, const std::string& summary) : CLI::App(summary, "yoke " + name), name_(name) {
  formatter(std::make_shared<HelpFormatter>());
  option_defaults()->group("options")->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // later wins
  set_help_flag("-h,--help", "this text");
  allow_extras();  // read() reports them, with a suggestion for a misspelt option
}

bool Command::read(int argc, char** argv) {
  const std::string see = " (see `yoke " + name_ + " --help`)";
  std::vector<std::string> args;  // CLI11 takes them last first
  for (int i = argc - 1; i >= 2; --i) args.emplace_back(argv[i]);
  // An unknown option explains a missing required one (`--mdoel x`), so it is reported first.
  auto reject_extras = [&] {
    for (const auto& extra : remaining()) {
      if (extra.rfind("-", 0) != 0) throw InputError("unexpected argument '" + extra + "'" + see);
      const std::string name = extra.substr(0, extra.find('='));
      std::vector<std::string> names;
      for (const CLI::Option* o : get_options())
        for (const auto& l : o->get_lnames()) names.push_back("--" + l);
      const std::string best = closest_name(name, names);
      throw InputError("unknown option " + name + (best.empty() ? "" : " (did you mean " + best + "?)") + see);
    }
  };
  try {
    parse(args);
  } catch (const CLI::CallForHelp&) {
    std::cout << help();
    return false;
  } catch (const CLI::ArgumentMismatch& e) {
    // "--model: 1 required DIR missing" → "--model needs a value (DIR)"
    static const std::regex missing("^(\\S+): \\d+ required (.*) missing$");
    std::smatch m;
    const std::string what = e.what();
    if (std::regex_match(what, m, missing))
      throw InputError(m[1].str() + " needs a value" + (m[2].length() ? " (" + m[2].str() + ")" : "") + see);
    throw InputError(what + see);
  } catch (const CLI::ValidationError& e) {
    // "--beam: expects a whole number, got 'x'" → "--beam expects …"
    std::string what = e.what();
    if (auto colon = what.find(": "); colon != std::string::npos && what.rfind("--", 0) == 0) what.erase(colon, 1);
    throw InputError(what + see);
  } catch (const CLI::RequiredError& e) {
    reject_extras();
    throw InputError(e.what() + see);
  } catch (const CLI::ParseError& e) {
    throw InputError(e.what() + see);
  }
  reject_extras();
  return true;
}

std::string Command::require(const CLI::Option* option) const {
  if (option->count() == 0)
    throw InputError(option->get_name() + " is required (see `yoke " + name_ + " --help`)");
  return option->as<std::string>();
}

CLI::Option* add_checkpoint_option(CLI::App& app, std::string& checkpoint, const std::string& help,
                                   const std::string& name) {
  return app.add_option(name, checkpoint, help)
      ->type_name("NAME")
      ->default_str(std::string(kCheckpointBest) + ", else " + kCheckpointLast);
}

void add_model_options(CLI::App& app, ModelOptions& model, bool with_device) {
  app.add_option("--model", model.dir, "model directory (the save_dir of `yoke train`)")->type_name("DIR")->required();
  add_checkpoint_option(app, model.checkpoint, "checkpoint file in DIR");
  if (with_device)
    app.add_option("--device", model.device, "cpu, cuda or auto (a GPU when there is one)")
        ->type_name("D")
        ->capture_default_str();
}

CLI::Validator in_key_range(const std::string& key) {
  const KeyRange* range = key_range(key);
  if (!range) throw std::logic_error("in_key_range: config key " + key + " has no range");
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !in_range(*range, v))
          return "must be " + range_text(*range) + ", got " + text;
        return "";
      },
      range_text(*range));
}

std::string default_batch_tokens_text(bool by_search) {
  return std::to_string(kCpuBatchTokens) + " on the CPU" +
         (by_search ? " (" + std::to_string(kCpuBeamBatchTokens) + " for beam search)" : std::string()) + ", " +
         std::to_string(kGpuBatchTokens) + " on a GPU";
}

CLI::Option* add_threads_option(CLI::App& app, int& threads, const std::string& default_text) {
  return add_value(app, "--threads", threads, "N", "CPU threads, in LibTorch's pool and in OpenBLAS's")->default_str(default_text)->check(in_key_range("threads"));
}

CLI::Option* add_repeated(CLI::App& app, const std::string& name, std::vector<std::string>& values,
                          const std::string& value_name, const std::string& help) {
  return app.add_option(name, values, help)
      ->type_name(value_name)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

CLI::Option* add_overrides_option(CLI::App& app, std::vector<std::string>& overrides, const std::string& help) {
  return add_repeated(app, "--set", overrides, "KEY=VALUE", help);
}

}  // namespace yoke::cli
