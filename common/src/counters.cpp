#include "efu/counters.h"

#include <algorithm>
#include <stdexcept>

namespace efu {

Counter& CounterRegistry::counter(std::string_view name) { return add(name, CounterKind::kCounter); }
Counter& CounterRegistry::gauge(std::string_view name) { return add(name, CounterKind::kGauge); }

Counter& CounterRegistry::add(std::string_view name, CounterKind kind) {
  if (frozen_) {
    throw std::logic_error("counter '" + std::string(name) +
                           "' registered after the data threads started");
  }
  for (const Entry& e : entries_) {
    if (e.name == name && e.kind != kind) {
      throw std::logic_error("counter '" + std::string(name) +
                             "' registered both as counter and as gauge");
    }
  }
  Counter& c = storage_.emplace_back();
  entries_.push_back(Entry{std::string(name), kind, &c});
  return c;
}

std::vector<CounterSample> CounterRegistry::sample() const {
  std::vector<CounterSample> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const CounterSample& s) { return s.name == e.name; });
    if (it == out.end()) {
      out.push_back(CounterSample{e.name, e.kind, e.counter->get()});
    } else {
      it->value += e.counter->get();
    }
  }
  std::sort(out.begin(), out.end(),
            [](const CounterSample& a, const CounterSample& b) { return a.name < b.name; });
  return out;
}

std::uint64_t CounterRegistry::value(std::string_view name) const {
  std::uint64_t sum = 0;
  for (const Entry& e : entries_) {
    if (e.name == name) sum += e.counter->get();
  }
  return sum;
}

const Counter* CounterRegistry::find(std::string_view name) const {
  for (const Entry& e : entries_) {
    if (e.name == name) return e.counter;
  }
  return nullptr;
}

}  // namespace efu
