#include "report/svg_chart.h"


#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "util/error.h"

namespace yoke {
namespace {

// ------------------------------------------------------------------ small helpers

// Okabe & Ito (2008), distinguishable with every common colour-vision deficiency. Yellow is
// faint on white, so it comes late.
const char* const kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                "#CC79A7", "#56B4E9", "#000000", "#F0E442"};
const size_t kPaletteSize = sizeof kPalette / sizeof kPalette[0];

std::string colour(size_t i) { return kPalette[i % kPaletteSize]; }

const char* const kGrid = "#e3e3e3";
const char* const kInk = "#222222";
const char* const kMuted = "#555555";

// Values this large would overflow the axis arithmetic; they are treated like infinities.
bool usable(double v) { return std::isfinite(v) && std::fabs(v) <= 1e300; }

// A pixel coordinate; never "nan" or "inf" in the output, whatever happened upstream.
std::string num(double v) {
  if (!std::isfinite(v)) v = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  if (std::strcmp(buf, "-0.0") == 0) return "0.0";
  return buf;
}

size_t utf8_length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// A rough width for layout: sans-serif glyphs average a little over half the font size.
double text_width(const std::string& s, double font_size) {
  return 0.6 * font_size * double(utf8_length(s));
}

// At most max_chars code points, with "…" when cut.
std::string shorten(const std::string& s, size_t max_chars) {
  if (utf8_length(s) <= max_chars) return s;
  size_t seen = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && seen++ == max_chars - 1) break;
  }
  return s.substr(0, i) + "\xE2\x80\xA6";
}

std::string fmt_fixed(double v, int decimals, const char* suffix = "") {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  // "-0", "-0.0": a rounding artefact, not a negative number.
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s + suffix;
}

// ------------------------------------------------------------------ axes

struct Axis {
  bool log = false;
  double lo = 0, hi = 1;  // data units at the two ends
  std::vector<double> ticks;
  std::vector<std::string> labels;

  double fraction(double v) const {
    if (log) return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }
};

// Labels share one number of decimals, fixed by the step; big numbers get a k/M/G suffix.
std::vector<std::string> linear_labels(const AxisTicks& t) {
  const double biggest = std::max(std::fabs(t.lo), std::fabs(t.hi));
  double scale = 1;
  const char* suffix = "";
  if (biggest >= 1e9) scale = 1e9, suffix = "G";
  else if (biggest >= 1e6) scale = 1e6, suffix = "M";
  else if (biggest >= 1e4) scale = 1e3, suffix = "k";
  const double step = t.step / scale;
  std::vector<std::string> out;
  for (double v : t.values) {
    if (step < 1e-4) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g", v);
      out.push_back(v == 0 ? "0" : buf);
    } else {
      const int decimals = std::max(0, int(std::ceil(-std::log10(step) - 1e-9)));
      out.push_back(v == 0 ? "0" : fmt_fixed(v / scale, decimals, suffix));
    }
  }
  return out;
}

Axis linear_axis(double lo, double hi, int target) {
  const AxisTicks t = nice_ticks(lo, hi, target);
  Axis a;
  a.lo = t.lo;
  a.hi = t.hi;
  a.ticks = t.values;
  a.labels = linear_labels(t);
  return a;
}

std::string log_label(double v) {
  char buf[32];
  if (v >= 1e-3 && v < 1e5) std::snprintf(buf, sizeof buf, "%g", v);
  else std::snprintf(buf, sizeof buf, "%.0e", v);
  std::string s = buf;
  // "1e+06" -> "1e6", "1e-05" -> "1e-5": shorter and just as clear.
  const size_t e = s.find('e');
  if (e != std::string::npos) {
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    const bool neg = exp[0] == '-';
    exp = exp.substr(exp[0] == '-' || exp[0] == '+' ? 1 : 0);
    exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
    s = mant + "e" + (neg ? "-" : "") + exp;
  }
  return s;
}

