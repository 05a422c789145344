// A small, dependency-free SVG chart writer for the pictures of an experiment (training curves,
// norm histograms, embedding scatter plots, result bars). The output is plain SVG 1.1: white
// background, axes with 1/2/5×10^k ticks, a colour-blind-safe palette (Okabe & Ito) with a marker
// shape per series as well, a viewBox so that it scales, and every text XML-escaped.
// Non-finite values (and, on a log axis, values ≤ 0) are skipped, never drawn.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace yoke {

struct Series {
  std::string name;
  std::vector<double> x, y;
};

struct PlotOptions {
  std::string title, x_label, y_label;
  int width = 720, height = 440;
  bool log_y = false;
};

// Lines with small markers; a NaN point (in x or y) breaks the line.
std::string line_chart(const std::vector<Series>& series, const PlotOptions& options);

// Several samples overlaid with transparency on shared bin edges; y = count.
std::string histogram(const std::vector<std::pair<std::string, std::vector<double>>>& samples,
                      int bins, const PlotOptions& options);

struct LabelledPoint {
  double x, y;
  std::string group;
  std::string label;  // empty = no label
};

// One colour per group (in order of first appearance). A label that would overlap one already
// drawn is left out, so that a crowded picture stays readable.
std::string scatter(const std::vector<LabelledPoint>& points, const PlotOptions& options);

// Grouped bars: series[s].y[c] is the bar of series s in category c (x is ignored);
// error (optional) holds ± half-widths with the same shape as the y values.
std::string bar_chart(const std::vector<std::string>& categories, const std::vector<Series>& series,
                      const PlotOptions& options,
                      const std::vector<std::vector<double>>* error = nullptr);

// Ticks of a linear axis: lo/hi are the axis ends (multiples of step, covering the data),
// step is 1, 2 or 5 × 10^k, values run from lo to hi. A zero-width range is widened first.
struct AxisTicks {
  double lo = 0, hi = 1, step = 1;
  std::vector<double> values;
};
AxisTicks nice_ticks(double lo, double hi, int target_count = 6);

// "&", "<", ">", '"', "'" as XML entities.
std::string xml_escape(const std::string& text);

}  // namespace yoke
