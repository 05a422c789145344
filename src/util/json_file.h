// JSON files: read with errors that name the file and line, written atomically.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace yoke {

// Throws InputError "PATH:LINE: invalid JSON: ..." (or "PATH: cannot open").
nlohmann::json read_json(const std::string& path);

// The records of a JSON Lines file (metrics.jsonl) whose "type" is `type` (every record when
// `type` is empty), in order. A line that does not parse (the torn last line of a killed run) is
// skipped; a missing file gives none.
std::vector<nlohmann::json> read_json_lines(const std::string& path, const std::string& type = "");

// A field of an object read back from a file: absent or null gives none; another type is an
// InputError "WHERE: "KEY" is not a number" (a string).
std::optional<double> optional_number(const nlohmann::json& j, const std::string& key, const std::string& where);
std::optional<std::string> optional_string(const nlohmann::json& j, const std::string& key, const std::string& where);

// Pretty-printed (2 spaces), through util/atomic_file.h.
void write_json(const std::string& path, const nlohmann::json& value);

}  // namespace yoke