// Decades as ticks; with few decades also 2× and 5× in between. lo, hi > 0.
Axis log_axis(double lo, double hi) {
  if (!(lo > 0) || !usable(lo)) lo = 1;
  if (!(hi > 0) || !usable(hi)) hi = 10;
  if (hi < lo) std::swap(lo, hi);
  int e0 = int(std::floor(std::log10(lo) + 1e-9));
  int e1 = int(std::ceil(std::log10(hi) - 1e-9));
  e0 = std::max(e0, -300);
  e1 = std::min(e1, 300);
  if (e1 <= e0) e1 = e0 + 1;
  Axis a;
  a.log = true;
  a.lo = std::pow(10.0, e0);
  a.hi = std::pow(10.0, e1);
  const int every = std::max(1, (e1 - e0 + 7) / 8);  // at most ~8 labelled decades
  for (int e = e0; e <= e1; ++e) {
    if ((e - e0) % every != 0) continue;
    const double d = std::pow(10.0, e);
    a.ticks.push_back(d);
    if (e1 - e0 <= 2 && e < e1) {
      a.ticks.push_back(2 * d);
      a.ticks.push_back(5 * d);
    }
  }
  std::sort(a.ticks.begin(), a.ticks.end());
  for (double v : a.ticks) a.labels.push_back(log_label(v));
  return a;
}

Axis value_axis(double lo, double hi, bool log, int target) {
  return log ? log_axis(lo, hi) : linear_axis(lo, hi, target);
}

// ------------------------------------------------------------------ layout

struct LegendItem {
  std::string name, colour;
  int shape;
};
enum class Swatch { Line, Box, Dot };

struct Frame {
  double left = 0, top = 0, right = 1, bottom = 1;  // the plot area, in pixels
  Axis x, y;
  double px(double v) const { return left + x.fraction(v) * (right - left); }
  double py(double v) const { return bottom - y.fraction(v) * (bottom - top); }
};

const double kTickFont = 12, kLabelFont = 13, kLegendFont = 12, kLegendRow = 20;

double legend_item_width(const LegendItem& item, size_t chars) {
  return 22 + text_width(shorten(item.name, chars), kLegendFont) + 18;
}

int legend_rows(const std::vector<LegendItem>& items, double avail, size_t chars) {
  if (items.size() < 2) return 0;
  int rows = 1;
  double x = 0;
  for (const auto& item : items) {
    const double w = legend_item_width(item, chars);
    if (x > 0 && x + w > avail) rows++, x = 0;
    x += w;
  }
  return rows;
}

double max_label_width(const std::vector<std::string>& labels, double font) {
  double w = 0;
  for (const auto& l : labels) w = std::max(w, text_width(l, font));
  return w;
}

// The value range of the y axis; the axis itself is made once the plot height is known.
struct YRange {
  double lo, hi;
  bool log;
};

Axis y_axis(const YRange& r, double plot_height) {
  return value_axis(r.lo, r.hi, r.log, std::clamp(int(plot_height / 45), 2, 8));
}

struct Layout {
  int width, height;
  double title_font;
  size_t legend_chars = 36;  // legend names are cut to this many characters
  int legend_rows = 0;       // rows drawn; items beyond them are left out
  Frame frame;
};

// Places title, legend, axis labels and the plot area. x_tick_space: the height the labels under
// the x axis need. The legend gets shorter names, then fewer entries, before the plot area
// would shrink below a readable height.
Layout make_layout(const PlotOptions& o, const YRange& yr, const std::vector<LegendItem>& legend,
                   double x_tick_space) {
  Layout l;
  l.width = std::max(o.width, 240);
  l.height = std::max(o.height, 180);
  const double W = l.width, H = l.height;
  l.title_font = 16;
  if (!o.title.empty()) {
    const double w = text_width(o.title, 16) * 1.05;  // bold is wider
    if (w > W - 24) l.title_font = std::max(9.0, 16 * (W - 24) / w);
  }
  Frame& f = l.frame;
  const double top0 = o.title.empty() ? 14 : 40;
  f.right = W - 24;
  f.bottom = H - (x_tick_space + (o.x_label.empty() ? 8 : 28) + 6);
  f.bottom = std::max(f.bottom, top0 + 60);
  const double label_space = o.y_label.empty() ? 0 : 22;
  auto place = [&](const Axis& y) {
    f.y = y;
    f.left = std::min(10 + label_space + max_label_width(y.labels, kTickFont) + 10, f.right - 60);
    const int max_rows = std::max(1, int((f.bottom - top0 - 10 - 80) / kLegendRow));
    for (size_t chars : {36, 20, 12}) {
      l.legend_chars = chars;
      l.legend_rows = legend_rows(legend, f.right - f.left, chars);
      if (l.legend_rows <= max_rows) break;
    }
    l.legend_rows = std::min(l.legend_rows, max_rows);
    f.top = top0 + l.legend_rows * kLegendRow + 10;
  };
  place(y_axis(yr, H - 130));
  place(y_axis(yr, f.bottom - f.top));  // ticks for the height the plot really has
  return l;
}

