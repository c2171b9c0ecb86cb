// da00 arrays as tests see them: each DataArrayView published copied out (its pointers die with
// publish()), with its variables by name and their values as a typed vector. For the unit tests
// of the histograms in common/ and of the plugins that publish them.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "efu/plugin.h"

namespace efu::test {

/// One variable of a published array.
struct RecordedVariable {
  std::string name;
  std::optional<std::string> unit;  // none when the view's unit was null
  std::vector<std::string> axes;
  std::vector<std::int64_t> shape;
  Da00Type type;
  std::vector<std::uint8_t> bytes;

  template <typename T>
  std::vector<T> values() const {
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }
};

/// One published array.
struct RecordedArray {
  std::uint64_t timestamp_ns;
  std::vector<RecordedVariable> variables;

  const RecordedVariable& get(const std::string& name) const {
    for (const RecordedVariable& v : variables) {
      if (v.name == name) return v;
    }
    throw std::runtime_error("no variable " + name);
  }
  // The variables of a beam monitor's histogram (efu/da00/tof_histogram.h).
  std::vector<std::int32_t> signal() const { return get("signal").values<std::int32_t>(); }
  std::vector<std::int32_t> reference_time() const {
    return get("reference_time").values<std::int32_t>();
  }
  std::vector<std::uint64_t> frame_total() const {
    return get("frame_total").values<std::uint64_t>();
  }
};

inline RecordedArray record(const DataArrayView& array) {
  RecordedArray m{array.timestamp_ns, {}};
  for (const Da00Variable& v : array.variables) {
    const auto* data = static_cast<const std::uint8_t*>(v.data);
    m.variables.push_back(
        RecordedVariable{v.name,
                         v.unit != nullptr ? std::optional<std::string>(v.unit) : std::nullopt,
                         {v.axes.begin(), v.axes.end()},
                         {v.shape.begin(), v.shape.end()},
                         v.type,
                         {data, data + v.bytes}});
  }
  return m;
}

/// A HistogramSink that keeps a copy of every array published.
class RecordingHistogramSink final : public HistogramSink {
 public:
  void publish(const DataArrayView& array) override { messages.push_back(record(array)); }
  std::vector<RecordedArray> messages;
};

}  // namespace efu::test
