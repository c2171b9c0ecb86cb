// The options of the SDK's time grouping (time_groups.h, data_path.h) that every VMM3a plugin
// declares: put the three specs into your option table and read them with grouping_options().
// The names, defaults and ranges are then the same for multiblade, nmx and trex, and each
// plugin's document says what its unit is (a cassette, a panel, a ring's FEN).
#pragma once

#include <cstdint>

#include "efu/options.h"

namespace efu::vmm3a {

inline constexpr OptionSpec kReorderWindowOption{
    "reorder-window-ns", OptionType::kInt, "1000000",
    "Readouts may arrive this much later (in detector time) than the latest one seen on their "
    "output queue and still join their events; later ones are counted as hits.late and still "
    "used (0..10000000000 ns)"};
inline constexpr OptionSpec kReorderBufferOption{
    "reorder-buffer-hits", OptionType::kInt, "8192",
    "Pending hits held per detector unit while the reorder window is open (64..1048576); a full "
    "buffer closes its groups early, counted as hits.reorder_buffer_full"};
inline constexpr OptionSpec kUnitTimeoutOption{
    "cluster-timeout-ms", OptionType::kInt, "200",
    "Close a detector unit's pending hits after this much wall time without hits (1..3600000 ms)"};

struct GroupingOptions {
  std::uint64_t reorder_window_ns;
  std::uint32_t buffer_hits;
  std::uint64_t unit_timeout_ns;
};

/// The three options, range-checked (ConfigError naming the option otherwise).
inline GroupingOptions grouping_options(const OptionValues& o) {
  return GroupingOptions{
      static_cast<std::uint64_t>(o.get_int(kReorderWindowOption.name, 0, 10'000'000'000LL)),
      static_cast<std::uint32_t>(o.get_int(kReorderBufferOption.name, 64, 1 << 20)),
      static_cast<std::uint64_t>(o.get_int(kUnitTimeoutOption.name, 1, 3'600'000)) * 1'000'000};
}

}  // namespace efu::vmm3a