// Fewer x ticks until their labels fit side by side.
Axis fitted_x_axis(double lo, double hi, double plot_width) {
  for (int target = std::max(2, int(plot_width / 90)); target >= 2; --target) {
    Axis a = linear_axis(lo, hi, target);
    const double spacing = plot_width / std::max<size_t>(1, a.ticks.size() - 1);
    if (max_label_width(a.labels, kTickFont) + 12 <= spacing) return a;
    if (target == 2) return a;
  }
  return linear_axis(lo, hi, 2);
}


// ------------------------------------------------------------------ drawing

std::string svg_open(const Layout& l) {
  const std::string w = std::to_string(l.width), h = std::to_string(l.height);
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n"
         "<rect x=\"0\" y=\"0\" width=\"" + w + "\" height=\"" + h + "\" fill=\"white\"/>\n";
}

std::string text(double x, double y, const std::string& s, const std::string& attrs = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + (attrs.empty() ? "" : " " + attrs) +
         ">" + xml_escape(s) + "</text>\n";
}

std::string line(double x1, double y1, double x2, double y2, const std::string& attrs) {
  return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
         num(y2) + "\" " + attrs + "/>\n";
}

std::string rect(double x, double y, double w, double h, const std::string& attrs) {
  return "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(0.0, w)) +
         "\" height=\"" + num(std::max(0.0, h)) + "\" " + attrs + "/>\n";
}

// Shapes cycle with the colours, so series stay apart in grey-scale print too.
std::string marker(int shape, double x, double y, double r, const std::string& fill,
                   const std::string& extra = "") {
  const std::string paint = "fill=\"" + fill + "\"" + (extra.empty() ? "" : " " + extra);
  switch (shape % 4) {
    case 1:
      return rect(x - r * 0.9, y - r * 0.9, r * 1.8, r * 1.8, paint);
    case 2:
      return "<polygon points=\"" + num(x) + "," + num(y - r * 1.25) + " " + num(x + r * 1.25) +
             "," + num(y) + " " + num(x) + "," + num(y + r * 1.25) + " " + num(x - r * 1.25) +
             "," + num(y) + "\" " + paint + "/>\n";
    case 3:
      return "<polygon points=\"" + num(x) + "," + num(y - r * 1.2) + " " + num(x + r * 1.1) +
             "," + num(y + r * 0.8) + " " + num(x - r * 1.1) + "," + num(y + r * 0.8) + "\" " +
             paint + "/>\n";
    default:
      return "<circle cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"" + num(r) + "\" " + paint +
             "/>\n";
  }
}

std::string draw_title(const Layout& l, const PlotOptions& o) {
  if (o.title.empty()) return "";
  return text(l.width / 2.0, 26, o.title,
              "text-anchor=\"middle\" font-size=\"" + num(l.title_font) +
                  "\" font-weight=\"bold\" fill=\"" + kInk + "\"");
}

