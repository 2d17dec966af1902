// search.cpp — which points the tuner tries (tuner_internal.h): the first population (the start,
// the family's records, the history's best, the routes a backend marks tried_first, neighbours,
// random points), then genetic or random generations that skip known points. Measures nothing.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/error.h"
#include "tune/tuner_internal.h"

namespace tc::tune::tuning {

std::vector<double> numbers_of(const std::string& value) {
  std::vector<double> out;
  std::istringstream parts(value);
  std::string part;
  while (std::getline(parts, part, 'x')) {
    char* end = nullptr;
    double v = std::strtod(part.c_str(), &end);
    if (part.empty() || *end != '\0' || !(v > 0)) return {};
    out.push_back(v);
  }
  return out;
}

std::optional<std::string> nearest(const std::string& value, const std::vector<std::string>& domain) {
  std::vector<double> want = numbers_of(value);
  std::optional<std::string> best;
  double best_distance = INFINITY;
  for (const auto& candidate : domain) {
    std::vector<double> got = numbers_of(candidate);
    if (want.empty() || got.size() != want.size()) continue;
    double d = 0;
    for (size_t i = 0; i < got.size(); ++i) d += std::fabs(std::log2(got[i]) - std::log2(want[i]));
    if (d < best_distance) best_distance = d, best = candidate;
  }
  return best;
}

std::vector<Point> Tuner::first_population() {
  size_t size = 2 * static_cast<size_t>(population_);
  std::vector<Point> out = {start_point_};
  auto add = [&](const Point& p) {
    if (out.size() < size && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  if (store_) {
    std::vector<cache::Record> family;
    for (cache::Record& r : store_->all([](const std::string&, const std::string&) {}))
      if (r.family == family_) family.insert(r.key == key_ ? family.begin() : family.end(), std::move(r));
    for (const cache::Record& r : family) add(fit(r.knobs));
  }
  std::vector<std::pair<double, Point>> known;
  for (const auto& [text, c] : measured_)
    if (std::isfinite(c.first)) known.push_back(c);
  std::sort(known.begin(), known.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < known.size() && static_cast<int>(i) < std::max(1, population_ / 5); ++i) add(known[i].second);
  for (const Point& p : alternatives_first()) add(p);
  for (const Point& p : neighbours_of_start(size / 2)) add(p);
  while (out.size() < size) out.push_back(random_point());
  return out;
}

std::vector<Point> Tuner::alternatives_first() const {
  std::vector<Point> out;
  for (size_t k = 0; k < knobs_.size(); ++k) {
    if (!knobs_[k].tried_first) continue;
    for (const std::string& v : knobs_[k].values) {
      Point p = start_point_;
      p[k] = v;
      if (p != start_point_) out.push_back(std::move(p));
    }
  }
  return out;
}

std::vector<Point> Tuner::neighbours_of_start(size_t n) {
  std::vector<Point> out;
  size_t choices = 0;
  for (const auto& k : knobs_) choices += k.values.size() - 1;
  for (size_t tries = 0; out.size() < std::min(n, choices) && tries < 20 * n; ++tries) {
    size_t k = std::uniform_int_distribution<size_t>(0, knobs_.size() - 1)(rng_);
    const auto& values = knobs_[k].values;
    Point p = start_point_;
    p[k] = values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng_)];
    if (p != start_point_ && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(std::move(p));
  }
  return out;
}

Point Tuner::fit(const std::string& knobs) const {
  std::map<std::string, std::string> values;
  try {
    values = knob_text_values(knobs);
  } catch (const Error&) {
    return start_point_;  // not this libtc's text
  }
  Point p = start_point_;
  for (size_t k = 0; k < knobs_.size(); ++k) {
    auto it = values.find(knobs_[k].key);
    if (it == values.end()) continue;
    const auto& domain = knobs_[k].values;
    if (std::find(domain.begin(), domain.end(), it->second) != domain.end()) p[k] = it->second;
    else if (auto near = nearest(it->second, domain)) p[k] = *near;
  }
  return p;
}

Point Tuner::random_point() {
  Point p;
  for (const auto& k : knobs_) p.push_back(k.values[std::uniform_int_distribution<size_t>(0, k.values.size() - 1)(rng_)]);
  return p;
}

std::vector<Point> Tuner::random_generation() {
  std::vector<Point> out;
  for (int i = 0; i < population_; ++i) out.push_back(random_point());
  return out;
}

std::vector<Point> Tuner::next_generation() {
  std::vector<std::pair<double, Point>> ranked;
  for (const auto& [text, c] : measured_)
    if (std::isfinite(c.first)) ranked.emplace_back(c.first, c.second);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (ranked.empty()) return random_generation();
  std::vector<Point> out;
  int elites = std::max(1, population_ / 5);
  for (int i = 0; i < elites && i < static_cast<int>(ranked.size()); ++i) out.push_back(ranked[i].second);
  double total = 0;
  for (const auto& r : ranked) total += 1.0 / r.first;
  auto pick = [&]() -> const Point& {
    double x = std::uniform_real_distribution<double>(0, total)(rng_);
    for (const auto& r : ranked)
      if ((x -= 1.0 / r.first) <= 0) return r.second;
    return ranked.back().second;
  };
  double mutation = 1.0 / std::max<size_t>(1, knobs_.size());
  // A child that is a point measured before, or one of this generation's, is drawn again (a
  // generation of known points measures nothing); after kDraws tries, a random point.
  constexpr int kDraws = 20;
  auto known = [&](const Point& p) {
    return measured_.count(point_text(knobs_, p)) > 0 || std::find(out.begin(), out.end(), p) != out.end();
  };
  while (static_cast<int>(out.size()) < population_) {
    Point child;
    for (int draw = 0; draw < kDraws && (child.empty() || known(child)); ++draw) {
      const Point* parents[3] = {&pick(), &pick(), &pick()};
      child.clear();
      for (size_t k = 0; k < knobs_.size(); ++k) {
        child.push_back((*parents[std::uniform_int_distribution<int>(0, 2)(rng_)])[k]);
        if (std::uniform_real_distribution<double>(0, 1)(rng_) < mutation)
          child[k] = knobs_[k].values[std::uniform_int_distribution<size_t>(0, knobs_[k].values.size() - 1)(rng_)];
      }
    }
    if (known(child)) child = random_point();
    out.push_back(std::move(child));
  }
  return out;
}

}  // namespace tc::tune::tuning
