#include "receive/receiver.h"

#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <span>
#include <thread>

#include "efu/errors.h"
#include "process/processor.h"
#include "receive/receive_coalescing.h"
#include "receive/udp_socket.h"

namespace efu {
namespace {
// Per message, with UDP GRO only: the segment size (int). Without GRO the kernel is asked for no
// control data at all (kernel drops come from SO_MEMINFO: poll_kernel_drops()).
constexpr std::size_t kControlSpace = CMSG_SPACE(sizeof(int));
// At stop, what the drain could not take is read and discarded, bounded in count.
constexpr std::uint64_t kMaxDiscardAtStop = 10'000'000;
}  // namespace

FullRing parse_full_ring(const std::string& text) {
  if (text == "hold") return FullRing::kHold;
  if (text == "drop") return FullRing::kDrop;
  throw ConfigError("--full-ring: '" + text + "' is not a policy; expected hold or drop");
}

Receiver::Receiver(int fd, const ReceiverConfig& config, PacketPool& pool, std::vector<Lane*> lanes,
                   RouteKeyFn route_key, CounterRegistry& counters)
    : fd_(fd),
      config_(config),
      slot_size_(static_cast<std::uint32_t>(
          std::min<std::size_t>(receive_slot_size(config), pool.slot_size()))),
      messages_(config.batch_size),
      iovecs_(config.batch_size),
      rejected_(config.batch_size),
      control_(config.gro ? config.batch_size * kControlSpace : 0),
      want_(config.batch_size),
      counters_(counters),
      dropped_at_stop_(counters.counter("receive.dropped.at_stop")),
      errors_(counters.counter("receive.errors")),
      gro_buffers_(counters.counter("receive.gro.buffers")),
      pauses_(counters.counter("receive.coalesce.pauses")),
      full_ring_waits_(counters.counter("receive.full_ring.waits")),
      dispatch_(pool, std::move(lanes), route_key,
                std::size_t{config.batch_size} * (config.gro ? kMaxGroSegments : 1),
                counters_.dropped_ring_full) {
  for (unsigned i = 0; i < config.batch_size; ++i) {
    iovecs_[i] = iovec{nullptr, slot_size_};
    msghdr& h = messages_[i].msg_hdr;
    h = msghdr{};
    h.msg_iov = &iovecs_[i];
    h.msg_iovlen = 1;
    if (config.gro) {
      h.msg_control = control_.data() + i * kControlSpace;
      h.msg_controllen = kControlSpace;
    }
    // Without config.sender, msg_name stays null: the kernel skips the address, and the pool's
    // sources stay the unknown sender (AF_UNSPEC) they were made as.
  }
}

std::uint32_t Receiver::gro_segment_size(const msghdr& h) noexcept {
  for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(const_cast<msghdr*>(&h), c)) {
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int size = 0;
      std::memcpy(&size, CMSG_DATA(c), sizeof(size));
      return size > 0 ? static_cast<std::uint32_t>(size) : 0;
    }
  }
  return 0;
}

void Receiver::poll_kernel_drops() noexcept {
  std::uint32_t drops = 0;
  if (read_socket_kernel_drops(fd_, drops) != 0) {
    poll_failures_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Only a change is stored: the receive thread reads this line every call, and an unchanged
  // line stays in its cache.
  if (kernel_drops_polled_.load(std::memory_order_relaxed) != drops) {
    kernel_drops_polled_.store(drops, std::memory_order_relaxed);
  }
}

void Receiver::count_kernel_drops(std::uint32_t total) noexcept {
  // A cumulative 32-bit count: add what is new since the last one counted (wrapping).
  if (total != kernel_drops_seen_) {
    counters_.dropped_kernel.add(static_cast<std::uint32_t>(total - kernel_drops_seen_));
    kernel_drops_seen_ = total;
  }
}

int Receiver::receive_batch(bool dont_wait) {
  dispatch_.reclaim();
  // The kernel's drops as last polled: a relaxed load of a line that changes only with them.
  count_kernel_drops(kernel_drops_polled_.load(std::memory_order_relaxed));
  unsigned want = static_cast<unsigned>(std::min<std::size_t>(want_, dispatch_.free_slots()));
  if (config_.full_ring == FullRing::kHold) {
    // Messages the ring surely takes: with GRO a message may hold kMaxGroSegments datagrams.
    const std::size_t room = dispatch_.room() / (config_.gro ? kMaxGroSegments : 1);
    if (room == 0) {
      // Reading now would only drop. Leave the datagrams in the socket buffer and the core to
      // the processing thread; once a whole batch's sleep, not once per datagram.
      full_ring_waits_.add();
      asked_ = 0;
      const timespec ts{0, static_cast<long>(config_.full_ring_wait_ns)};  // under a second
      clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
      return 0;
    }
    want = static_cast<unsigned>(std::min<std::size_t>(want, room));
  }
  if (want == 0) {
    // Cannot happen with a pool sized by pool_slots_needed(); counted in case it ever does.
    counters_.no_free_slot.add();
    std::this_thread::yield();
    return 0;
  }
  prepare_messages(want);
  asked_ = want;
  const int n =
      recvmmsg(fd_, messages_.data(), want, dont_wait ? MSG_DONTWAIT : MSG_WAITFORONE, nullptr);
  if (n <= 0) {
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) errors_.add();
    return n < 0 && dont_wait && (errno == EAGAIN || errno == EWOULDBLOCK) ? -1 : 0;
  }
  const std::uint64_t message_bytes = stage_messages(static_cast<unsigned>(n));
  dispatch_.push();
  if (config_.batch_bytes != 0) {
    want_ = messages_within_budget(config_.batch_bytes, message_bytes, static_cast<unsigned>(n),
                                   config_.batch_size);
  }
  return n;
}