// box_opacity: the fill opacity of the chart's boxes, so that the swatch looks like them.
// box_opacity: the fill opacity of the chart's boxes, so that the swatch looks like them.
std::string draw_legend(const Layout& l, const std::vector<LegendItem>& items, Swatch swatch,
                        double box_opacity = 0.85) {
  if (l.legend_rows == 0) return "";
  const Frame& f = l.frame;
  std::string s = "<g class=\"legend\">\n";
  double x = 0, y = f.top - 10 - l.legend_rows * kLegendRow + 14;
  int row = 1;
  for (const auto& item : items) {
    const double w = legend_item_width(item, l.legend_chars);
    if (x > 0 && x + w > f.right - f.left) x = 0, y += kLegendRow, ++row;
    if (row > l.legend_rows) break;
    const double x0 = f.left + x, cy = y - 4;
    if (swatch == Swatch::Line) {
      s += line(x0, cy, x0 + 16, cy, "stroke=\"" + item.colour + "\" stroke-width=\"2\"");
      s += marker(item.shape, x0 + 8, cy, 3, item.colour);
    } else if (swatch == Swatch::Box) {
      s += rect(x0 + 2, cy - 6, 12, 12,
                "fill=\"" + item.colour + "\" fill-opacity=\"" + num(box_opacity) + "\" stroke=\"" +
                    item.colour + "\"");
    } else {
      s += marker(item.shape, x0 + 8, cy, 4, item.colour);
    }
    s += text(x0 + 22, y, shorten(item.name, l.legend_chars), "fill=\"" + std::string(kInk) + "\"");
    x += w;
  }
  return s + "</g>\n";
}

// Grid lines, axis lines, ticks, tick labels and axis titles. Category axes (no x ticks) draw
// their own labels.
std::string draw_axes(const Layout& l, const PlotOptions& o) {
  const Frame& f = l.frame;
  std::string s = "<g class=\"axes\">\n";
  for (size_t i = 0; i < f.y.ticks.size(); ++i) {
    const double y = f.py(f.y.ticks[i]);
    s += line(f.left, y, f.right, y, std::string("stroke=\"") + kGrid + "\" stroke-width=\"1\"");
    s += line(f.left - 5, y, f.left, y, std::string("stroke=\"") + kInk + "\"");
    s += text(f.left - 8, y + 4, f.y.labels[i],
              std::string("class=\"tick y\" text-anchor=\"end\" fill=\"") + kMuted + "\"");
  }
  for (size_t i = 0; i < f.x.ticks.size(); ++i) {
    const double x = f.px(f.x.ticks[i]);
    s += line(x, f.bottom, x, f.bottom + 5, std::string("stroke=\"") + kInk + "\"");
    s += text(x, f.bottom + 19, f.x.labels[i],
              std::string("class=\"tick x\" text-anchor=\"middle\" fill=\"") + kMuted + "\"");
  }
  const std::string axis = std::string("stroke=\"") + kInk + "\" stroke-width=\"1\"";
  s += line(f.left, f.top, f.left, f.bottom, axis);
  s += line(f.left, f.bottom, f.right, f.bottom, axis);
  const std::string label_attrs =
      "text-anchor=\"middle\" font-size=\"" + num(kLabelFont) + "\" fill=\"" + kInk + "\"";
  // Axis titles are cut to the length of their axis rather than run past it.
  auto fit = [](const std::string& t, double room) {
    return shorten(t, size_t(std::max(4.0, room / (0.6 * kLabelFont))));
  };
  if (!o.x_label.empty()) {
    s += text((f.left + f.right) / 2, l.height - 12, fit(o.x_label, f.right - f.left), label_attrs);
  }
  if (!o.y_label.empty()) {
    const double cy = (f.top + f.bottom) / 2;
    s += text(20, cy, fit(o.y_label, f.bottom - f.top + 20),
              label_attrs + " transform=\"rotate(-90 " + num(20) + " " + num(cy) + ")\"");
  }
  return s + "</g>\n";
}

std::string draw_no_data(const Frame& f) {
  return text((f.left + f.right) / 2, (f.top + f.bottom) / 2, "no data",
              std::string("text-anchor=\"middle\" fill=\"") + kMuted + "\" font-size=\"14\"");
}

// Min and max of the usable values (log: positive ones only); false when there are none.
struct Range {
  double lo = INFINITY, hi = -INFINITY;
  void add(double v) { lo = std::min(lo, v), hi = std::max(hi, v); }
  bool empty() const { return lo > hi; }
};

bool plottable(double v, bool log) { return usable(v) && (!log || v > 0); }

std::string series_name(const std::string& name, size_t i) {
  return name.empty() ? "series " + std::to_string(i + 1) : name;
}

