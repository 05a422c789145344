#include "store/model_export.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "store/checkpoint.h"
#include "store/int8_model.h"
#include "store/model_files.h"
#include "store/model_store.h"
#include "store/safetensors.h"
#include "util/staged_dir.h"
#include "text/vocab_files.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/json_file.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

constexpr const char* kFormat = "yoke";
constexpr int kFormatVersion = 1;

// The tensor prefix of the matrix each role reads; tied roles name the same one. Shared-private
// rows are assembled from the blocks under "embeddings.shared_private" (docs/export.md).
nlohmann::json tying_of(const Transformer& model) {
  const WordEmbeddings& emb = *model.embeddings;
  auto prefix = [&](const WordMatrix* m) -> nlohmann::json {
    if (!m) return nullptr;  // a language model has no source side
    for (const auto& child : emb.named_children())
      if (child.value().get() == static_cast<const torch::nn::Module*>(m)) return "embeddings." + child.key();
    return "embeddings.shared_private";
  };
  return {{"source", prefix(emb.source())}, {"target", prefix(&emb.target())}, {"output", prefix(&emb.output())}};
}


}  // namespace

ExportResult export_model(const std::string& dir, const std::string& out, const std::string& checkpoint_name,
                          bool replace) {
  ExportResult r;
  r.from = pick_checkpoint(dir, checkpoint_name);
  const nlohmann::json meta = read_model_meta(r.from);
  if (is_int8_meta(meta))
    throw input_error(r.from, 0, "is an int8 model (`yoke quantize`): its weights are rounded to int8, and other "
                                 "toolkits would take them for the model's; export the fp32 model it was made from");
  // Written into a sibling and renamed into place: a non-empty --out (a data folder, another
  // export) is refused unless replace, and a failure midway leaves nothing behind.
  StagedDirectory staged(out, replace, "yoke export", {{"--model", dir}});
  const LoadedModel m = load_model(dir, checkpoint_name, "cpu", ModelUse::read_weights);
  SafeTensors file;
  file.tensors = module_state(*m.model);
  const nlohmann::json config = meta.at("config");  // as trained (load_model points `pairs` into dir)
  file.metadata = {{"format", kFormat},
                   {"format_version", std::to_string(kFormatVersion)},
                   {"config", config.dump()},
                   {"tying", tying_of(*m.model).dump()},
                   {"vocab", (meta.contains("vocab") ? meta.at("vocab") : vocab_checksums(dir)).dump()},
                   {"checkpoint", r.from}};
  if (meta.contains("state") && meta.at("state").is_object() && meta.at("state").contains("update"))
    file.metadata["update"] = meta.at("state").at("update").dump();
  for (const auto& [name, t] : file.tensors) r.values += t.numel();
  r.tensors = file.tensors.size();
  save_safetensors((fs::path(staged.path()) / kExportedWeights).string(), file);
  write_file_atomically((fs::path(staged.path()) / "config.json").string(), config.dump(2) + "\n");
  r.files = {"config.json"};
  for (const auto& f : copy_model_files(dir, staged.path())) r.files.push_back(f);
  r.replaced = staged.commit();
  r.to = (fs::path(out) / kExportedWeights).string();
  return r;
}