void Receiver::prepare_messages(unsigned want) noexcept {
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
    if (config_.gro) h.msg_controllen = kControlSpace;
  }
}

Receiver::Message Receiver::classify(const mmsghdr& message) noexcept {
  constexpr Message kRejected{0, 0, 0};
  const msghdr& h = message.msg_hdr;
  const std::uint32_t size = message.msg_len;
  if ((h.msg_flags & MSG_TRUNC) != 0) {
    counters_.truncated.add();
    return kRejected;
  }
  if (size == 0) {
    counters_.empty.add();
    return kRejected;
  }
  // With UDP GRO every message has its segment size in control data.
  const std::uint32_t gro_size = config_.gro ? gro_segment_size(h) : 0;
  if (gro_size != 0 && size > gro_size) {
    // A coalesced buffer: datagrams of gro_size bytes, the last one possibly shorter.
    const std::uint32_t segments = (size + gro_size - 1) / gro_size;
    if (gro_size > config_.max_datagram) {  // what the plain path would have truncated
      counters_.truncated.add(segments);
      return kRejected;
    }
    return Message{size, gro_size, segments};
  }
  if (size > config_.max_datagram) {  // only with GRO's larger slots
    counters_.truncated.add();
    return kRejected;
  }
  return Message{size, size, 1};
}

std::uint64_t Receiver::stage_messages(unsigned n) noexcept {
  std::uint64_t byte_count = 0;
  std::uint64_t datagrams = 0;
  std::uint64_t message_bytes = 0;  // what the kernel copied, rejected messages included
  // Message i is in the i-th free slot from the top of the stack (peek_free(i) in
  // prepare_messages), so the slots must be taken in exactly that order. A rejected message's
  // slot is therefore set aside and given back only after the loop: given back at once, it would
  // be on top of the stack again, and the next take() would hand the rejected message's bytes to
  // message i + 1 (and every later message of the batch the bytes of the one before it, the last
  // one's lost).
  unsigned rejected = 0;
  for (unsigned i = 0; i < n; ++i) {
    message_bytes += messages_[i].msg_len;
    const std::uint32_t slot = dispatch_.take();  // the slots recvmmsg filled, in order
    const Message m = classify(messages_[i]);
    if (m.segments == 0) {
      rejected_[rejected++] = slot;
    } else if (m.segments == 1) {
      dispatch_.stage_single(slot, m.size);
    } else {
      gro_buffers_.add();
      dispatch_.begin_segments(slot, m.segments);
      for (std::uint32_t offset = 0; offset < m.size; offset += m.segment) {
        dispatch_.stage(slot, offset, std::min(m.segment, m.size - offset));
      }
    }
    datagrams += m.segments;
    byte_count += m.segments == 0 ? 0 : m.size;
  }
  for (unsigned r = 0; r < rejected; ++r) dispatch_.give_back(rejected_[r]);
  counters_.packets.add(datagrams);
  counters_.bytes.add(byte_count);
  return message_bytes;
}

void Receiver::run(const std::atomic<bool>& stop) {
  ReceiveCoalescing coalescing(config_.coalesce_ns);
  while (!stop.load(std::memory_order_relaxed)) {
    const int n = receive_batch();
    // The clock only with coalescing on: one vDSO read per call, not per datagram.
    if (config_.coalesce_ns == 0) continue;
    const std::uint64_t pause = coalescing.pause_after(n, asked_, steady_now_ns());
    if (pause != 0) {
      pauses_.add();
      const timespec ts{0, static_cast<long>(pause)};  // at most the window: under a second
      clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr);
    }
  }
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
      if (config_.gro) {
        h.msg_control = control.data() + std::size_t{i} * kControlSpace;
        h.msg_controllen = kControlSpace;
      }
    }
    const int n = recvmmsg(fd_, m.data(), kMessages, MSG_DONTWAIT | MSG_TRUNC, nullptr);
    if (n <= 0) break;
    for (int i = 0; i < n; ++i) {
      const std::uint32_t gro_size = config_.gro ? gro_segment_size(m[i].msg_hdr) : 0;
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
  // The kernel's final drop count, read now rather than at the last poll, so drops since then
  // are counted too.
  std::uint32_t total = 0;
  if (read_socket_kernel_drops(fd_, total) == 0) {
    count_kernel_drops(total);
  } else {
    poll_failures_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace efu