std::string polyline(const std::vector<std::pair<double, double>>& pts, const std::string& c) {
  std::string s = "<polyline fill=\"none\" stroke=\"" + c +
                  "\" stroke-width=\"2\" stroke-linejoin=\"round\" stroke-linecap=\"round\" points=\"";
  for (size_t i = 0; i < pts.size(); ++i) {
    s += (i ? " " : "") + num(pts[i].first) + "," + num(pts[i].second);
  }
  return s + "\"/>\n";
}

}  // namespace

// ------------------------------------------------------------------ public: helpers

AxisTicks nice_ticks(double lo, double hi, int target_count) {
  if (!usable(lo) || !usable(hi)) lo = 0, hi = 1;
  if (hi < lo) std::swap(lo, hi);
  // A constant gets a non-zero span around it, proportional to its size.
  if (hi - lo <= 1e-12 * std::max(std::fabs(lo), std::fabs(hi)) || hi == lo) {
    const double pad = lo != 0 ? std::fabs(lo) * 0.1 : 1.0;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(1, target_count);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  AxisTicks t;
  t.step = step;
  t.lo = std::floor(lo / step + 1e-9) * step;
  t.hi = std::ceil(hi / step - 1e-9) * step;
  const long n = std::lround((t.hi - t.lo) / step);
  for (long i = 0; i <= n; ++i) {
    double v = t.lo + double(i) * step;
    if (std::fabs(v) < step * 1e-9) v = 0;  // no "-0" or 1e-17 at the origin
    t.values.push_back(v);
  }
  return t;
}

std::string xml_escape(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters are not allowed in XML 1.0 at all.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += ' ';
        else out += c;
    }
  }
  return out;
}

// ------------------------------------------------------------------ public: charts

std::string line_chart(const std::vector<Series>& series, const PlotOptions& o) {
  Range xr, yr;
  for (const auto& s : series) {
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!usable(s.x[i]) || !plottable(s.y[i], o.log_y)) continue;
      xr.add(s.x[i]);
      yr.add(s.y[i]);
    }
  }
  const bool empty = xr.empty();
  if (empty) xr.add(0), xr.add(1), yr.add(o.log_y ? 1 : 0), yr.add(o.log_y ? 10 : 1);

  std::vector<LegendItem> legend;
  for (size_t i = 0; i < series.size(); ++i) {
    legend.push_back({series_name(series[i].name, i), colour(i), int(i)});
  }
  Layout l = make_layout(o, {yr.lo, yr.hi, o.log_y}, legend, 20);
  Frame& f = l.frame;
  f.x = fitted_x_axis(xr.lo, xr.hi, f.right - f.left);

  std::string svg = svg_open(l) + draw_title(l, o) + draw_legend(l, legend, Swatch::Line) +
                    draw_axes(l, o);
  if (empty) svg += draw_no_data(f);
  for (size_t si = 0; si < series.size(); ++si) {
    const Series& s = series[si];
    const size_t n = std::min(s.x.size(), s.y.size());
    size_t finite = 0;
    for (size_t i = 0; i < n; ++i) finite += usable(s.x[i]) && plottable(s.y[i], o.log_y);
    const bool markers = finite <= 60;  // on long curves markers would only blur the line
    svg += "<g class=\"series\">\n";
    std::vector<std::pair<double, double>> seg;
    auto flush = [&]() {
      if (seg.size() >= 2) svg += polyline(seg, colour(si));
      if (seg.size() == 1 && !markers) svg += marker(int(si), seg[0].first, seg[0].second, 3, colour(si));
      seg.clear();
    };
    for (size_t i = 0; i < n; ++i) {
      if (!usable(s.x[i]) || !plottable(s.y[i], o.log_y)) {
        flush();
        continue;
      }
      seg.emplace_back(f.px(s.x[i]), f.py(s.y[i]));
    }
    flush();
    if (markers) {
      for (size_t i = 0; i < n; ++i) {
        if (!usable(s.x[i]) || !plottable(s.y[i], o.log_y)) continue;
        svg += marker(int(si), f.px(s.x[i]), f.py(s.y[i]), 3, colour(si),
                      "stroke=\"white\" stroke-width=\"0.8\"");
      }
    }
    svg += "</g>\n";
  }
  return svg + "</svg>\n";
}

