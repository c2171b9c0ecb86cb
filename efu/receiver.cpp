#include "receiver.h"

#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
#include <thread>

#include "processor.h"
#include "udp_socket.h"

namespace efu {
namespace {
// Per message: the cumulative drop count (SO_RXQ_OVFL, u32) and the GRO segment size (int).
constexpr std::size_t kControlSpace = CMSG_SPACE(sizeof(std::uint32_t)) + CMSG_SPACE(sizeof(int));
// At stop, what the drain could not take is read and discarded, bounded in count.
constexpr std::uint64_t kMaxDiscardAtStop = 10'000'000;
}  // namespace

Receiver::Receiver(int fd, const ReceiverConfig& config, PacketPool& pool, std::vector<Lane*> lanes,
                   RouteKeyFn route_key, CounterRegistry& counters)
    : fd_(fd),
      config_(config),
      slot_size_(static_cast<std::uint32_t>(
          std::min<std::size_t>(receive_slot_size(config), pool.slot_size()))),
      messages_(config.batch_size),
      iovecs_(config.batch_size),
      control_(config.batch_size * kControlSpace),
      want_(config.batch_size),
      packets_(counters.counter("receive.packets")),
      bytes_(counters.counter("receive.bytes")),
      truncated_(counters.counter("receive.truncated")),
      empty_(counters.counter("receive.dropped.empty")),
      dropped_kernel_(counters.counter("receive.dropped.kernel")),
      dropped_ring_full_(counters.counter("receive.dropped.ring_full")),
      dropped_at_stop_(counters.counter("receive.dropped.at_stop")),
      no_free_slot_(counters.counter("receive.stalled.no_free_slot")),
      errors_(counters.counter("receive.errors")),
      gro_buffers_(counters.counter("receive.gro.buffers")),
      dispatch_(pool, std::move(lanes), route_key,
                std::size_t{config.batch_size} * (config.gro ? kMaxGroSegments : 1),
                dropped_ring_full_) {
  for (unsigned i = 0; i < config.batch_size; ++i) {
    iovecs_[i] = iovec{nullptr, slot_size_};
    msghdr& h = messages_[i].msg_hdr;
    h = msghdr{};
    h.msg_iov = &iovecs_[i];
    h.msg_iovlen = 1;
    h.msg_control = control_.data() + i * kControlSpace;
    // Without config.sender, msg_name stays null: the kernel skips the address, and the pool's
    // sources stay the unknown sender (AF_UNSPEC) they were made as.
  }
}

void Receiver::handle_kernel_drops(const msghdr& h, std::uint32_t& gro_size) noexcept {
  for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(const_cast<msghdr*>(&h), c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
      std::uint32_t drops = 0;
      std::memcpy(&drops, CMSG_DATA(c), sizeof(drops));
      // A cumulative per-socket count: add what is new since the last datagram that had it.
      if (drops != kernel_drops_seen_) {
        dropped_kernel_.add(static_cast<std::uint32_t>(drops - kernel_drops_seen_));
        kernel_drops_seen_ = drops;
      }
    } else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int size = 0;
      std::memcpy(&size, CMSG_DATA(c), sizeof(size));
      gro_size = size > 0 ? static_cast<std::uint32_t>(size) : 0;
    }
  }
}

