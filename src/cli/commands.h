// The subcommands of `yoke`. Each takes argv from the word after its name.
#pragma once

namespace yoke::cli {

int cmd_prepare(int argc, char** argv);
int cmd_train(int argc, char** argv);
int cmd_translate(int argc, char** argv);
int cmd_score(int argc, char** argv);
int cmd_average(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
int cmd_export(int argc, char** argv);
int cmd_import(int argc, char** argv);
int cmd_params(int argc, char** argv);
int cmd_demo(int argc, char** argv);
int cmd_align(int argc, char** argv);
int cmd_pair(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_experiment(int argc, char** argv);
int cmd_compare(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_analyze(int argc, char** argv);
int cmd_eval_lm(int argc, char** argv);
int cmd_generate(int argc, char** argv);
int cmd_score_pairs(int argc, char** argv);
int cmd_serve(int argc, char** argv);

}  // namespace yoke::cli