std::string histogram(const std::vector<std::pair<std::string, std::vector<double>>>& samples,
                      int bins, const PlotOptions& o) {
  bins = std::clamp(bins, 1, 10000);
  Range vr;
  for (const auto& s : samples) {
    for (double v : s.second) {
      if (usable(v)) vr.add(v);
    }
  }
  const bool empty = vr.empty();
  if (empty) vr.add(0), vr.add(1);
  double width = (vr.hi - vr.lo) / bins;
  if (vr.hi - vr.lo <= 1e-12 * std::max(std::fabs(vr.lo), std::fabs(vr.hi))) {
    // One value: a span around it, the value in the middle of a bin rather than on an edge.
    const double v = vr.lo, pad = v != 0 ? std::fabs(v) * 0.1 : 0.5;
    width = 2 * pad / bins;
    vr.lo = v - pad - (bins % 2 == 0 ? width / 2 : 0);
    vr.hi = vr.lo + bins * width;
  }

  std::vector<std::vector<double>> counts(samples.size(), std::vector<double>(bins, 0));
  double max_count = 0;
  for (size_t si = 0; si < samples.size(); ++si) {
    for (double v : samples[si].second) {
      if (!usable(v)) continue;
      const int b = std::clamp(int((v - vr.lo) / width), 0, bins - 1);
      max_count = std::max(max_count, ++counts[si][b]);
    }
  }
  // Counts start at 0 on a linear axis; on a log axis the smallest count (1) must still show.
  const YRange y = o.log_y ? YRange{0.5, std::max(1.0, max_count), true}
                          : YRange{0, std::max(5.0, max_count), false};  // whole-number ticks

  std::vector<LegendItem> legend;
  for (size_t i = 0; i < samples.size(); ++i) {
    legend.push_back({series_name(samples[i].first, i), colour(i), int(i)});
  }
  Layout l = make_layout(o, y, legend, 20);
  Frame& f = l.frame;
  f.x = fitted_x_axis(vr.lo, vr.hi, f.right - f.left);

  std::string svg = svg_open(l) + draw_title(l, o) + draw_legend(l, legend, Swatch::Box, 0.45) +
                    draw_axes(l, o);
  if (empty) svg += draw_no_data(f);
  const double base = f.py(o.log_y ? f.y.lo : 0.0);
  for (size_t si = 0; si < samples.size(); ++si) {
    svg += "<g class=\"series\">\n";
    for (int b = 0; b < bins; ++b) {
      const double c = counts[si][b];
      if (c <= 0) continue;
      const double x0 = f.px(vr.lo + b * width), x1 = f.px(vr.lo + (b + 1) * width);
      const double top = f.py(c);
      svg += rect(x0, top, x1 - x0, base - top,
                  "fill=\"" + colour(si) + "\" fill-opacity=\"0.45\" stroke=\"" + colour(si) +
                      "\" stroke-width=\"1\"");
    }
    svg += "</g>\n";
  }
  return svg + "</svg>\n";
}

namespace {

struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// Where a label goes relative to its point: right, left, above, below, then the diagonals.
struct LabelSpot {
  double dx, dy;      // baseline start, relative to the point
  const char* anchor;
};
const LabelSpot kSpots[] = {{7, 4, "start"},   {-7, 4, "end"},    {0, -8, "middle"},
                            {0, 16, "middle"}, {5, -5, "start"},  {5, 14, "start"},
                            {-5, -5, "end"},   {-5, 14, "end"}};

Box label_box(double x, double y, const LabelSpot& spot, double w, double font) {
  double left = x + spot.dx;
  if (std::strcmp(spot.anchor, "end") == 0) left -= w;
  if (std::strcmp(spot.anchor, "middle") == 0) left -= w / 2;
  const double base = y + spot.dy;
  return {left, base - font * 0.8, left + w, base + font * 0.25};
}

}  // namespace

