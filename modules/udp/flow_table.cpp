#include "flow_table.h"

#include <arpa/inet.h>
#include <endian.h>

#include <bit>
#include <cstring>
#include <string>

namespace efu::udp {

FlowKey FlowKey::of(const PacketSource& source) noexcept {
  FlowKey k;
  k.family = source.family();
  k.port = source.port();
  if (k.family == AF_INET) {
    k.address_low = ntohl(source.v4.sin_addr.s_addr);
  } else if (k.family == AF_INET6) {
    std::uint64_t half = 0;
    std::memcpy(&half, source.v6.sin6_addr.s6_addr, sizeof half);
    k.address_high = be64toh(half);
    std::memcpy(&half, source.v6.sin6_addr.s6_addr + 8, sizeof half);
    k.address_low = be64toh(half);
    k.scope = source.v6.sin6_scope_id;
  } else {
    k.family = AF_UNSPEC;
    k.port = 0;
  }
  return k;
}

std::string FlowKey::to_string() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (family == AF_INET) {
    const in_addr a{htonl(static_cast<std::uint32_t>(address_low))};
    inet_ntop(AF_INET, &a, text, sizeof text);
    std::string s(text);
    s += ':';
    s += std::to_string(port);
    return s;
  }
  if (family == AF_INET6) {
    in6_addr a{};
    const std::uint64_t high = htobe64(address_high);
    const std::uint64_t low = htobe64(address_low);
    std::memcpy(a.s6_addr, &high, sizeof high);
    std::memcpy(a.s6_addr + 8, &low, sizeof low);
    inet_ntop(AF_INET6, &a, text, sizeof text);
    // Built by appending: GCC 12 at -O3 warns (-Wrestrict, falsely) on "[" + std::string.
    std::string s(1, '[');
    s += text;
    if (scope != 0) {
      s += '%';
      s += std::to_string(scope);
    }
    s += "]:";
    s += std::to_string(port);
    return s;
  }
  return "unknown";
}

FlowTable::FlowTable(std::uint32_t capacity)
    : capacity_(capacity),
      // At most half full: probes stay short even with every slot taken.
      mask_(static_cast<std::uint32_t>(std::bit_ceil(2ULL * capacity + 1)) - 1),
      index_(static_cast<std::size_t>(mask_) + 1, kEmpty) {
  keys_.reserve(capacity);
}

std::uint32_t FlowTable::find_or_add(const FlowKey& key, std::uint32_t hash) noexcept {
  for (std::uint32_t pos = hash & mask_;; pos = (pos + 1) & mask_) {
    const std::uint32_t slot = index_[pos];
    if (slot == kEmpty) {
      if (keys_.size() == capacity_) return kFull;  // a new flow with no room: not remembered
      index_[pos] = size();
      keys_.push_back(key);  // within the reserved capacity
      return index_[pos];
    }
    if (keys_[slot] == key) return slot;
  }
}

}  // namespace efu::udp
