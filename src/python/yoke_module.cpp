// The compiled part of `import yoke` (python/yoke/__init__.py wraps it): a thin pybind11 facade
// over python/model_facade.h. Word matrices come out as numpy arrays (copied), so that this file
// needs neither LibTorch's nor torch's Python headers (torch/extension.h alone would add
// minutes to the build); the package turns them into torch tensors when torch is there.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <torch/version.h>  // macros only

#include "config/decoding_options.h"
#include "python/model_facade.h"
#include "util/version.h"
#include "util/error.h"

namespace py = pybind11;
using namespace yoke::python;

PYBIND11_MODULE(_yoke, mod) {
  mod.doc() = "yoke models from Python: translate, score, generate, read word matrices";
  // PEP 440 with a local label: "0.1.0+0123456789ab.torch1.13.0" ("…ab.dirty.torch…" when built
  // with uncommitted changes); the parts apart as __commit__ and __torch_version__.
  std::string commit = yoke::build_commit();
  if (const auto plus = commit.find('+'); plus != std::string::npos) commit.replace(plus, 1, ".");
  mod.attr("__version__") = std::string(yoke::yoke_version()) + "+" + commit + ".torch" + TORCH_VERSION;
  mod.attr("__commit__") = yoke::build_commit();
  mod.attr("__torch_version__") = TORCH_VERSION;
  py::register_exception<yoke::InputError>(mod, "InputError", PyExc_ValueError);
  // numpy's C API is set up by a function-local static the first time an array is made. Made
  // lazily, the first embeddings() from two threads deadlocked: one held the static's guard while
  // numpy's import let go of the GIL, the other held the GIL waiting for the guard. Made here, one
  // thread runs under the import lock. Without numpy it is left for embeddings() to report.
  try {
    py::array_t<float> warm(0);
  } catch (const py::error_already_set&) {
  }

  py::class_<TextHypothesis>(mod, "Hypothesis", "One translation: text, score (what the beam ranks by), log_prob.")
      .def_readonly("text", &TextHypothesis::text)
      .def_readonly("score", &TextHypothesis::score)
      .def_readonly("log_prob", &TextHypothesis::log_prob)
      .def("__repr__", [](const TextHypothesis& h) {
        return "Hypothesis(text=" + py::repr(py::str(h.text)).cast<std::string>() + ", score=" + std::to_string(h.score) + ")";
      });
  py::class_<PairScore>(mod, "PairScore", "Model.score's result for one pair: log_prob, score, token_log_probs.")
      .def_readonly("token_log_probs", &PairScore::token_log_probs)
      .def_readonly("log_prob", &PairScore::log_prob)
      .def_readonly("score", &PairScore::score);

  mod.def(
      "set_threads", [](int threads) { set_threads(threads); },
      py::arg("threads"), "CPU threads for LibTorch's and OpenBLAS's products, as `yoke translate --threads`.");
  mod.def(
      "decoding_options",
      [] {
        py::list out;
        for (const auto& o : yoke::decoding_options())
          out.append(py::make_tuple(o.name, o.kind == yoke::OptionKind::whole ? "whole" : "real", o.default_value,
                                    o.range, o.help));
        return out;
      },
      "The decoding options (name, \"whole\" or \"real\", default, range, help): the table `yoke translate`,\n"
      "`yoke serve` and Model.translate read (config/decoding_options.h).");

  py::class_<Model>(mod, "Model", "A trained yoke model, loaded once: yoke.load(DIR) makes one.")
      .def(py::init<const std::string&, const std::string&, const std::string&>(), py::arg("dir"),
           py::arg("checkpoint") = "", py::arg("device") = "cpu")
      .def(py::init<const std::vector<std::string>&, const std::vector<double>&, const std::string&, const std::string&,
                    int>(),
           py::arg("dirs"), py::arg("weights"), py::arg("checkpoint"), py::arg("device"), py::arg("batch_tokens"))
      .def_property_readonly("task", &Model::task)
      .def_property_readonly("config_json", &Model::config_json)
      .def_property_readonly("checkpoint", &Model::checkpoint)
      .def(
          "translate_nbest",
          // Numbers as doubles, so that a beam of 2.5 is refused by the table's check naming beam
          // (ValueError), not by pybind11's overload resolution.
          [](Model& m, const std::vector<std::string>& lines, double beam, double nbest, double lenpen, double a,
             double b) {
            py::gil_scoped_release free;  // decoding runs on LibTorch's threads
            return m.translate(lines, {{"beam", beam}, {"nbest", nbest}, {"lenpen", lenpen}, {"max_len_a", a},
                                       {"max_len_b", b}});
          },
          py::arg("sentences"), py::arg("beam") = 5, py::arg("nbest") = 1, py::arg("lenpen") = 1.0,
          py::arg("max_len_a") = 1.2, py::arg("max_len_b") = 10,
          "Per sentence, up to `nbest` Hypothesis (text, score, log_prob), best first, by beam search as\n"
          "`yoke translate` does it (beam 1 = greedy; at most max_len_a * source length + max_len_b\n"
          "subwords). beam in [1, 1024], lenpen in [0, 10], max_len_a and max_len_b >= 0, 1 <= nbest <= beam:\n"
          "else ValueError. Releases the GIL while decoding. Model.translate is the friendlier front.")
      .def(
          "score",
          [](Model& m, const std::vector<std::string>& src, const std::vector<std::string>& tgt, double lenpen) {
            py::gil_scoped_release free;
            return m.score(src, tgt, lenpen);
          },
          py::arg("sources"), py::arg("targets"), py::arg("lenpen") = 0.0,
          "log p(target | source) of each pair by forced decoding, as `yoke score-pairs`: a PairScore\n"
          "(log_prob, score = log_prob / (subwords + 1)^lenpen, token_log_probs: one per target subword\n"
          "then eos). lenpen in [0, 10], else ValueError.")
      .def(
          "generate",
          [](Model& m, const std::string& prompt, int max_tokens, double temperature, int top_k, double top_p,
             uint64_t seed) {
            py::gil_scoped_release free;
            return m.generate(prompt, {max_tokens, temperature, top_p, top_k, seed});
          },
          py::arg("prompt"), py::arg("max_tokens") = 50, py::arg("temperature") = 1.0, py::arg("top_k") = 0,
          py::arg("top_p") = 1.0, py::arg("seed") = 1,
          "A language model's continuation of `prompt` (the prompt included), as `yoke generate`:\n"
          "temperature 0 is greedy; top_k (0 = all) and top_p in (0, 1] restrict the draw; the same seed\n"
          "gives the same text. ValueError for a translation model or values out of range.")
      .def("word_matrices_numpy", [](const Model& m) {
        py::dict out;
        for (auto& [role, w] : m.word_matrices()) {
          py::array_t<float> a({w.rows, w.cols});
          std::copy(w.values.begin(), w.values.end(), a.mutable_data());
          out[py::str(role)] = a;
        }
        return out;
      });
}
