// Fault injection of efu's ESS generators (--fault-fraction, --fault-kinds). A fault is never made
// of a packet that carries ground-truth neutrons: after a good packet, a damaged copy (or, for
// kCorrupt, a detector-made packet of broken readouts) is sent as an extra packet, so every
// neutron still arrives and each fault lands in exactly one known efu counter. The counts per
// kind (and per broken-readout reason) go to the generator's summary "faults".
//
//   gen::FaultInjector faults(gen::parse_fault_kinds(o.fault_kinds, kAccepted, o.fault_fraction),
//                             o.fault_fraction, /*wrong_type=*/0x30);
//   if (const auto kind = faults.draw(rng)) { ... faults.damage(*kind, good, rng) ... }
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "efu/gen/random.h"

namespace efu::gen {

/// kCookie, kVersion and kType damage one header byte, kTruncated cuts the packet short; those
/// are done here. kCorrupt (well-formed packet, broken readouts) is the detector's. kEmpty is a
/// datagram of no bytes and kOversize one of kOversizeBytes (the good packet, then filler): no
/// efu receiver passes either on (receive.dropped.empty, receive.truncated), and neither may
/// cost or change the good packets sent around it.
enum class Fault : std::uint8_t { kCookie, kTruncated, kVersion, kType, kCorrupt, kEmpty, kOversize };

/// The largest UDP datagram over IPv4 (64 KiB less the IPv4 and UDP headers): a kOversize fault.
inline constexpr std::size_t kOversizeBytes = 65507;

/// The --fault-kinds name ("cookie", "truncated", "version", "type", "corrupt", "empty",
/// "oversize").
const char* fault_name(Fault kind) noexcept;

/// "cookie,truncated,..." for the kinds `accepted` (in the order given): the --fault-kinds
/// default and help text.
std::string fault_list(std::span<const Fault> accepted);

/// Whether a --fault-kinds list names kOversize (the sender then needs room for it). Does not
/// validate the list: parse_fault_kinds() does.
bool names_oversize(const std::string& list);

/// Parses a --fault-kinds comma list into the kinds it names (repeats kept: they weigh the
/// draw). Throws ConfigError for a name not in `accepted`, or for an empty list when `fraction`
/// > 0 (there would be nothing to inject).
std::vector<Fault> parse_fault_kinds(const std::string& list, std::span<const Fault> accepted,
                                     double fraction);

class FaultInjector {
 public:
  /// `wrong_type` is the type byte a kType fault writes (another detector's).
  FaultInjector(std::vector<Fault> kinds, double fraction, std::uint8_t wrong_type)
      : kinds_(std::move(kinds)), fraction_(fraction), wrong_type_(wrong_type) {}

  /// After a good packet: the fault to send after it, if any (with probability `fraction`).
  std::optional<Fault> draw(Random& rng);
  /// A copy of `good` damaged as `kind` says (any kind but kCorrupt), counted; valid until the
  /// next damage().
  std::span<const std::uint8_t> damage(Fault kind, std::span<const std::uint8_t> good, Random& rng);
  /// Counts a fault by name: the detector's kCorrupt packets and each broken readout's reason.
  void count(const std::string& name) { ++counts_[name]; }
  /// Faults sent, by name, in name order.
  const std::map<std::string, std::uint64_t>& counts() const noexcept { return counts_; }

 private:
  std::vector<Fault> kinds_;
  double fraction_;
  std::uint8_t wrong_type_;
  std::vector<std::uint8_t> junk_;
  std::map<std::string, std::uint64_t> counts_;
};

}  // namespace efu::gen
