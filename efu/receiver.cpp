#include "receiver.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <thread>

#include "lane_dispatch.h"

namespace efu {
namespace {
constexpr std::size_t kControlSpace = CMSG_SPACE(sizeof(std::uint32_t));
}

Receiver::Receiver(int fd, const ReceiverConfig& config, PacketPool& pool,
                   std::vector<Lane*> lanes, RouteKeyFn route_key, CounterRegistry& counters)
    : fd_(fd),
      config_(config),
      pool_(pool),
      lanes_(std::move(lanes)),
      route_key_(lanes_.size() > 1 ? route_key : nullptr),
      messages_(config.batch_size),
      iovecs_(config.batch_size),
      control_(config.batch_size * kControlSpace),
      batch_slots_(config.batch_size),
      staged_(lanes_.size()),
      packets_(counters.counter("receive.packets")),
      bytes_(counters.counter("receive.bytes")),
      truncated_(counters.counter("receive.truncated")),
      empty_(counters.counter("receive.dropped.empty")),
      dropped_kernel_(counters.counter("receive.dropped.kernel")),
      dropped_ring_full_(counters.counter("receive.dropped.ring_full")),
      no_free_slot_(counters.counter("receive.stalled.no_free_slot")),
      errors_(counters.counter("receive.errors")) {
  free_slots_.reserve(pool_.slots());
  for (std::size_t i = pool_.slots(); i-- > 0;) free_slots_.push_back(static_cast<std::uint32_t>(i));
  for (auto& s : staged_) s.reserve(config.batch_size);
}

void Receiver::reclaim_slots() { reclaim_returned_slots(lanes_, free_slots_); }

unsigned Receiver::receive_batch() {
  reclaim_slots();
  const unsigned want = static_cast<unsigned>(
      std::min<std::size_t>(config_.batch_size, free_slots_.size()));
  if (want == 0) {
    // Cannot happen with a pool sized by pool_slots_needed(); counted in case it ever does.
    no_free_slot_.add();
    std::this_thread::yield();
    return 0;
  }
  for (unsigned i = 0; i < want; ++i) {
    const std::uint32_t slot = free_slots_[free_slots_.size() - 1 - i];
    batch_slots_[i] = slot;
    iovecs_[i] = iovec{pool_.data(slot), config_.max_datagram};
    msghdr& h = messages_[i].msg_hdr;
    h = msghdr{};
    h.msg_name = &pool_.source(slot).v6;  // the kernel writes the sender here: no extra copy
    h.msg_namelen = sizeof(sockaddr_in6);
    h.msg_iov = &iovecs_[i];
    h.msg_iovlen = 1;
    h.msg_control = control_.data() + i * kControlSpace;
    h.msg_controllen = kControlSpace;
    messages_[i].msg_len = 0;
  }
  const int n = recvmmsg(fd_, messages_.data(), want, MSG_WAITFORONE, nullptr);
  if (n <= 0) {
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) errors_.add();
    return 0;
  }
  free_slots_.resize(free_slots_.size() - static_cast<std::size_t>(n));  // shrink: no allocation

  std::uint64_t byte_count = 0;
  unsigned accepted = 0;
  for (int i = 0; i < n; ++i) {
    const msghdr& h = messages_[i].msg_hdr;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(const_cast<msghdr*>(&h), c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
        std::uint32_t drops = 0;
        std::memcpy(&drops, CMSG_DATA(c), sizeof(drops));
        // A cumulative per-socket count: add what is new since the last datagram that had it.
        if (drops != kernel_drops_seen_) {
          dropped_kernel_.add(static_cast<std::uint32_t>(drops - kernel_drops_seen_));
          kernel_drops_seen_ = drops;
        }
      }
    }
    const std::uint32_t slot = batch_slots_[i];
    const std::uint32_t size = messages_[i].msg_len;
    if ((h.msg_flags & MSG_TRUNC) != 0) {
      truncated_.add();
      free_slots_.push_back(slot);
      continue;
    }
    if (size == 0) {
      empty_.add();
      free_slots_.push_back(slot);
      continue;
    }
    const std::size_t lane =
        route_key_ == nullptr
            ? 0
            : route_key_(PacketView{pool_.data(slot), size, &pool_.source(slot)}) % lanes_.size();
    staged_[lane].push_back(PacketRef{slot, size});
    byte_count += size;
    ++accepted;
  }
  packets_.add(accepted);
  bytes_.add(byte_count);

  push_staged(lanes_, staged_, free_slots_, dropped_ring_full_);
  return static_cast<unsigned>(n);
}

void Receiver::run(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) receive_batch();
}

}  // namespace efu