Checkpoint read_exported_model(const std::string& path) {
  SafeTensors file = load_safetensors(path);
  const auto& md = file.metadata;
  if (!md.count("format") || md.at("format") != kFormat || !md.count("config")) {
    // A Hugging Face directory (`yoke export --format hf` writes one) has its config beside it.
    const fs::path hf_config = fs::path(path).parent_path() / "config.json";
    std::string model_type;
    try {
      if (fs::is_regular_file(hf_config)) model_type = read_json(hf_config.string()).value("model_type", std::string());
    } catch (const std::exception&) {
    }
    if (!model_type.empty())
      throw input_error(path, 0, "is a Hugging Face model (" + model_type + ", " + hf_config.string() +
                                     "), not a yoke export: read such a directory with `yoke import --format hf`, or "
                                     "use the yoke model directory it was exported from (docs/export.md)");
    throw input_error(path, 0, "holds no yoke model: its metadata lacks \"format\": \"yoke\" and the model's \"config\" "
                               "(files written by `yoke export` have them; docs/export.md)");
  }
  Checkpoint c;
  try {
    if (md.count("format_version")) {
      const std::string& v = md.at("format_version");
      if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos)
        throw std::runtime_error("format_version '" + v + "' is not a whole number");
      if (std::stoi(v) > kFormatVersion)
        throw std::runtime_error("format_version " + v + " is newer than this build reads (" +
                                 std::to_string(kFormatVersion) + ")");
    }
    c.meta["config"] = nlohmann::json::parse(md.at("config"));
    // As strict as a config file: a key this build does not know would otherwise be ignored, and
    // the model built without what it meant.
    if (!c.meta["config"].is_object()) throw std::runtime_error("the config is not a JSON object");
    for (const auto& [key, value] : c.meta["config"].items())
      if (std::none_of(config_keys().begin(), config_keys().end(), [&](const ConfigKey& k) { return k.name == key; }))
        throw std::runtime_error("its config has the key '" + key + "', which this yoke does not know (a newer "
                                 "yoke's export, or an edited file)");
    // The vocabulary checksums every export carries: without them (or with a malformed record) a
    // replaced spm.model would go unnoticed, so their absence is a damaged file, not "unchecked".
    if (!md.count("vocab")) throw std::runtime_error("no \"vocab\" record (the vocabularies' checksums every export carries)");
    const auto vocab = nlohmann::json::parse(md.at("vocab"));
    if (!vocab.is_object() || vocab.empty())
      throw std::runtime_error("the \"vocab\" record is not an object of checksums");
    for (const auto& [file, crc] : vocab.items())
      if ((file != "spm.model" && file != "spm.src.model" && file != "spm.tgt.model") || !crc.is_number_unsigned())
        throw std::runtime_error("the \"vocab\" record has '" + file + "': " + crc.dump() +
                                 " (expected spm.model, spm.src.model or spm.tgt.model with a CRC-32)");
    c.meta["vocab"] = vocab;
  } catch (const std::exception& e) {  // JSON text that does not parse, a version that is no number
    throw input_error(path, 0, std::string("corrupt yoke metadata: ") + e.what());
  }
  c.meta["exported"] = {{"checkpoint", md.count("checkpoint") ? md.at("checkpoint") : ""},
                        {"update", md.count("update") ? md.at("update") : ""}};
  for (auto& [name, t] : file.tensors) {
    // What a yoke model holds: floating-point weights, int8 values of a quantized one. A BOOL or
    // U8 tensor is no weight of ours (and a checkpoint could not even store it): named here.
    const auto type = t.scalar_type();
    if (!at::isFloatingType(type) && type != at::kChar && type != at::kLong && type != at::kInt)
      throw input_error(path, 0, "corrupt yoke metadata: tensor " + name + " has dtype " +
                                     std::string(c10::toString(type)) + ", which no yoke model holds");
    c.tensors[model_tensor_name(name)] = std::move(t);
  }
  return c;
}

ExportResult import_model(const std::string& exported, const std::string& out, bool replace) {
  ExportResult r;
  const bool is_dir = fs::is_directory(exported);
  r.from = is_dir ? (fs::path(exported) / kExportedWeights).string() : exported;
  const std::string from_dir = is_dir ? exported : fs::path(exported).parent_path().string();
  if (!fs::exists(r.from)) throw input_error(r.from, 0, "not found: give an exported directory or its model.safetensors");
  StagedDirectory staged(out, replace, "yoke import", {{"the model imported", from_dir}});  // as export_model's
  Checkpoint c = read_exported_model(r.from);
  c.meta["imported"] = {{"from", r.from}};
  for (const auto& [name, t] : c.tensors) r.values += t.numel();
  r.tensors = c.tensors.size();
  r.files = copy_model_files(from_dir, staged.path());
  save_checkpoint((fs::path(staged.path()) / kCheckpointBest).string(), c);
  try {
    load_model(staged.path(), "", "cpu", ModelUse::read_weights);  // shapes, vocabularies, pairs: an error now (and nothing written), not at the first translation
  } catch (const InputError& e) {
    // Named as the user knows them: the imported weights, and --out for the copied files.
    std::string m = staged.as_out(e.what());
    const std::string written = (fs::path(out) / kCheckpointBest).string();
    for (size_t at = m.find(written); at != std::string::npos; at = m.find(written, at + r.from.size()))
      m.replace(at, written.size(), r.from);
    throw InputError(m);
  }
  r.replaced = staged.commit();
  r.to = (fs::path(out) / kCheckpointBest).string();
  return r;
}

}  // namespace yoke