std::string scatter(const std::vector<LabelledPoint>& points, const PlotOptions& o) {
  Range xr, yr;
  std::vector<std::string> groups;
  std::map<std::string, size_t> group_index;
  for (const auto& p : points) {
    if (!usable(p.x) || !plottable(p.y, o.log_y)) continue;
    xr.add(p.x);
    yr.add(p.y);
    if (group_index.emplace(p.group, groups.size()).second) groups.push_back(p.group);
  }
  const bool empty = xr.empty();
  if (empty) xr.add(0), xr.add(1), yr.add(o.log_y ? 1 : 0), yr.add(o.log_y ? 10 : 1);
  // A little room around the cloud, so that no point sits on an axis line.
  const double xpad = (xr.hi - xr.lo) * 0.04, ypad = (yr.hi - yr.lo) * 0.04;

  std::vector<LegendItem> legend;
  for (size_t i = 0; i < groups.size(); ++i) {
    legend.push_back({series_name(groups[i], i), colour(i), int(i)});
  }
  const YRange y = o.log_y ? YRange{yr.lo, yr.hi, true} : YRange{yr.lo - ypad, yr.hi + ypad, false};
  Layout l = make_layout(o, y, legend, 20);
  Frame& f = l.frame;
  f.x = fitted_x_axis(xr.lo - xpad, xr.hi + xpad, f.right - f.left);

  std::string svg = svg_open(l) + draw_title(l, o) + draw_legend(l, legend, Swatch::Dot) +
                    draw_axes(l, o);
  if (empty) svg += draw_no_data(f);

  std::vector<Box> marks;
  svg += "<g class=\"points\">\n";
  for (const auto& p : points) {
    if (!usable(p.x) || !plottable(p.y, o.log_y)) continue;
    const size_t g = group_index[p.group];
    const double x = f.px(p.x), yy = f.py(p.y);
    svg += marker(int(g), x, yy, 4, colour(g), "fill-opacity=\"0.85\"");
    marks.push_back({x - 4, yy - 4, x + 4, yy + 4});
  }
  svg += "</g>\n<g class=\"labels\" font-size=\"11\">\n";

  // First try spots that hide neither labels nor points, then spots that hide only points.
  const double font = 11;
  std::vector<Box> placed;
  for (const auto& p : points) {
    if (p.label.empty() || !usable(p.x) || !plottable(p.y, o.log_y)) continue;
    const std::string label = shorten(p.label, 30);
    const double x = f.px(p.x), yy = f.py(p.y), w = text_width(label, font);
    const LabelSpot* chosen = nullptr;
    Box chosen_box{};
    for (int pass = 0; pass < 2 && !chosen; ++pass) {
      for (const auto& spot : kSpots) {
        const Box b = label_box(x, yy, spot, w, font);
        if (b.x0 < f.left || b.x1 > f.right || b.y0 < f.top || b.y1 > f.bottom) continue;
        auto hits = [&](const Box& other) { return b.overlaps(other); };
        if (std::any_of(placed.begin(), placed.end(), hits)) continue;
        if (pass == 0 && std::any_of(marks.begin(), marks.end(), hits)) continue;
        chosen = &spot;
        chosen_box = b;
        break;
      }
    }
    if (!chosen) continue;
    placed.push_back(chosen_box);
    svg += text(x + chosen->dx, yy + chosen->dy, label,
                std::string("text-anchor=\"") + chosen->anchor + "\" fill=\"" + kInk +
                    "\" stroke=\"white\" stroke-width=\"3\" stroke-linejoin=\"round\" "
                    "paint-order=\"stroke\"");
  }
  return svg + "</g>\n</svg>\n";
}