int Receiver::receive_batch(bool dont_wait) {
  dispatch_.reclaim();
  const unsigned want = static_cast<unsigned>(std::min<std::size_t>(want_, dispatch_.free_slots()));
  if (want == 0) {
    // Cannot happen with a pool sized by pool_slots_needed(); counted in case it ever does.
    no_free_slot_.add();
    std::this_thread::yield();
    return 0;
  }
  PacketPool& pool = dispatch_.pool();
  for (unsigned i = 0; i < want; ++i) {
    const std::uint32_t slot = dispatch_.peek_free(i);
    iovecs_[i].iov_base = pool.data(slot);
    // Only what changes per call: the slot, and the lengths the kernel wrote back. The rest of
    // each header was set once in the constructor.
    msghdr& h = messages_[i].msg_hdr;
    if (config_.sender) {
      h.msg_name = &pool.source(slot).v6;  // the kernel writes the sender here: no extra copy
      h.msg_namelen = sizeof(sockaddr_in6);
    }
    h.msg_controllen = kControlSpace;
  }
  const int n =
      recvmmsg(fd_, messages_.data(), want, dont_wait ? MSG_DONTWAIT : MSG_WAITFORONE, nullptr);
  if (n <= 0) {
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) errors_.add();
    return n < 0 && dont_wait && (errno == EAGAIN || errno == EWOULDBLOCK) ? -1 : 0;
  }

  std::uint64_t byte_count = 0;
  std::uint64_t datagrams = 0;
  std::uint64_t message_bytes = 0;  // what the kernel copied, rejected messages included
  for (int i = 0; i < n; ++i) {
    message_bytes += messages_[i].msg_len;
    const std::uint32_t slot = dispatch_.take();  // the slots recvmmsg filled, in order
    const msghdr& h = messages_[i].msg_hdr;
    std::uint32_t gro_size = 0;
    // With UDP GRO every message has its segment size. Without it only the drop count comes in
    // control data, and that is cumulative: the last message's is read after the loop.
    if (config_.gro) handle_kernel_drops(h, gro_size);
    const std::uint32_t size = messages_[i].msg_len;
    if ((h.msg_flags & MSG_TRUNC) != 0) {
      truncated_.add();
      dispatch_.give_back(slot);
      continue;
    }
    if (size == 0) {
      empty_.add();
      dispatch_.give_back(slot);
      continue;
    }
    if (gro_size != 0 && size > gro_size) {
      // A coalesced buffer: datagrams of gro_size bytes, the last one possibly shorter.
      const std::uint32_t segments = (size + gro_size - 1) / gro_size;
      if (gro_size > config_.max_datagram) {  // what the plain path would have truncated
        truncated_.add(segments);
        dispatch_.give_back(slot);
        continue;
      }
      gro_buffers_.add();
      dispatch_.begin_segments(slot, segments);
      for (std::uint32_t offset = 0; offset < size; offset += gro_size) {
        dispatch_.stage(slot, offset, std::min(gro_size, size - offset));
      }
      datagrams += segments;
      byte_count += size;
      continue;
    }
    if (size > config_.max_datagram) {  // only with GRO's larger slots
      truncated_.add();
      dispatch_.give_back(slot);
      continue;
    }
    dispatch_.stage_single(slot, size);
    ++datagrams;
    byte_count += size;
  }
  if (!config_.gro) {
    std::uint32_t no_gro = 0;
    handle_kernel_drops(messages_[n - 1].msg_hdr, no_gro);
  }
  packets_.add(datagrams);
  bytes_.add(byte_count);
  dispatch_.push();
  if (config_.batch_bytes != 0) {
    // As many messages as fit batch_bytes at this call's mean size. The division is once per
    // call, not per datagram.
    const std::uint64_t mean = std::max<std::uint64_t>(1, message_bytes / static_cast<unsigned>(n));
    want_ = static_cast<unsigned>(
        std::clamp<std::uint64_t>(config_.batch_bytes / mean, 1, config_.batch_size));
  }
  return n;
}

void Receiver::run(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) receive_batch();
  finish();
}

std::uint64_t Receiver::discard_remaining() noexcept {
  // Read and count what is left, into one small scratch buffer (MSG_TRUNC: the datagram is
  // consumed whatever its size, and msg_len is its whole size). With UDP GRO a message is a
  // coalesced buffer, counted as the datagrams it holds (its size over the UDP_GRO segment size).
  // At stop, off the hot path: its own headers, so the receive state stays as it was.
  constexpr unsigned kMessages = 64;
  std::uint8_t scratch[64];
  iovec iov{scratch, sizeof scratch};
  std::vector<mmsghdr> m(kMessages);
  std::vector<std::uint8_t> control(std::size_t{kMessages} * kControlSpace);
  std::uint64_t discarded = 0;
  while (discarded < kMaxDiscardAtStop) {
    for (unsigned i = 0; i < kMessages; ++i) {
      msghdr& h = m[i].msg_hdr;
      h = msghdr{};
      h.msg_iov = &iov;
      h.msg_iovlen = 1;
      h.msg_control = control.data() + std::size_t{i} * kControlSpace;
      h.msg_controllen = kControlSpace;
    }
    const int n = recvmmsg(fd_, m.data(), kMessages, MSG_DONTWAIT | MSG_TRUNC, nullptr);
    if (n <= 0) break;
    for (int i = 0; i < n; ++i) {
      std::uint32_t gro_size = 0;
      handle_kernel_drops(m[i].msg_hdr, gro_size);
      const std::uint32_t size = m[i].msg_len;
      discarded += gro_size != 0 && size > gro_size ? (size + gro_size - 1) / gro_size : 1;
    }
  }
  return discarded;
}

void Receiver::finish() {
  // Keep receiving (and processing: the processing threads still run) what the socket holds.
  const std::uint64_t deadline = steady_now_ns() + config_.drain_timeout_ns;
  while (steady_now_ns() < deadline) {
    if (receive_batch(true) < 0) break;  // the socket is empty
  }
  dropped_at_stop_.add(discard_remaining());
  // Drops after the last datagram that carried SO_RXQ_OVFL are only in the kernel's count.
  const std::int64_t total = socket_kernel_drops(fd_);
  if (total >= 0) {
    const auto unreported =
        static_cast<std::uint32_t>(static_cast<std::uint32_t>(total) - kernel_drops_seen_);
    dropped_kernel_.add(unreported);
    kernel_drops_seen_ = static_cast<std::uint32_t>(total);
  }
}

}  // namespace efu
