// The flows of the udp instrument: a sender's address and port mapped to a slot number, with a
// fixed number of slots so memory stays bounded whatever arrives (docs/architecture.md §1.2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "efu/plugin.h"

namespace efu::udp {

/// What identifies a flow: address family, address, port and (IPv6) scope. Built from a
/// PacketSource; an unknown sender (AF_UNSPEC) is one flow of its own.
struct FlowKey {
  std::uint64_t address_high = 0;  // IPv6: bytes 0..7 of the address, big-endian; IPv4: 0
  std::uint64_t address_low = 0;   // IPv6: bytes 8..15, big-endian; IPv4: the 32-bit address
  std::uint32_t scope = 0;         // IPv6 scope id (link-local senders on different interfaces)
  std::uint16_t port = 0;          // host byte order
  std::uint16_t family = AF_UNSPEC;

  static FlowKey of(const PacketSource& source) noexcept;
  bool operator==(const FlowKey&) const noexcept = default;
  /// "127.0.0.1:40000", "[::1]:40000", "unknown" (for log lines, not the hot path).
  std::string to_string() const;
};

/// Maps flow keys to slots 0..capacity-1 in order of first arrival. Open addressing in a table
/// sized at construction: find_or_add() never allocates. Flows are never evicted, so a slot
/// number keeps meaning the same sender for the whole run.
class FlowTable {
 public:
  static constexpr std::uint32_t kFull = UINT32_MAX;

  explicit FlowTable(std::uint32_t capacity);

  /// The slot of `key` (`hash` = the source's flow_hash()), a new one if the key is new, or
  /// kFull when it is new and every slot is taken.
  std::uint32_t find_or_add(const FlowKey& key, std::uint32_t hash) noexcept;

  std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(keys_.size()); }
  std::uint32_t capacity() const noexcept { return capacity_; }
  const FlowKey& key(std::uint32_t slot) const noexcept { return keys_[slot]; }

 private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;

  std::uint32_t capacity_;
  std::uint32_t mask_;
  std::vector<std::uint32_t> index_;  // hash position -> slot (kEmpty: free), > 2x capacity
  std::vector<FlowKey> keys_;         // by slot; capacity reserved, so push_back never allocates
};

}  // namespace efu::udp