std::string bar_chart(const std::vector<std::string>& categories, const std::vector<Series>& series,
                      const PlotOptions& o, const std::vector<std::vector<double>>* error) {
  const size_t nc = std::max<size_t>(1, categories.size()), ns = std::max<size_t>(1, series.size());
  auto value = [&](size_t s, size_t c) {
    return c < series[s].y.size() ? series[s].y[c] : NAN;
  };
  auto err = [&](size_t s, size_t c) {
    if (!error || s >= error->size() || c >= (*error)[s].size()) return 0.0;
    const double e = std::fabs((*error)[s][c]);
    return usable(e) ? e : 0.0;
  };
  // Bars grow from 0, so 0 is on a linear axis; on a log axis from the bottom of the axis.
  Range yr;
  if (!o.log_y) yr.add(0);
  bool any = false;
  for (size_t s = 0; s < series.size(); ++s) {
    for (size_t c = 0; c < categories.size(); ++c) {
      const double v = value(s, c);
      if (!plottable(v, o.log_y)) continue;
      any = true;
      yr.add(v);
      yr.add(v + err(s, c));
      if (!o.log_y || v - err(s, c) > 0) yr.add(v - err(s, c));
    }
  }
  if (!any) yr.add(o.log_y ? 1 : 0), yr.add(o.log_y ? 10 : 1);
  const YRange y{yr.lo, yr.hi, o.log_y};

  std::vector<LegendItem> legend;
  for (size_t i = 0; i < series.size(); ++i) {
    legend.push_back({series_name(series[i].name, i), colour(i), int(i)});
  }
  // Category labels: horizontal when they fit their slot, else turned by 35°.
  std::vector<std::string> names;
  for (const auto& c : categories) names.push_back(shorten(c, 24));
  const double guess_slot = (std::max(o.width, 240) - 100.0) / nc;
  const double longest = max_label_width(names, kTickFont);
  const bool turn = longest + 8 > guess_slot;
  const double tick_space = turn ? longest * std::sin(35 * 3.14159265358979 / 180) + 14 : 20;
  Layout l = make_layout(o, y, legend, tick_space);
  Frame& f = l.frame;
  f.x.lo = 0;
  f.x.hi = double(nc);

  std::string svg = svg_open(l) + draw_title(l, o) + draw_legend(l, legend, Swatch::Box) +
                    draw_axes(l, o);
  if (!any) svg += draw_no_data(f);
  // Few categories would give slabs, not bars: widths are capped and each group centred.
  const double slot = (f.right - f.left) / nc, bar_w = std::min(slot * 0.8 / ns, 70.0);
  const double group_start = (slot - bar_w * ns) / 2;
  const double base = f.py(o.log_y ? f.y.lo : 0.0);
  svg += "<g class=\"categories\">\n";
  for (size_t c = 0; c < categories.size(); ++c) {
    const double cx = f.left + slot * (c + 0.5), ty = f.bottom + 18;
    svg += line(cx, f.bottom, cx, f.bottom + 5, std::string("stroke=\"") + kInk + "\"");
    const std::string attrs = std::string("class=\"tick x\" fill=\"") + kMuted + "\"";
    if (turn) {
      svg += text(cx + 4, ty, names[c],
                  attrs + " text-anchor=\"end\" transform=\"rotate(-35 " + num(cx + 4) + " " +
                      num(ty) + ")\"");
    } else {
      svg += text(cx, ty, names[c], attrs + " text-anchor=\"middle\"");
    }
  }
  svg += "</g>\n";
  for (size_t s = 0; s < series.size(); ++s) {
    svg += "<g class=\"series\">\n";
    for (size_t c = 0; c < categories.size(); ++c) {
      const double v = value(s, c);
      if (!plottable(v, o.log_y)) continue;
      const double x0 = f.left + slot * c + group_start + bar_w * s, top = f.py(v);
      svg += rect(x0, std::min(top, base), bar_w, std::fabs(base - top),
                  "fill=\"" + colour(s) + "\" fill-opacity=\"0.85\" stroke=\"" + colour(s) + "\"");
      const double e = err(s, c);
      if (e <= 0) continue;
      const double xm = x0 + bar_w / 2, cap = std::min(bar_w * 0.3, 6.0);
      const double lo = (o.log_y && v - e <= 0) ? f.y.lo : v - e;
      const std::string ink = std::string("stroke=\"") + kInk + "\" stroke-width=\"1.2\"";
      svg += line(xm, f.py(lo), xm, f.py(v + e), ink);
      svg += line(xm - cap, f.py(lo), xm + cap, f.py(lo), ink);
      svg += line(xm - cap, f.py(v + e), xm + cap, f.py(v + e), ink);
    }
    svg += "</g>\n";
  }
  return svg + "</svg>\n";
}

}  // namespace yoke
